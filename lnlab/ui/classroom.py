"""A live class: the teacher's panel on a question's slide, and the student's device.

Who this session is in a class lives in session state: TEACHER_KEY (a TeacherLink) once it
started a class or opened the teacher's link, STUDENT_KEY (a StudentLink with the student's
anonymous id) once it joined. The student's `join` and `me` stay in the URL on every page (as
`present=1` does), so a reload finds the same student; the teacher's secret never goes into
the address bar (a projector shows it): the teacher keeps the teacher link instead.

Both sides poll the class store (lnlab.classroom) from fragments that rerun themselves
(TEACHER_POLL_S, STUDENT_POLL_S): the teacher's counts and the student's current question
follow the class without anyone clicking.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import datetime

import streamlit as st

from lnlab.classroom.asking import live_question, right_options
from lnlab.classroom.links import (
    JOIN,
    ME,
    PARAMS,
    StudentLink,
    TeacherLink,
    join_link,
    page_url,
    qr_image,
    read_link,
    teacher_link,
)
from lnlab.classroom.live import LiveQuestion
from lnlab.classroom.plots import tally_bars, tally_summary
from lnlab.classroom.store import default_store, display_code, normalize_code
from lnlab.core.errors import InputError
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import Question
from lnlab.ui.assist import land, landing, say
from lnlab.ui.inputs import show_error

TEACHER_KEY = "live_teacher"
STUDENT_KEY = "live_student"
# how often each side asks the store what changed: the teacher's counts within about a
# second of a tap, the students' question within a second and a half of Ask or Reveal
TEACHER_POLL_S = 1.0
STUDENT_POLL_S = 1.5


def teaching() -> TeacherLink | None:
    """The class this session teaches, if any."""
    return st.session_state.get(TEACHER_KEY)


def studying() -> StudentLink | None:
    """The class this session has joined as a student (with its id), if any."""
    return st.session_state.get(STUDENT_KEY)


def url_params() -> dict[str, str]:
    """The query parameters every page keeps while this session is a student in a class."""
    me = studying()
    return {JOIN: me.code, ME: me.me} if me else {}


def _page_url() -> str:
    """The Class page's URL on the server this page came from."""
    return page_url(str(st.context.url or ""))


def join_url(code: str) -> str:
    """The students' join link on the server this page came from."""
    return join_link(_page_url(), code)


# ---------------------------------------------------------------- the link


def take_link() -> None:
    """Follow a class link in the URL, once: a student's own link (with `me`) rejoins the
    class as that student; a teacher's link makes this session the class's teacher and leaves
    the address bar. A bare join link is left to the Class page's join form. A bad link gets
    a notice and leaves the URL; it never raises."""
    raw = {name: st.query_params.get_all(name) for name in PARAMS if name in st.query_params}
    found = {name: v[0] if len(v) == 1 else v for name, v in raw.items()}
    signature = _signature(found)
    if not found or st.session_state.get("_live_link") == signature:
        return
    st.session_state["_live_link"] = signature
    try:
        link = read_link(found)
        if isinstance(link, TeacherLink):
            default_store().check_teacher(link.code, link.secret)
            st.session_state[TEACHER_KEY] = link
        elif link is not None and link.me is not None:
            me = default_store().join(link.code, student_id=link.me)
            st.session_state[STUDENT_KEY] = StudentLink(link.code, me)
        elif link is not None:
            default_store().check_code(link.code)  # a wrong or ended class: say so now
            st.session_state["live_code"] = display_code(link.code)
    except InputError as err:
        st.warning(f"This class link does not work: {plain(str(err))}.", icon=":material/link_off:")
        st.session_state.pop("live_code", None)
    else:
        if isinstance(link, StudentLink) and link.me is None:
            return  # the join form takes it from here; a reload keeps the code
    for name in found:
        del st.query_params[name]
    st.session_state["_live_link"] = _signature(url_params())


def keep_in_url() -> None:
    """A student's `join` and `me` in the address bar on every page (page switches drop the
    query string): a reload then finds the same student."""
    params = url_params()
    for name, value in params.items():
        st.query_params[name] = value
    st.session_state["_live_link"] = _signature(params)


def _signature(params: Mapping[str, object]) -> str:
    """The class parameters a URL had, as remembered in "_live_link" (followed once)."""
    return repr(sorted(params.items()))


# ---------------------------------------------------------------- the teacher


def start_class() -> None:
    """Open a new class with this session as its teacher (the focus goes to how to join)."""
    new = default_store().open_class()
    st.session_state[TEACHER_KEY] = TeacherLink(new.code, new.teacher_secret)
    land("live_join_card", itself=True)


def end_class() -> None:
    """Forget the class on this device (the students' answers stay until the class expires)."""
    st.session_state.pop(TEACHER_KEY, None)


def join_card(code: str) -> None:
    """The join code, big; the join link to type; the QR code to scan from the back."""
    link = join_url(code)
    with st.container(key="live_join_card"):
        st.html(
            f'<div class="lnlab-join"><span>Join at</span> <b>{html.escape(link)}</b>'
            f'<div class="lnlab-code">{html.escape(display_code(code))}</div></div>'
        )
        st.html(f'<div class="lnlab-qr-box">{qr_image(link)}</div>')


def join_line() -> None:
    """A small line on every slide while a class runs: where and with what code to join."""
    me = teaching()
    if me is not None:
        st.caption(f"Join at {plain(join_url(me.code))} · code **{display_code(me.code)}**")


@st.dialog("Join the class", width="large")
def _join_dialog(code: str) -> None:
    join_card(code)


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
    if st.session_state.pop("_live_show_join", False):
        _join_dialog(teaching().code)


def _show(start: bool) -> None:
    if start:
        start_class()
    st.session_state["_live_show_join"] = True


def _teacher_does(me: TeacherLink, action: str, what: LiveQuestion | str) -> None:
    """Ask (action "pose", a LiveQuestion) or Reveal ("reveal", a qid): the store checks the
    secret. The whole page reruns after, so the slide outside the panel shows the change."""
    try:
        getattr(default_store(), action)(me.code, me.secret, what)
    except InputError as err:  # an ended class, say
        st.session_state["_live_problem"] = err
    else:
        st.session_state["_live_changed"] = True
        if action == "reveal":  # the Reveal button goes: the focus stays on the panel
            land("live_panel", itself=True)


def awaiting_reveal(question: Question) -> bool:
    """True while this session's class is answering `question` and it is not revealed yet:
    the slide then keeps the result off the projector."""
    me = teaching()
    if me is None:
        return False
    try:
        posed = default_store().current(me.code)
    except InputError:
        return False
    return posed is not None and posed.question.qid == question.qid and not posed.revealed


def teacher_panel(question: Question, page: str) -> None:
    """On a slide with a question, while this session teaches: Ask the class, and beside it
    the room's answers, live."""
    me = teaching()
    if me is None:
        return
    live = live_question(question, page)
    if live is None:
        st.caption("The class cannot answer this question by tapping: it has no options.")
        return
    with st.container(border=True, key="live_panel"):
        live_counts(me, live)


@st.fragment(run_every=TEACHER_POLL_S)
def live_counts(me: TeacherLink, asked: LiveQuestion | None = None) -> None:
    """In a row, Ask the class (for the slide's question `asked`), how many joined and
    answered, and Reveal; under it, the answers by misconception. Without `asked` (the Class
    page): the question the class has now."""
    if st.session_state.pop("_live_changed", False):
        st.rerun(scope="app")  # the slide outside this fragment shows what changed
    landing()
    store = default_store()
    try:
        posed = store.current(me.code)
        if asked is not None and posed is not None and posed.question.qid != asked.qid:
            posed = None  # the class is on another slide's question
        tally = store.tally(me.code, me.secret, posed.question.qid) if posed else None
    except InputError as err:
        show_error(err)
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    with row:
        if asked is not None:
            st.button(
                "Ask the class",
                key=f"live_ask_{asked.qid}",
                icon=":material/campaign:",
                type="primary",
                on_click=_teacher_does,
                args=(me, "pose", asked),
            )
        if problem := st.session_state.pop("_live_problem", None):
            show_error(problem)
        if posed is None or tally is None:
            st.caption(
                "Not asked yet."
                if asked is not None
                else "No question asked yet: present a lesson and press Ask the class."
            )
            return
        live = posed.question
        st.markdown(f"**{tally.answered} of {tally.joined}** answered")
        # for the live region: Ask and Reveal, not each answer as it comes in
        say(
            "live_teacher",
            f"Revealed: {', '.join(right_options(live))}. "
            f"{tally.answered} of {tally.joined} answered: "
            f"{tally_summary(live.groups, tally.by_group)}"
            if posed.revealed
            else f"Asked the class: {live.prompt}",
        )
        if posed.revealed:
            st.markdown(
                f":material/visibility: Revealed: **{plain(', '.join(right_options(live)))}**"
            )
        else:
            st.button(
                "Reveal",
                key=f"live_reveal_{live.qid}",
                icon=":material/visibility:",
                on_click=_teacher_does,
                args=(me, "reveal", live.qid),
            )
    st.plotly_chart(
        tally_bars(live.groups, tally.by_group),
        key="live_bars",
        config={"displayModeBar": False},
        alt=f"Answers by group: {tally_summary(live.groups, tally.by_group)}",
    )


def teacher_view() -> bool:
    """The Class page for the teacher: how to join, the teacher link, the live counts of the
    question asked now and who joined. False when the class has expired."""
    me = teaching()
    try:
        info = default_store().check_code(me.code)
    except InputError as err:
        show_error(err)
        st.button("Start a new class", key="live_restart", on_click=start_class)
        return False
    st.header("Students join here")
    join_card(me.code)
    until = datetime.fromtimestamp(info.expires_at)
    st.caption(f"The class runs until {until:%Y-%m-%d %H:%M} (server time).")
    with st.expander("Your teacher link (keep it private)", icon=":material/key:"):
        st.caption(
            "It opens this class as its teacher on any device: whoever has it can ask and "
            "reveal questions. Keep it; the address bar does not show it."
        )
        st.code(teacher_link(_page_url(), me.code, me.secret), None)
    st.header("The question asked now")
    live_counts(me)
    _roster(me, info.students)
    return True


def counts_csv() -> str:
    """The taught class's answer counts as CSV."""
    me = teaching()
    return default_store().counts_csv(me.code, me.secret)


def _roster(me: TeacherLink, joined: int) -> None:
    """Who joined: the nicknames students typed (escaped), for the teacher's eyes only."""
    names = [plain(n) for n in default_store().roster(me.code, me.secret)]
    anonymous = joined - len(names)
    shown = ", ".join(names + ([f"{anonymous} without a nickname"] if anonymous else []))
    st.caption(f"{joined} joined" + (f": {shown}." if joined else "."))


# ---------------------------------------------------------------- the student


def _join() -> None:
    """The Join button: the store checks the code and the nickname; a student who joined this
    class before keeps their id (and score). The focus goes to the class's question."""
    code = st.session_state.get("live_code") or ""
    mine = studying()
    try:
        again = mine.me if mine is not None and mine.code == normalize_code(code) else None
        me = default_store().join(
            code, student_id=again, nickname=st.session_state.get("live_nickname")
        )
        st.session_state[STUDENT_KEY] = StudentLink(normalize_code(code), me)
        land("live_student", itself=True)
    except InputError as err:
        st.session_state["_live_join_problem"] = err


def leave_class() -> None:
    """This device stops following the class (a student's answers stay in the class)."""
    st.session_state.pop(STUDENT_KEY, None)
    for name in (JOIN, ME):
        st.query_params.pop(name, None)
    land("live_code")


def join_form() -> None:
    """Type the code (a join link fills it in), an optional nickname, and Join."""
    st.session_state.setdefault("live_code", "")
    st.text_input("Class code", key="live_code", max_chars=24, placeholder="e.g. ABC-DEF-GHJ")
    st.text_input(
        "Nickname (optional: only the teacher sees it)",
        key="live_nickname",
        autocomplete="nickname",  # WCAG 1.3.5: the browser may fill it in
        max_chars=40,  # more than allowed, so a long one gets a message, not a silent cut
    )
    st.button(
        "Join",
        key="live_join",
        type="primary",
        icon=":material/login:",
        width="stretch",
        on_click=_join,
    )
    if problem := st.session_state.pop("_live_join_problem", None):
        show_error(problem)


def _answer(me: StudentLink, qid: str, text: str) -> None:
    """An option's button: the answer goes to the store, the focus to what the device shows
    now (the buttons go)."""
    try:
        default_store().answer(me.code, me.me, qid, text)
    except InputError as err:
        st.session_state["_live_answer_problem"] = err
    land("live_student", itself=True)


@st.fragment(run_every=STUDENT_POLL_S)
def student_view() -> None:
    """The student's device follows the class: the question asked now, big buttons to answer
    it (once), then the reveal with their own feedback, and their score."""
    me = studying()
    if me is None:
        return
    landing()
    try:
        now = default_store().follow(me.code, me.me)
    except InputError as err:
        show_error(err)
        return
    with st.container(key="live_student"):
        if problem := st.session_state.pop("_live_answer_problem", None):
            show_error(problem)
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


def _question(me: StudentLink, live: LiveQuestion, revealed: bool, mine: str | None) -> None:
    st.markdown(f"## {plain(live.prompt)}")
    say("live_student", _news(live, revealed, mine))
    if mine is None and not revealed:
        options = st.container(key="live_options")
        for k, option in enumerate(live.options):
            options.button(
                plain(option.text),
                key=f"live_opt_{live.qid}_{k}",
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
        st.info(f"You did not answer this one. {plain(live.explanation)}")
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
    return f"New question: {live.prompt}"
