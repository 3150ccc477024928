"""The one package with Streamlit in it: the views every page shares, the app's server and
the runtime seam.

Importing it first (home.py does; app.py through lnlab.ui.server) loads the heavy libraries
once, under Python's module lock, before any page can race another session to import them
half-way.

Two folders apart from the views:
- `server`: the app on Streamlit's public ASGI seam (app.py's st.App): middleware, lifespan;
- `runtime`: the only modules that touch Streamlit's internals, each patch with its reason.

The views, what pages call (re-exported below):
- `page`: the page set-up, the navigation and presenter mode;
- `inputs`: widgets that survive bad input (last good value, ranges, grids, presets);
- `links`: the page's state in the URL;
- `quiz`: predict, then reveal;
- `lesson`: draws a lnlab.teach Lesson, on the page or as slides; asks a live class through
  `lesson_hooks`, never importing it;
- `live`: a lesson's sections computed and drawn in the browser;
- `line`: the visitor's place in the server's heavy-work line;
- `classroom/`: a live class by audience (the teacher's Class page, the panel on a slide, the
  student's phone);
- `state`: a session's data, one typed dataclass per concern.
"""

import numpy as np  # noqa: F401 - imported up front on purpose, see the module docstring
import pandas as pd  # noqa: F401
import plotly.graph_objects as go  # noqa: F401

from lnlab.ui.inputs import (
    KEEP,
    data_editor,
    embeddings_box,
    keep_in_range,
    last_good,
    menu,
    number_box,
    preset_choice,
    show_error,
    text_box,
    token_choice,
    within,
)
from lnlab.ui.lesson import (
    chart,
    exports,
    formulas,
    lesson_view,
    metric,
    show_section,
    table,
)
from lnlab.ui.line import Line, visitor
from lnlab.ui.links import open_link, share_link
from lnlab.ui.live import LiveSections
from lnlab.ui.page import PAGES, PRESENT_KEY, PageInfo, page_setup, presenting, title
from lnlab.ui.quiz import QUIZ_KEY, ask, predict_toggle
from lnlab.ui.rerun import rerun_app
from lnlab.ui.runtime.turns import turn_aside

__all__ = [
    "KEEP",
    "PAGES",
    "PRESENT_KEY",
    "QUIZ_KEY",
    "Line",
    "LiveSections",
    "PageInfo",
    "ask",
    "chart",
    "data_editor",
    "embeddings_box",
    "exports",
    "formulas",
    "keep_in_range",
    "last_good",
    "lesson_view",
    "menu",
    "metric",
    "number_box",
    "open_link",
    "page_setup",
    "predict_toggle",
    "presenting",
    "preset_choice",
    "rerun_app",
    "share_link",
    "show_error",
    "show_section",
    "table",
    "text_box",
    "title",
    "token_choice",
    "turn_aside",
    "visitor",
    "within",
]
