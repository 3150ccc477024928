"""The student's device: the join form, the question asked now, answering, Leave the class,
and the end screen.

Only a student (or a visitor about to join) sees it, on the Class page (pages/class.py).
Once its browser has shown that it reads the class's pulse (lnlab.ui.pulse), the page draws
the question itself (`_drawn_by_page`, static/lnlab/phone.mjs): it hears a change as soon as
it is stored and sends a tap by the answer route, with no script run for either (issue 39:
one run per device per question kept a class of 12 waiting 0.76 s for it). Until then, and
where it cannot, Python draws it: the device reruns when the class's pulse changes, or on a
timer. Once the class has ended, the whole page shows the end screen: the final score, each
question with the student's answer, the right one and the misconception named, until the
student goes back to the join form.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from functools import partial

import streamlit as st

from lnlab.classroom.asking import right_options
from lnlab.classroom.links import JOIN, StudentLink
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.report import Final, chosen, right_text
from lnlab.classroom.store import (
    CLOSED,
    ClassError,
    Following,
    StoreDown,
    default_store,
    display_code,
    normalize_code,
)
from lnlab.core.errors import InputError
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import group_name
from lnlab.ui import claims, pulse, state
from lnlab.ui.assist import land, landing, say
from lnlab.ui.classroom.common import (
    ClassSession,
    asks_first,
    close_dialog,
    confirmed,
    data_html,
    problem,
    studying,
)
from lnlab.ui.pulse import QUESTION, UNKNOWN, following, watch
from lnlab.ui.served import STATIC, base_path
from lnlab.ui.server.answers import PATH as ANSWER_PATH
from lnlab.ui.server.board import phone_question
from lnlab.ui.server.pulse import PATH as PULSE_PATH

# How often the device's fragment reruns on a timer to see what changed, where the browser
# cannot follow the class's pulse (lnlab.ui.pulse): the question within a second and a half of
# Ask or Reveal.
STUDENT_POLL_S = 1.5
# How often the browser reads the class's pulse while a change is not drawn yet, or its held
# reads fail (no script runs unless something changed); while it is drawn, the server holds
# each read until the class changes (lnlab.ui.server.waiting).
STUDENT_PULSE_S = 1.0
PHONE_KEY = "lnlab_phone"  # the page's phone component: its state and triggers

_phone = st.components.v2.component(
    "lnlab.phone",
    js=(STATIC / "lnlab" / "phone.mjs").read_text(encoding="utf-8"),
    css=(STATIC / "lnlab" / "phone.css").read_text(encoding="utf-8"),
    isolate_styles=False,  # the app's data line style (lnlab.ui.style) applies as elsewhere
)


@dataclass
class StudentDevice:
    """What the student's device says after a tap, once (lnlab.ui.state)."""

    join_problem: InputError | None = None  # why Join did not join
    answer_problem: InputError | None = None  # why an answer was not stored
    final: Final | None = None  # the class has ended: this student's answers, kept to show


def _join() -> None:
    """The Join button: the store checks the code and the nickname; a browser that joined
    this class before gets its student back (and score)."""
    code = st.session_state.get("live_code") or ""
    try:
        me = default_store().join(
            code,
            nickname=st.session_state.get("live_nickname") or "",
            browser=claims.browser_id(),
            address=claims.client_address(),
        )
        state.of(ClassSession).student = StudentLink(normalize_code(code), me)
        land("live_student", itself=True)  # the focus goes to the class's question
    except InputError as err:
        state.of(StudentDevice).join_problem = err


def _leave() -> None:
    """This device stops following the class (a student's answers stay in the class)."""
    state.of(ClassSession).student = None
    state.of(StudentDevice).final = None
    st.query_params.pop(JOIN, None)
    land("live_code")


@st.dialog("Leave the class?", on_dismiss=close_dialog)
def _leave_dialog() -> None:
    st.markdown(
        "Your answers and score stay in the class: join again with the same code on this "
        "device to get them back."
    )
    if confirmed("Leave", "live_leave_confirm", "Stay", "live_leave_cancel"):
        _leave()
        close_dialog()
        st.rerun()


def leave_button() -> None:
    """Leave the class, after asking."""
    asks_first("Leave the class", "live_leave", ":material/logout:", "leave", _leave_dialog)


def join_form() -> None:
    """Type the code (a join link fills it in), an optional nickname, and Join."""
    st.session_state.setdefault("live_code", "")
    st.text_input("Class code", key="live_code", max_chars=24, placeholder="e.g. ABC-DEF-GHJ")
    st.text_input(
        "Nickname (optional: only the teacher sees it)",
        key="live_nickname",
        autocomplete="nickname",  # WCAG 1.3.5: the browser may fill it in
        max_chars=100,  # more than allowed, so a long one gets a message, not a silent cut
    )
    st.button(
        "Join",
        key="live_join",
        type="primary",
        icon=":material/login:",
        width="stretch",
        on_click=_join,
    )
    device = state.of(StudentDevice)
    err, device.join_problem = device.join_problem, None
    if err:
        problem(err)


def _answer(me: StudentLink, qid: str, text: str | int) -> None:
    """An option's button: the answer goes to the store, the focus to what the device shows
    now (the buttons go)."""
    land("live_student", itself=True)
    device = state.of(StudentDevice)
    try:
        stored = default_store().answer(me.code, me.me, qid, text)
    except StoreDown as err:
        device.answer_problem = StoreDown(f"your answer was not stored: {err}. Tap it again")
    except InputError as err:
        device.answer_problem = err
    else:
        if not stored:
            device.answer_problem = ClassError(
                "this question is no longer asked, or you answered it already; your first "
                "answer counts"
            )


def student_page() -> None:
    """The student's part of the Class page: the class as it goes and Leave the class, or,
    once it has ended, the end screen."""
    final = state.of(StudentDevice).final
    if final is not None:
        _end_screen(studying(), final)
        return
    student_view()
    leave_button()


def _ended(me: StudentLink) -> bool:
    """Whether the class has ended with this student in it: their answers are then kept for
    the end screen (the store purges the class later)."""
    try:
        final = default_store().final(me.code, me.me)
    except InputError:
        return False
    state.of(StudentDevice).final = final
    return final is not None


def _end_screen(me: StudentLink, final: Final) -> None:
    """The final score, then each question with this student's answer, the right one, and
    the misconception a wrong answer comes from; Back to the join form."""
    landing()
    asked = len(final.questions)
    with st.container(key="live_student"):
        st.info(f"Class {display_code(me.code)} has ended.", icon=":material/flag:")
        say("live_student", f"The class has ended. Your final score: {final.right} of {asked}.")
        st.metric(
            "Your final score",
            f"{final.right} / {asked}",
            help="Right answers / questions asked",
        )
        for k, question in enumerate(final.questions, 1):
            st.markdown(f"**{k}. {plain(question.prompt)}**")
            if question.data:
                st.caption(plain(question.data))
            mine = chosen(question, final.mine.get(question.qid))
            answer = f"The answer: **{plain(right_text(question))}**."
            if mine is None:
                st.info(f"You did not answer. {answer}", icon=":material/remove:")
            elif mine.correct:
                st.success(f"You answered **{plain(mine.text)}**: right.", icon=":material/check:")
            else:
                st.warning(
                    f"You answered **{plain(mine.text)}**. {answer} {_named(mine)}",
                    icon=":material/lightbulb:",
                )
    st.button(
        "Back to the join form",
        key="live_after_end",
        type="primary",
        icon=":material/login:",
        on_click=_leave,
    )


def _named(option: LiveOption) -> str:
    """A wrong option's feedback with the misconception it comes from named (the lessons'
    feedback names it first; "Something else" has none)."""
    name = group_name(option.group)
    feedback = plain(option.feedback)
    return feedback if feedback.startswith(plain(name)) else f"{plain(name)}. {feedback}".strip()


@following(STUDENT_POLL_S)
def student_view() -> None:
    """The student's device follows the class: the question asked now, big numbered buttons
    to answer it (once), then the reveal with their own feedback, and their score."""
    me = studying()
    if me is None:
        return
    landing()
    drew = partial(watch, "student", me.code, QUESTION, STUDENT_PULSE_S)
    try:
        now = default_store().follow(me.code, me.me)
    except StoreDown as err:
        drew(UNKNOWN)
        problem(err)
        return
    except InputError as err:
        closed = isinstance(err, ClassError)
        drew(asdict(CLOSED) if closed else UNKNOWN)
        if closed and _ended(me):
            st.rerun(scope="app")  # the whole page shows the end screen
        problem(err)
        if closed and st.button("Back to the join form", key="live_after_end", type="primary"):
            _leave()
            st.rerun(scope="app")  # the join form is outside this fragment
        return
    device = state.of(StudentDevice)
    if pulse.works():
        with st.container(key="live_student"):
            _drawn_by_page(me, now, device)
        return
    posed = now.posed
    qid = posed.question.qid if posed else None
    drew({"qid": qid, "revealed": bool(posed and posed.revealed), "open": True})
    with st.container(key="live_student"):
        err, device.answer_problem = device.answer_problem, None
        if err:
            problem(err)
        if now.posed is None:
            st.info("Waiting for the teacher's first question…", icon=":material/hourglass:")
            say("live_student", "Waiting for the teacher's first question.")
        else:
            _question(me, now.posed.question, now.posed.revealed, now.mine)
        st.metric(
            "Your score",
            f"{now.right} / {now.answered}",
            help="Right answers / answers, over the questions revealed so far",
        )


def _drawn_by_page(me: StudentLink, now: Following, device: StudentDevice) -> None:
    """The question, the answering and the score, drawn by the page (static/lnlab/phone.mjs)
    from what this run read: the page follows the class from there by itself."""
    pulse.followed()
    err, device.answer_problem = device.answer_problem, None
    problem = str(err) if err else ""
    _phone(
        key=PHONE_KEY,
        data={
            "url": f"{base_path()}{PULSE_PATH}{me.code}",
            "answer_url": f"{base_path()}{ANSWER_PATH}{me.code}",
            "me": me.me,
            "every_ms": round(STUDENT_PULSE_S * 1000),
            "status": "ready",
            "now": {
                "stamp": secrets.token_hex(8),  # each run's draw is applied once
                "question": phone_question(now.posed) if now.posed else None,
                "mine": now.mine,
                "right": now.right,
                "answered": now.answered,
                "problem": problem[:1].upper() + problem[1:] + ("." if problem else ""),
            },
        },
        on_status_change=partial(pulse.status_changed, PHONE_KEY),
        on_tap_change=partial(_tapped, me),
        on_ended_change=pulse.rerun_only,  # the fragment's run finds the class ended
    )


def _tapped(me: StudentLink) -> None:
    """A tap the answer route could not take, sent by the page: stored as a Python-drawn
    phone's tap is."""
    tapped = (st.session_state.get(PHONE_KEY) or {}).get("tap") or {}
    qid, option = tapped.get("qid"), tapped.get("option")
    if isinstance(qid, str) and type(option) is int:
        _answer(me, qid, option)


def _question(me: StudentLink, live: LiveQuestion, revealed: bool, mine: str | None) -> None:
    """The question: its data (the numbers it is about, as the slide shows them), the prompt,
    then the options to tap, the wait for the reveal, or the student's feedback."""
    if live.data:
        st.html(data_html(live.data))
    st.markdown(f"## {plain(live.prompt)}")
    say("live_student", _news(live, revealed, mine))
    if mine is None and not revealed:
        options = st.container(key="live_options")
        for k, option in enumerate(live.options, 1):
            options.button(
                f"{k}\u2003{plain(option.text)}",
                key=f"live_opt_{live.qid}_{k - 1}",
                width="stretch",
                on_click=_answer,
                args=(me, live.qid, option.text),
            )
        return
    if not revealed:
        st.info(
            f"Your answer: **{plain(mine)}**. Waiting for the reveal…",
            icon=":material/hourglass:",
        )
        return
    st.markdown(f"The answer: **{plain(', '.join(right_options(live)))}**")
    chosen = live.option(mine) if mine is not None else None
    if chosen is None:
        st.info(
            f"You did not answer this one before the reveal. {plain(live.explanation)}",
            icon=":material/info:",
        )
    elif chosen.correct:
        st.success(f"You answered {plain(mine)}: {plain(chosen.feedback)}", icon=":material/check:")
    else:
        st.warning(
            f"You answered {plain(mine)}. {plain(chosen.feedback)}",
            icon=":material/lightbulb:",
        )


def _news(live: LiveQuestion, revealed: bool, mine: str | None) -> str:
    """What the student's live region says about the question now: it is new, answered, or
    revealed (spoken once, when it changes)."""
    if revealed:
        chosen = live.option(mine) if mine is not None else None
        answer = f"The answer: {', '.join(right_options(live))}."
        if chosen is None:
            return f"{answer} You did not answer this one."
        return f"{answer} You answered {mine}: {'right' if chosen.correct else 'not right'}."
    if mine is not None:
        return f"Your answer: {mine}. Waiting for the reveal."
    return f"New question: {live.prompt}" + (f" With: {live.data}" if live.data else "")
