"""Draw a lesson (lnlab.teach.lesson): one section at a time, on the page or as slides.

`lesson_view` runs as a fragment: Previous, Next, the section chooser and every widget a
section draws rerun the lesson alone, not the page above it. The lesson is rebuilt from
session state on each of those reruns (its builder is cached), so a slide's widget that
changes the lesson is seen at once.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager

import streamlit as st

from lnlab.core.numbers import exact, fmt
from lnlab.teach.export import Exports
from lnlab.teach.lesson import Figure, Lesson, Metric, Section, Table
from lnlab.teach.links import Field
from lnlab.teach.mathml import mathml
from lnlab.ui import live as in_browser
from lnlab.ui.assist import landing, say
from lnlab.ui.figures import chart, table
from lnlab.ui.inputs import KEEP, menu
from lnlab.ui.lesson_hooks import ClassSlide, live_class
from lnlab.ui.links import catch_up, forget_arrival, link_params, share_link
from lnlab.ui.page import presenting
from lnlab.ui.quiz import ask, verdict
from lnlab.ui.rerun import (
    above_lesson,
    drew_section,
    pace,
    rerun_if_above_changed,
    rerun_if_asked,
)

Control = Callable[[], None]


# ---------------------------------------------------------------- the pieces


FORMULAS = "lnlab_formulas"  # the key of a section's formulas' container: tests find them by it
# (tests/helpers.py)


def formulas(latex: Sequence[str], key: str, names: Sequence[str] = ()) -> None:
    """A section's formulas, one a line (each after its name in bold, if `names`), as MathML
    the browser draws itself (lnlab.teach.mathml: no formula library on the page; a long one
    wraps). They stand in one container keyed `FORMULAS_<key>`, which tests find them by."""
    if not latex:
        return
    named = [f"<strong>{html.escape(n)}</strong> " for n in names] or [""] * len(latex)
    with st.container(key=f"{FORMULAS}_{key}"):
        st.html(
            "".join(
                f'<p class="lnlab-formula">{name}{mathml(one)}</p>'
                for name, one in zip(named, latex, strict=True)
            )
        )


def metric(m: Metric) -> None:
    """One number, rounded by lnlab.core.numbers.fmt; its exact value is in the tooltip."""
    shown = fmt(m.value, m.scale)
    note = f"Exact value: {exact(m.value)}" if shown != exact(m.value) else ""
    st.metric(m.label, shown, help="\n\n".join(p for p in (m.help, note) if p) or None)


# ---------------------------------------------------------------- a section


def show_section(
    section: Section,
    *,
    number: int,
    control: Control | None = None,
    quiz: bool = False,
    place: str = "",
    live: ClassSlide | None = None,
    chart: bool = True,
) -> None:
    """One section: title, callouts, explanation, the page's widgets for it, formulas; then,
    once its question (if any, and if predictions are on) is answered, the finding, the worked
    formulas, numbers and figure. With a figure, text and numbers stand left and the figure right.

    `live`, while this session teaches a class, is where the class is with the section's
    question (lnlab.ui.lesson_hooks): before Ask the result is held ("?"), and Ask stands under
    the text; while the class answers, the slide is the question itself; after Reveal, the
    result shows (the class's answer stands in the navigation row, lesson_view's).
    `chart=False` leaves the figure out (see lnlab.ui.live: the page's own lesson is about to
    replace this one).
    """
    slide = presenting()
    st.header(f"{number}. {section.title}")
    if live is not None and live.asked:
        live.panel()  # the question, projector-sized: the slide's text waits for the reveal
        return
    for callout in section.callouts:
        getattr(st, callout.kind)(callout.text)
    fig = _figure(section, slide) if chart else None
    text_col, fig_col = st.columns([1, 1], gap="medium") if fig else (st.container(), None)
    held = live is not None and live.held
    key = place or section.key
    with text_col:
        _setting(section, control, key)
        answered = _answered(section, quiz and live is None, slide)  # a class answers instead
        shown = _result(section, answered=answered, held=held, slide=slide, key=key)
        if live is not None and not live.revealed:
            live.panel()
    if shown:
        _beside_and_below(section, fig, fig_col, key=key, slide=slide)


def _figure(section: Section, slide: bool) -> Figure | None:
    """The section's figure, unless it is kept off slides and this is one."""
    fig = section.figure
    return fig if fig is not None and (fig.on_slide or not slide) else None


def _setting(section: Section, control: Control | None, key: str) -> None:
    """What comes before the question: the explanation, the page's widgets, the formulas."""
    if section.explanation:
        st.markdown(section.explanation)
    if control is not None:
        control()
    formulas(section.formulas, key)


def _answered(section: Section, quiz: bool, slide: bool) -> bool:
    """Whether the section's result may show: it asks nothing (or predictions are off), or
    its question is answered (asked here; a slide's question box takes no typed answer)."""
    if not quiz or section.question is None:
        return True
    return ask(section.question, typed=not slide)


def _result(section: Section, *, answered: bool, held: bool, slide: bool, key: str) -> bool:
    """The finding, worked formulas and numbers once answered, unless a live class holds them;
    otherwise a "?" where they go, and what shows them. True when the result is shown."""
    if not answered:
        if not slide:  # on a slide the question box says as much, in the height it has
            _unknown("Check your prediction to see this step's result.")
        return False
    if held:
        _unknown("The result shows after the class answers and you press Reveal.")
        return False
    if section.finding:
        st.markdown(section.finding)
    formulas(section.worked, f"{key}_worked")
    _numbers(section, slide)
    return True


def _unknown(then: str) -> None:
    """The box that stands for the value a question asks for, until it is answered."""
    st.html(
        '<div class="lnlab-unknown" role="note"><span aria-hidden="true">?</span>'
        f"<p>{then}</p></div>"
    )


def _beside_and_below(
    section: Section,
    fig: Figure | None,
    fig_col: AbstractContextManager | None,
    *,
    key: str,
    slide: bool,
) -> None:
    """Once the result shows: the figure in its column, and the detail under the section
    (off slides)."""
    if fig is not None and fig_col is not None:
        with fig_col:
            chart(fig, key=f"{key}_{fig.name}")
    if section.detail and not slide:
        st.markdown(section.detail)
    if section.definitions and not slide:
        names, latex = zip(*section.definitions, strict=True)
        formulas(latex, f"{key}_definitions", names)


def _numbers(section: Section, slide: bool) -> None:
    metrics = [n for n in section.numbers if isinstance(n, Metric)]
    if metrics:
        for col, m in zip(st.columns(len(metrics)), metrics, strict=True):
            with col:
                metric(m)
    for n in section.numbers:
        if isinstance(n, Table) and (n.on_slide or not slide):
            table(n)


# ---------------------------------------------------------------- the lesson


def lesson_view(
    build: Callable[[], Lesson],
    *,
    page: str,
    slide_key: str,
    fields: tuple[Field, ...],
    controls: Mapping[str, Control] | None = None,
    quiz_key: str | None = None,
    after: Callable[[], None] | None = None,
    live: in_browser.LiveSections | None = None,
) -> None:
    """The lesson `build()` returns, one section at a time, as a fragment.

    `slide_key` holds the section shown (0-based); `controls` maps a section's key to the
    page's widgets for it; `after` draws what follows the lesson off-slide (exports), outside
    the fragment: it depends on the inputs, not on the section shown, so a click does not
    redraw it. The page's link is kept current from the fragment, so it names the section on
    screen. `live` names the first sections the browser computes and draws (lnlab.ui.live).
    """
    above_lesson(f.key for f in fields)
    _lesson_fragment(build, page, slide_key, fields, dict(controls or {}), quiz_key, live)
    if after is not None and not presenting():
        after()


@st.fragment
def _lesson_fragment(
    build: Callable[[], Lesson],
    page: str,
    slide_key: str,
    fields: tuple[Field, ...],
    controls: dict[str, Control],
    quiz_key: str | None,
    live: in_browser.LiveSections | None,
) -> None:
    pace(fragment=True)
    catch_up()  # a step the browser posted by the route (lnlab.ui.server.steps)
    rerun_if_asked()
    rerun_if_above_changed()
    live_class().keep_open()  # a teacher moving through the slides keeps their class open
    landing()
    lesson = build()
    count = len(lesson.sections)
    ss = st.session_state
    ss[slide_key] = _clamped(ss.get(slide_key, 0), count)
    first = live_class().first_question(lesson.sections, page)
    if first is not None:  # from the Class page: its first question's slide
        ss[slide_key] = first
        forget_arrival(page)  # the URL names that slide (ui.links.share_link)
    slide = presenting()
    show_all = not slide and bool(ss.get(f"{page}_all", False))
    quiz = bool(quiz_key and ss.get(quiz_key, False))
    at = ss[slide_key]
    drew_section(slide_key, at)
    class_on = live_class().teaching()
    drawn: bool | None = False  # by the browser: True, alone; None, over today's; False, not
    link: dict[str, str] | None = None  # made after the widgets of any sections drawn here
    if live is None or not in_browser.covers(live, at, show_all, quiz=quiz, class_on=class_on):
        _sections(lesson, page, slide_key, controls, quiz, show_all)
    else:
        link = link_params(fields)  # what the browser offers to copy (its sections have no widgets)
        drawn = in_browser.draw(live, lesson, at, page=page, slide_key=slide_key, link=link)
        if drawn is not True:  # today's lesson too: under the browser's (None), or instead
            with st.container(key=in_browser.FALLBACK):
                _sections(lesson, page, slide_key, controls, quiz, show_all, drawn is False)
            link = None
    link = link_params(fields) if link is None else link
    share_link(page, fields, link, copy=drawn is not True)
    if live is not None:
        in_browser.steps_by_route(live, page, slide_key, fields, link, open=drawn is not False)


def _sections(
    lesson: Lesson,
    page: str,
    slide_key: str,
    controls: dict[str, Control],
    quiz: bool,
    show_all: bool,
    charts: bool = True,
) -> None:
    """The navigation, the example's line and the section (or every section) on screen."""
    ss = st.session_state
    count = len(lesson.sections)
    nav = _navigation(lesson, page, slide_key, show_all)
    if lesson.context:
        st.markdown(lesson.context)
    shown = range(count) if show_all else [ss[slide_key]]
    # one section at a time: its chart keeps one key, so the browser updates the chart on
    # screen (Plotly.react) instead of drawing a new one
    place = "" if show_all else "shown"
    for k in shown:
        section = lesson.sections[k]
        control = controls.get(section.key)
        # while this session teaches a live class: ask, answer, reveal
        asks = section.question is not None and not show_all
        live = live_class().slide(section.question, page, lesson.context) if asks else None
        if live is not None and live.revealed:
            with nav:  # beside the slide number: the slide below needs all its height
                live.panel()
        show_section(
            section, number=k + 1, control=control, quiz=quiz, place=place, live=live, chart=charts
        )
    if not show_all:
        _say_where(lesson, ss[slide_key], page, quiz)


def _say_where(lesson: Lesson, at: int, page: str, quiz: bool) -> None:
    """For the live region: the section on screen, and its question's verdict once checked
    (spoken when either changes: after Next, after Check)."""
    section = lesson.sections[at]
    words = [f"Section {at + 1} of {len(lesson.sections)}: {section.title}."]
    if quiz and section.question is not None:
        words.append(verdict(section.question))
    say(f"{page}_lesson", " ".join(w for w in words if w))


def _clamped(value: object, count: int) -> int:
    try:
        return min(max(int(value), 0), count - 1)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _navigation(
    lesson: Lesson, page: str, slide_key: str, show_all: bool
) -> st.delta_generator.DeltaGenerator:
    """Previous and Next (← →, and PageUp/PageDown as presentation clickers send), the slide
    number, and off-slide a chooser of every section and a switch to show them all. Returns
    the row, which a live class's answer joins after the reveal."""
    ss = st.session_state
    count = len(lesson.sections)
    at = ss[slide_key]
    nav = st.container(horizontal=True, vertical_alignment="center", key=f"{page}_nav")
    for label, name, icon, delta, keys, edge in (
        ("Previous", "prev", "arrow_back", -1, ("Left", "PageUp"), 0),
        ("Next", "next", "arrow_forward", 1, ("Right", "PageDown"), count - 1),
    ):
        for shortcut, suffix in zip(keys, ("", "_pgup" if delta < 0 else "_pgdn"), strict=True):
            nav.button(
                label,
                key=f"{page}_{name}{suffix}",
                icon=f":material/{icon}:",
                on_click=_go,
                args=(slide_key, _clamped(at + delta, count)),
                disabled=show_all or at == edge,
                shortcut=shortcut,
            )
    if presenting():
        # while a class is taught the row also holds the revealed answer: no room for the title
        title = "" if live_class().teaching() else f" · {lesson.title}"
        nav.markdown(f"**Slide {at + 1} of {count}**{title}")
        return nav
    titles = [s.title for s in lesson.sections]
    menu(
        nav,
        "Section",
        range(count),
        slide_key,
        lambda k: f"{k + 1}. {titles[k]}",
        disabled=show_all,
        icon=":material/toc:",
    )
    nav.toggle("Show every section", key=f"{page}_all", persist_state=KEEP)
    return nav


def _go(key: str, slide: int) -> None:
    """Previous and Next go to the slide next to the one drawn, not one on from wherever the
    session is: a press that reaches the script twice (a clicker's key pressed while a run
    was under way was seen handled twice) still moves one slide."""
    st.session_state[key] = slide


def exports(files: Exports) -> None:
    """ "Take the numbers with you": a download button per file, what they hold, the script
    (shown when asked)."""
    st.header("Take the numbers with you")
    for col, d in zip(st.columns(len(files.downloads)), files.downloads, strict=True):
        col.download_button(
            d.label,
            d.data,
            file_name=d.file_name,
            mime=d.mime,
            key=d.key,
            icon=f":material/{d.icon}:",
            on_click="ignore",
        )
    st.caption(files.caption)
    if files.script:
        # a popover, not an expander: the browser draws a popover's content when it opens
        # (an expander's, closed or not, with the page), so the code highlighter's 0.5 MiB of
        # JavaScript loads for a reader who asks to see the script, not with every page
        with st.popover(files.script_title, icon=":material/code:"):
            st.code(files.script, language="python")
