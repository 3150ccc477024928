"""Shared by the tests: opening a page as the app serves it, and checking a figure."""

import json
from collections.abc import Mapping
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_test(
    path: str, query: Mapping[str, str | list[str]] | None = None, timeout: float = 60
) -> AppTest:
    """An AppTest of page `path` (e.g. "pages/padding.py") with app.py as the entrypoint,
    opened from a link with the `query` parameters.

    Not run yet: set session state first if needed, then call `.run()`.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.switch_page(path)


def validated(fig: go.Figure) -> go.Figure:
    """`fig` rebuilt by plotly with every property checked: ValueError names a wrong one.

    lnlab.plots.common.figure skips that check to stay fast; the tests make it instead, and
    check that it changes nothing (it would turn a colour scale's name into its colours).
    """
    checked = go.Figure(fig.to_plotly_json())
    assert _as_json(checked) == _as_json(fig)
    return checked


def _as_json(fig: go.Figure) -> object:
    return json.loads(pio.to_json(fig, validate=False))
