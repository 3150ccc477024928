"""Lessons computed in the browser: a lesson's first sections drawn by a component whose
JavaScript computes them in the page (Streamlit components v2: no iframe, the page's own DOM).

Python sends the inputs, its own numbers and the lesson's words (`LiveSections.data`); the
browser (the lesson's module, `LiveSections.module`: static/lnlab/step_through.mjs or
padding.mjs, on static/lnlab/live_lesson.mjs) draws the sections and answers Previous/Next, the
keys, sliders, picks and edits within a frame, with no round trip. What the user changed comes
back once they let go: a step alone by the step route, with no script run (lnlab.ui.server.steps,
where the app's server answers it), anything else as the component's state "lesson":
`{rev, step?, all?, <input>?...}`. Here `rev` is checked (newer than the last applied), `step`
and `all` go to the lesson's own keys, and the inputs to `LiveSections.apply`, which checks them
like anything else sent over the websocket. Python echoes the last applied `rev`, so the
browser knows which of its values Python has.

The browser's lesson is drawn alone, with the MathML of its section's formulas (the first view
needs no formula library; lnlab.teach.mathml writes them, static/lnlab/math.mjs takes them).
Today's lesson is drawn instead once its state "status" says "failed: ..." (its code did not
load or run), and under it once the status says "slow" (it had not shown SLOW_MS after the
loader started: a held download, say), in a container the browser hides when it shows; it then
says "ready" and is drawn alone again. So a first visit sends one lesson, not two (the page's
work, issue 40). With predictions on, in presenter mode's live class, or with every section
shown, the lesson is today's: the questions' gate and the class are Python's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from lnlab.core.errors import InputError
from lnlab.teach.lesson import Lesson, Section
from lnlab.teach.links import Field
from lnlab.teach.mathml import mathml
from lnlab.ui import state
from lnlab.ui.links import NOT_STATE, SHARE_LABEL, SHARE_NOTE
from lnlab.ui.page import presenting
from lnlab.ui.rerun import rerun_app
from lnlab.ui.runtime import sessions
from lnlab.ui.served import STATIC, base_path, static_base
from lnlab.ui.server import steps as step_route

KEY = "lnlab_live"  # the component's key: its state is session_state[KEY]
FALLBACK = "lnlab_live_fallback"  # the container of today's lesson, until the browser's works
_STATUS_FAILED = "failed"
SLOW_MS = 4000  # after this long without the browser's lesson, today's is drawn under it

# The component's own script: it loads the lesson's modules from the app's static files once per
# page, and KaTeX (which writes a formula's MathML) when a lesson first needs a formula the page
# has not drawn (static/lnlab/math.mjs), and tells Python if anything fails, or if the lesson
# has not shown `slow_ms` after it started (the status "slow").
LOADER = """
const loading = new Map(); // module -> its promise: a page's lessons load once per page
let katex = null; // KaTeX's promise, once a lesson asked for it

function loadKatex(base) {
  katex ??= import(base + "katex/katex.min.js").then(
    () => self.katex,
    (err) => {
      katex = null; // the next formula tries again
      throw err;
    },
  );
  return katex;
}

export default async function (component) {
  const module = component.data.module;
  const host = component.parentElement;
  if (!component.data.fallback) {
    setTimeout(() => {
      const shown = host.querySelector(".lnlab-live:not([hidden])");
      if (host.isConnected && !shown) component.setStateValue("status", "slow");
    }, component.data.slow_ms);
  }
  try {
    const base = new URL(component.data.base, window.location.origin).href;
    if (!loading.has(module)) loading.set(module, import(`${base}lnlab/${module}.mjs`));
    const lesson = await loading.get(module);
    return lesson.mount(component, () => loadKatex(base));
  } catch (err) {
    loading.delete(module);
    component.setStateValue("status", "failed: " + ((err && err.message) || err));
  }
}
"""

_component = st.components.v2.component(
    "lnlab.live_lesson",
    css=(STATIC / "lnlab" / "live_lesson.css").read_text(encoding="utf-8"),
    js=LOADER,
    isolate_styles=False,  # the app's table and formula styles apply as elsewhere
)


@dataclass
class LiveLessons:
    """The browser's lessons in a session (lnlab.ui.state); its token and the revision applied
    are lnlab.ui.server.steps.LessonRoute."""

    works: dict[str, bool] = field(default_factory=dict)  # module -> it drew (True), it failed
    # (False); absent: not known yet
    slow: set[str] = field(default_factory=set)  # modules that had not shown within SLOW_MS
    why: dict[str, str] = field(default_factory=dict)  # module -> why it failed, as it said
    error: str | None = None  # what the lesson could not take, until shown


@dataclass(frozen=True)
class LiveSections:
    """A lesson's sections 0..count-1, drawn and computed in the browser.

    `module` is the lesson's JavaScript (static/lnlab/<module>.mjs). `data()` gives what the
    browser needs besides the lesson's navigation: the inputs, Python's numbers for them and
    the words (lnlab.labs.step_through.live.browser_data, lnlab.labs.padding.live's).
    `apply(changes)` applies the inputs the browser sent (validated there, InputError if
    wrong) and says whether any of the page's boxes above the lesson must show a new value
    (then the whole page reruns, not the lesson's fragment alone).
    """

    module: str
    count: int
    data: Callable[[], dict[str, Any]]
    apply: Callable[[Mapping[str, Any]], bool]


def draw(
    live: LiveSections,
    lesson: Lesson,
    at: int,
    *,
    page: str,
    slide_key: str,
    link: dict[str, str],
) -> bool | None:
    """Draw the browser's lesson at section `at`, with `link` (its query's parameters) to
    copy. True: it alone draws it. None: it was slow to show and has not shown yet; today's
    lesson goes under it, in `FALLBACK`, which the browser hides once it shows (so today's
    chart is left out: it would cost Plotly's loading for nothing). False: it failed; today's
    lesson is drawn alone.
    """
    lessons, route = state.of(LiveLessons), state.of(step_route.LessonRoute)
    works = lessons.works.get(live.module)
    under = works is None and live.module in lessons.slow
    if works is False:
        why = lessons.why.get(live.module, "")
        st.caption(f"This lesson is computed on the server: your browser could not run it ({why}).")
        return False
    if error := lessons.error:
        lessons.error = None
        st.error(error, icon=":material/error:")
    if route.token is None:
        route.token = step_route.new_token()
    token = route.token
    data = {
        **live.data(),
        "module": live.module,
        "rev": route.rev,
        "session": token,  # the session's step route token; a new one: revisions restart
        "step": at,
        "sections": [s.title for s in lesson.sections],
        "title": lesson.title,
        "presenting": presenting(),
        "base": static_base(),
        "fallback": FALLBACK if under else None,
        "slow_ms": SLOW_MS,
        "formulas": [] if under else _formulas(lesson.sections[at]),
        "route": step_route.route(token, base_path(), link),
        "link": urlencode(link),
        "share": [SHARE_LABEL, SHARE_NOTE],
    }
    _component(
        key=KEY,
        data=data,
        on_lesson_change=partial(_sent, live, page, slide_key, len(lesson.sections)),
        on_status_change=partial(_status, live.module),
    )
    return None if under else True


def _formulas(section: Section) -> list[str]:
    """The section's formulas as Python draws them (lnlab.teach.mathml): the browser's lesson
    takes those it writes alike, and loads KaTeX only for the others."""
    return [mathml(tex) for tex in (*section.formulas, *section.worked)]


def steps_by_route(
    live: LiveSections,
    page: str,
    slide_key: str,
    fields: tuple[Field, ...],
    link: dict[str, str],
    *,
    open: bool,
) -> None:
    """While the browser draws the lesson (`open`), its steps through sections 0..count-1 come
    by the route, with no script run (lnlab.ui.server.steps), from the link this run wrote
    (`link`, its parameters); otherwise they come as its state."""
    route = state.of(step_route.LessonRoute)
    token, session = route.token, sessions.session_id()
    if token is None or not session:
        return
    if not open:
        step_route.STEPS.close(token)
        return
    lane = step_route.Lane(
        session,
        page,
        sessions.page_hash(),
        slide_key,
        live.count,
        link,
        fields,
        NOT_STATE,
        route.rev,
    )
    if (again := step_route.STEPS.offer(token, lane)) is not None:
        sessions.send_address(again)  # a step taken during this run: its link, after this
        # run's own


def covers(live: LiveSections, at: int, show_all: bool, *, quiz: bool, class_on: bool) -> bool:
    """Whether the browser draws section `at`: one of its sections, shown alone, with no
    question to gate (predictions off) and no class following the slides."""
    return at < live.count and not (show_all or quiz or class_on)


def _status(module: str) -> None:
    status = str(st.session_state[KEY].get("status") or "")
    lessons = state.of(LiveLessons)
    if status == "ready":
        lessons.works[module] = True
    elif status == "slow":
        lessons.slow.add(module)
    elif status.startswith(_STATUS_FAILED):
        lessons.works[module] = False
        lessons.why[module] = status.removeprefix(f"{_STATUS_FAILED}: ")[:200]


def _sent(live: LiveSections, page: str, slide_key: str, count: int) -> None:
    """Apply what the browser sent once the user let go; anything malformed is refused with a
    message and the last good state kept."""
    ss = st.session_state
    sent = ss[KEY].get("lesson")
    rev = sent.get("rev") if isinstance(sent, Mapping) else None
    route = state.of(step_route.LessonRoute)
    if type(rev) is not int or rev <= route.rev:
        return  # not the browser's lesson state, or one already applied
    route.rev = rev
    try:
        step, show_all = _navigation(sent, count)
        changed = live.apply({k: v for k, v in sent.items() if k not in ("rev", "step", "all")})
    except InputError as err:
        why = f"The lesson could not take that: {err}. It keeps its last good numbers."
        state.of(LiveLessons).error = why
        return
    if step is not None:
        ss[slide_key] = step
    if show_all:
        ss[f"{page}_all"] = True
    if changed:
        rerun_app()  # the boxes above the lesson show the new values


def _navigation(sent: Mapping[str, Any], count: int) -> tuple[int | None, bool]:
    """The section the browser moved to (None: unchanged) and whether to show every section."""
    step = sent.get("step")
    if step is not None and (type(step) is not int or not 0 <= step < count):
        raise InputError(f"there is no section {step!r}")
    show_all = sent.get("all", False)
    if type(show_all) is not bool:
        raise InputError("'all' must be true or false")
    return step, show_all
