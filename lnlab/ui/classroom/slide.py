"""The teacher's panel on a question's slide: what the room sees while a class is taught.

Only the teacher sees it, in a lesson (lnlab.ui.lesson, through the hooks this module
registers: LessonHooks, lnlab.ui.lesson_hooks), and in presenter mode's top row: Start a
class, or Show how to join, the Class menu (present another lesson, End class) and the join
line with how many joined, so the teacher never leaves presenter mode to run the class. A
question's slide goes ask -> answer -> reveal:
- before Ask, the slide shows its setting, a "?" where its result goes, and Ask the class
  with what every phone will get: the question, its options and its data (the lesson's line
  of the example, above every slide);
- after Ask, the question and its numbered options, projector-sized, and "12 of 30 answered",
  updating as answers come in (the class's pulse); nothing says which option is right;
- after Reveal, the class's answers by option (each bar its number, text and group: the right
  one or the misconception named) and by group, in a dialog over the slide, and the slide
  with its result; the class's answers close.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import streamlit as st

from lnlab.classroom.asking import live_question, right_options
from lnlab.classroom.links import TeacherLink
from lnlab.classroom.live import LiveQuestion
from lnlab.classroom.plots import tally_summary
from lnlab.classroom.store import Tally, default_store, display_code
from lnlab.core.errors import InputError
from lnlab.teach.lesson import Section
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import Question
from lnlab.ui import state
from lnlab.ui.assist import landing, say
from lnlab.ui.classroom.common import (
    CLASS_PAGE,
    PULSE_S,
    TEACHER_POLL_S,
    ClassSession,
    TeacherPanel,
    join_base_here,
    problem,
    start_class,
    start_problem,
    teacher_active,
    teacher_does,
    teaching,
)
from lnlab.ui.classroom.teacher import (
    answers_chart,
    end_button,
    join_card,
    present_from_first_question,
    teacher_link_copy,
)
from lnlab.ui.pulse import COUNTS, UNKNOWN, following, watch

NOT_ASKED, ASKED, REVEALED = "not asked", "asked", "revealed"


# ---------------------------------------------------------------- presenter mode's top row


def join_line() -> None:
    """A small line on every slide while a class runs: where and with what code to join, and
    how many joined (it follows the class: a join shows within a second)."""
    me = teaching()
    if me is not None:
        _join_line(me)


@following(TEACHER_POLL_S)
def _join_line(me: TeacherLink) -> None:
    """The Class page's address (short enough to type; the QR code holds the whole link),
    the code, and how many joined."""
    try:
        pulse = default_store().pulse(me.code)
    except InputError:
        pulse = None
    watch(
        "teacher_joined", me.code, ("joined", "open"), PULSE_S, asdict(pulse) if pulse else UNKNOWN
    )
    joined = f" · **{pulse.joined} joined**" if pulse is not None and pulse.open else ""
    st.caption(f"Join at {plain(join_base_here().url)} · code **{display_code(me.code)}**{joined}")


@st.dialog("Join the class", width="large")
def _join_dialog(code: str) -> None:
    join_card(code)
    teacher_link_copy()


class LessonPage(Protocol):
    """A page of the app as presenter mode's Class menu lists it (lnlab.ui.page.PageInfo)."""

    @property
    def path(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def icon(self) -> str: ...

    @property
    def lesson(self) -> bool: ...


def presenter_buttons(pages: Sequence[LessonPage] = ()) -> None:
    """In presenter mode's top row: start a class, or show how to join it again (a dialog
    with the code and the QR code, over the slide) and the Class menu: present another of
    `pages`' lessons at its first question, or End class. After End, a link to its report."""
    new = teaching() is None
    st.button(
        "Start a class" if new else "Show how to join",
        key="live_start_present" if new else "live_show_join",
        icon=":material/groups:" if new else ":material/qr_code_2:",
        on_click=_show,
        args=(new,),
    )
    start_problem()
    panel = state.of(TeacherPanel)
    ended, panel.ended_here = panel.ended_here, None
    if ended:
        st.toast(f"Class {ended} has ended.", icon=":material/check:")
    if new:
        _report_link()
    else:
        _class_menu(pages)
    show, panel.show_join = panel.show_join, False
    if show and teaching() is not None:
        _join_dialog(teaching().code)


def _class_menu(pages: Sequence[LessonPage]) -> None:
    """The class from presenter mode: another lesson, at its first question; End class."""
    with st.popover("Class", icon=":material/school:", key="live_class_menu"):
        st.markdown("**Present a lesson** at its first question:")
        for page in pages:
            name = page.path.rsplit("/", 1)[-1].removesuffix(".py")
            if page.lesson and st.button(
                page.title, icon=page.icon, key=f"live_switch_{name}", width="stretch"
            ):
                present_from_first_question()
                st.switch_page(page.path)
        end_button(on_slide=True)


def _report_link() -> None:
    """After End in presenter mode: the ended class's report, on the Class page."""
    ended = state.of(ClassSession).report
    if ended is not None:
        st.page_link(
            CLASS_PAGE,
            label=f"Report of class {display_code(ended.code)}",
            icon=":material/summarize:",
        )


def _show(start: bool) -> None:
    if start:
        start_class()
    state.of(TeacherPanel).show_join = True


# ---------------------------------------------------------------- a question's slide


@dataclass(frozen=True)
class LiveSlide:
    """A question's slide while this session teaches: the question as the class gets it and
    where the class is with it (NOT_ASKED, ASKED, REVEALED); None stage: it has no options
    to tap."""

    question: LiveQuestion | None
    stage: str | None

    @property
    def asked(self) -> bool:
        """The class is answering: the slide is the question itself."""
        return self.stage == ASKED

    @property
    def held(self) -> bool:
        """Not asked yet: the slide's result is held (a "?") until the reveal."""
        return self.stage == NOT_ASKED

    @property
    def revealed(self) -> bool:
        """Revealed: the slide shows its result; the answer stands in the navigation row."""
        return self.stage == REVEALED

    def panel(self) -> None:
        """What the slide shows of the class: Ask; the question with the count and Reveal;
        or the answer and the class's answers."""
        me = teaching()
        if me is None:
            return
        if self.question is None:
            st.caption("The class cannot answer this question by tapping: it has no options.")
        elif self.stage == ASKED:
            _asked(me, self.question)
        elif self.stage == REVEALED:
            _revealed(me, self.question)
        else:
            _ask_row(me, self.question)


def first_live_question(sections: Sequence[Section], page: str) -> int:
    """The position of the first section whose question a class can answer by tapping (0
    when none can)."""
    for k, section in enumerate(sections):
        if section.question is not None and live_question(section.question, page) is not None:
            return k
    return 0


def live_slide(question: Question, page: str, context: str = "") -> LiveSlide | None:
    """The slide's place in this session's class (None when it teaches none); `context`, the
    lesson's line of the example, goes to the phones with the question."""
    me = teaching()
    if me is None:
        return None
    live = live_question(question, page, context)
    if live is None:
        return LiveSlide(None, None)
    try:
        posed = default_store().current(me.code)
    except InputError:
        return LiveSlide(live, NOT_ASKED)  # the Ask row says what is wrong
    if posed is None or posed.question.qid != live.qid:
        return LiveSlide(live, NOT_ASKED)
    return LiveSlide(live, REVEALED if posed.revealed else ASKED)


class LessonHooks:
    """What a lesson asks of this session's class (lnlab.ui.lesson_hooks.ClassHooks);
    lnlab.ui.page.page_setup registers HOOKS on every page."""

    def teaching(self) -> bool:
        return teaching() is not None

    def keep_open(self) -> None:
        teacher_active()

    def first_question(self, sections: Sequence[Section], page: str) -> int | None:
        """After the Class page's Present (teacher.present_from_first_question), once: the
        position of the lesson's first question a class can answer."""
        panel = state.of(TeacherPanel)
        first, panel.first_question = panel.first_question, False
        if not first:
            return None
        return first_live_question(sections, page)

    def slide(self, question: Question, page: str, context: str = "") -> LiveSlide | None:
        """The slide of `question`; `context` is its lesson's line of the example, the data
        the phones get with it."""
        return live_slide(question, page, context)


HOOKS = LessonHooks()


# ---------------------------------------------------------------- Ask, the count, Reveal


def _ask_row(me: TeacherLink, live: LiveQuestion) -> None:
    with st.container(horizontal=True, vertical_alignment="center", key="live_panel"):
        st.button(
            "Ask the class",
            key=f"live_ask_{live.qid}",
            icon=":material/campaign:",
            type="primary",
            on_click=teacher_does,
            args=(me, "pose", live),
        )
        st.caption(_what_phones_get(live))
    _problem()


def _what_phones_get(live: LiveQuestion) -> str:
    """What Ask sends every phone, before it is pressed: the question, how many options,
    and the numbers it is about."""
    data = f" With: {plain(live.data)}" if live.data else ""
    return f"Every phone gets **{plain(live.prompt)}** and its {len(live.options)} options.{data}"


def _numbered(live: LiveQuestion) -> str:
    """The options as the projector and the phones number them."""
    items = "".join(
        f"<li><b>{k}</b> {html.escape(o.text)}</li>" for k, o in enumerate(live.options, 1)
    )
    return f'<ol class="lnlab-live-options">{items}</ol>'


def _asked(me: TeacherLink, live: LiveQuestion) -> None:
    """The question on the projector, read from the back of the room, and the live count."""
    with st.container(key="live_question"):
        st.html(f'<p class="lnlab-live-prompt">{html.escape(live.prompt)}</p>{_numbered(live)}')
        _count(me, live)


@following(TEACHER_POLL_S)
def _count(me: TeacherLink, live: LiveQuestion) -> None:
    """ "12 of 30 answered" and Reveal; nothing that tells which option is right."""
    watch("teacher_count", me.code, COUNTS, PULSE_S)
    panel = state.of(TeacherPanel)
    changed, panel.changed = panel.changed, False
    if changed:
        st.rerun(scope="app")  # the slide outside this fragment shows what changed
    store = default_store()
    try:
        posed = store.current(me.code)
        if posed is None or posed.question.qid != live.qid or posed.revealed:
            st.rerun(scope="app")  # another device asked or revealed: redraw the slide
        tally = store.tally(me.code, me.secret, live.qid)
    except InputError as err:
        problem(err)
        return
    landing()
    say("live_teacher", f"Asked the class: {live.prompt}")
    with st.container(horizontal=True, vertical_alignment="center", key="live_panel"):
        st.html(
            f'<p class="lnlab-live-count"><b>{tally.answered} of {tally.joined}</b> answered</p>'
        )
        st.button(
            "Reveal",
            key=f"live_reveal_{live.qid}",
            icon=":material/visibility:",
            type="primary",
            on_click=teacher_does,
            args=(me, "reveal", live.qid),
        )
    _problem()


def _problem() -> None:
    """Why the last Ask or Reveal failed, once."""
    panel = state.of(TeacherPanel)
    err, panel.problem = panel.problem, None
    if err:
        problem(err)


def _revealed(me: TeacherLink, live: LiveQuestion) -> None:
    """After Reveal: the answer and how many got it, and the class's answers by group (a
    dialog, opened by Reveal itself)."""
    try:
        tally = default_store().tally(me.code, me.secret, live.qid)
    except InputError as err:
        problem(err)
        return
    right = tally.by_group.get("right", 0)
    landing()
    say(
        "live_teacher",
        f"Revealed: {', '.join(right_options(live))}. {tally.answered} of {tally.joined} "
        f"answered: {tally_summary(live.groups, tally.by_group)}",
    )
    st.button(
        f"Answer: {plain(', '.join(right_options(live)))} · {right} of {tally.answered} right",
        key=f"live_answers_{live.qid}",
        icon=":material/bar_chart:",
        help="The class's answers, by option and by misconception",
        on_click=_show_answers,
        args=(live.qid,),
    )
    panel = state.of(TeacherPanel)
    shown, panel.show_answers = panel.show_answers, None
    if shown == live.qid:
        _answers_dialog(live, tally)


def _show_answers(qid: str) -> None:
    state.of(TeacherPanel).show_answers = qid


@st.dialog("The class's answers", width="large")
def _answers_dialog(live: LiveQuestion, tally: Tally) -> None:
    st.markdown(f"**{plain(live.prompt)}** The answer: **{plain(', '.join(right_options(live)))}**")
    st.markdown(f"{tally.answered} of {tally.joined} answered.")
    answers_chart(live, tally)
