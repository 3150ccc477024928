"""The teacher's panel on a question's slide: what the room sees while a class is taught.

Only the teacher sees it, in a lesson (lnlab.ui.lesson, through the hooks this module
registers: LessonHooks, lnlab.ui.lesson_hooks), and in presenter mode's top row (Start a
class or Show how to join, and the join line). A question's slide goes ask -> answer -> reveal:
- before Ask, the slide shows its setting, a "?" where its result goes, and Ask the class;
- after Ask, the question and its numbered options, projector-sized, and "12 of 30 answered",
  updating as answers come in (the class's pulse); nothing says which option is right;
- after Reveal, the class's answers by group (the right one and each misconception named) in
  a dialog over the slide, and the slide with its result; the class's answers close.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from lnlab.classroom.asking import live_question, right_options
from lnlab.classroom.links import TeacherLink, join_link
from lnlab.classroom.live import LiveQuestion
from lnlab.classroom.plots import tally_bars, tally_summary
from lnlab.classroom.store import Tally, default_store, display_code
from lnlab.core.errors import InputError
from lnlab.teach.lesson import Section
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import Question
from lnlab.ui import state
from lnlab.ui.assist import landing, say
from lnlab.ui.classroom.common import (
    PULSE_S,
    TEACHER_POLL_S,
    TeacherPanel,
    join_base_here,
    problem,
    start_class,
    start_problem,
    teacher_active,
    teacher_does,
    teaching,
)
from lnlab.ui.classroom.teacher import join_card, teacher_link_copy
from lnlab.ui.pulse import COUNTS, following, watch

NOT_ASKED, ASKED, REVEALED = "not asked", "asked", "revealed"


# ---------------------------------------------------------------- presenter mode's top row


def join_url(code: str) -> str:
    """The students' join link, at an address phones can reach."""
    return join_link(join_base_here().url, code)


def join_line() -> None:
    """A small line on every slide while a class runs: where and with what code to join."""
    me = teaching()
    if me is not None:
        st.caption(f"Join at {plain(join_url(me.code))} · code **{display_code(me.code)}**")


@st.dialog("Join the class", width="large")
def _join_dialog(code: str) -> None:
    join_card(code)
    teacher_link_copy()


def presenter_buttons() -> None:
    """In presenter mode's top row: start a class, or show how to join it again (a dialog
    with the code and the QR code, over the slide)."""
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
    show, panel.show_join = panel.show_join, False
    if show and teaching() is not None:
        _join_dialog(teaching().code)


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


def live_slide(question: Question, page: str) -> LiveSlide | None:
    """The slide's place in this session's class (None when it teaches none)."""
    me = teaching()
    if me is None:
        return None
    live = live_question(question, page)
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

    def slide(self, question: Question, page: str) -> LiveSlide | None:
        return live_slide(question, page)


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
        st.caption("The question and its options go to every student's device.")
    _problem()


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
        help="The class's answers, by misconception",
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
    st.plotly_chart(
        tally_bars(live.groups, tally.by_group),
        key="live_bars",
        config={"displayModeBar": False},
        alt=f"Answers by group: {tally_summary(live.groups, tally.by_group)}",
    )
