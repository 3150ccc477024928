"""A live class: the teacher's panel on a question's slide, the Class page, the student's device.

Who this session is in a class lives in session state: TEACHER_KEY (a TeacherLink) once it
started a class or opened the teacher's link, STUDENT_KEY (a StudentLink with the student's
anonymous id) once it joined. The browser keeps both across reloads, tabs, server restarts
and a cluster's processes (lnlab.ui.claims): the teacher's class in a cookie, and the
browser's own random id, by which the class store finds its student again. The address bar
keeps only a student's `join=CODE` (as `present=1`), never a secret or a student's id.

A question's slide, while this session teaches, goes ask -> answer -> reveal:
- before Ask, the slide shows its setting, a "?" where its result goes, and Ask the class;
- after Ask, the question and its numbered options, projector-sized, and "12 of 30 answered",
  updating as answers come in (the class's pulse); nothing says which option is right;
- after Reveal, the class's answers by group (the right one and each misconception named) in
  a dialog over the slide, and the slide with its result; the class's answers close.
Students' devices follow; every view that follows the class reruns when the class's pulse
changes (lnlab.ui.pulse), or on a timer where the browser cannot read it.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import partial
from urllib.parse import urlsplit

import streamlit as st

from lnlab.classroom.asking import live_question, right_options
from lnlab.classroom.links import (
    JOIN,
    PARAMS,
    JoinBase,
    StudentLink,
    TeacherLink,
    is_loopback,
    join_base,
    join_link,
    network_addresses,
    public_url,
    qr_image,
    read_link,
    teacher_link,
)
from lnlab.classroom.live import LiveQuestion
from lnlab.classroom.nicknames import shown_apart
from lnlab.classroom.plots import tally_bars, tally_summary
from lnlab.classroom.store import (
    CLASS_HOURS,
    CLOSED,
    ClassError,
    StoreDown,
    Tally,
    default_store,
    display_code,
    normalize_code,
)
from lnlab.core.errors import InputError
from lnlab.teach.lesson import Section
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import Question
from lnlab.ui import claims
from lnlab.ui.assist import land, landing, say
from lnlab.ui.pulse import COUNTS, QUESTION, UNKNOWN, following, watch

TEACHER_KEY = "live_teacher"
STUDENT_KEY = "live_student"
# How often each side's fragment reruns on a timer to see what changed, where the browser
# cannot follow the class's pulse (lnlab.ui.pulse): the teacher's counts within about a second
# of a tap, the students' question within a second and a half of Ask or Reveal.
TEACHER_POLL_S = 1.0
STUDENT_POLL_S = 1.5
WATCH_S = 1.0  # a teacher's page notices what their other devices did within this
# How often the browser reads the class's pulse (no script runs unless something changed).
PULSE_S = 0.5  # the teacher's devices: counts within half a second
STUDENT_PULSE_S = 1.0  # each student's device: 300 students ask 300 times a second
ACTIVE_EVERY_S = 60.0  # a teacher's clicks keep the class open; the store hears at most this often
CLASS_PAGE = "pages/class.py"
NOT_ASKED, ASKED, REVEALED = "not asked", "asked", "revealed"
FIRST_QUESTION_KEY = "_live_first_question"  # the next lesson opens at its first question


def teaching() -> TeacherLink | None:
    """The class this session teaches, if any."""
    return st.session_state.get(TEACHER_KEY)


def studying() -> StudentLink | None:
    """The class this session has joined as a student (with its id), if any."""
    return st.session_state.get(STUDENT_KEY)


def url_params() -> dict[str, str]:
    """The query parameters every page keeps while this session is a student in a class."""
    me = studying()
    return {JOIN: me.code} if me else {}


@st.cache_data(ttl=60, show_spinner=False)
def _addresses() -> list[str]:
    return network_addresses()


def _join_base() -> JoinBase:
    """Where phones reach the Class page (lnlab.classroom.links.join_base)."""
    return join_base(str(st.context.url or ""), public_url(), _addresses())


def join_url(code: str) -> str:
    """The students' join link, at an address phones can reach."""
    return join_link(_join_base().url, code)


def problem(err: InputError) -> None:
    """A class's message, as plain text: what went wrong and what to do."""
    text = str(err)
    icon = ":material/cloud_off:" if isinstance(err, StoreDown) else ":material/error:"
    st.error(plain(text[:1].upper() + text[1:]) + ".", icon=icon)


# ---------------------------------------------------------------- links and the browser's claims


def take_link() -> None:
    """On every whole-page run: this session's place in a class, from the browser.

    A link is followed once: a teacher's link makes this session the class's teacher (and
    the browser keeps the claim; the secret leaves the address bar); a join link finds this
    browser's student in the class, or fills in the join form. Without a link, the browser's
    teacher claim brings the teacher back into their class. A bad link gets a notice and
    leaves the URL; nothing here raises."""
    claims.browser_id()
    claims.write_cookies()
    raw = {name: st.query_params.get_all(name) for name in PARAMS if name in st.query_params}
    found = {name: v[0] if len(v) == 1 else v for name, v in raw.items()}
    signature = _signature(found)
    if found and st.session_state.get("_live_link") != signature:
        st.session_state["_live_link"] = signature
        _follow(found)
    if teaching() is None and not st.session_state.get("_live_claim_checked"):
        _reclaim()
    teacher_active()
    if (me := teaching()) is None:
        return
    try:
        st.session_state["_live_seen"] = _where(me)
    except ClassError:  # ended on another of the teacher's devices, or closed by itself
        _stop_teaching()
        st.session_state["_live_ended"] = display_code(me.code)  # the Class page says so too
        st.toast(f"Class {display_code(me.code)} has ended.", icon=":material/check:")
        return
    with st.sidebar:  # hidden in presenter mode; it draws nothing in any case
        _watch(me)


def _where(me: TeacherLink) -> tuple[str, bool] | None:
    """The class's question now and whether it is revealed (None: none, or no answer). Raises
    ClassError only when the class has ended (its pulse says it is closed)."""
    store = default_store()
    try:
        posed = store.current(me.code)
    except StoreDown:
        return None
    except ClassError:
        try:
            closed = not store.pulse(me.code).open
        except StoreDown:
            return None
        if closed:
            raise
        return None  # anything else wrong with it: the slide's Ask row says what
    except InputError:
        return None  # a stored question today's checks refuse: the Ask row says so
    return (posed.question.qid, posed.revealed) if posed else None


def _stop_teaching() -> None:
    """This session and its browser no longer teach a class (it ended)."""
    st.session_state.pop(TEACHER_KEY, None)
    claims.drop_teacher_claim()


@following(WATCH_S)
def _watch(me: TeacherLink) -> None:
    """Every page of the teacher's follows the class: when another of their devices asks or
    reveals, the page runs again; when the class has ended there, the whole page runs without
    it (take_link). After a server restart or a move to another process, its first tick runs
    the whole page (lnlab.ui.failover), which brings the teacher back."""
    watch("teacher_page", me.code, QUESTION, PULSE_S)
    try:
        now = _where(me)
    except ClassError:
        st.rerun(scope="app")
        return
    if now is not None and now != st.session_state.get("_live_seen"):
        st.session_state["_live_seen"] = now
        st.rerun(scope="app")


def _follow(found: Mapping[str, object]) -> None:
    """Follow a link once; a good join link stays in the address bar (a reload keeps the
    code, or the student), anything else leaves it."""
    keep: set[str] = set()
    try:
        link = read_link(found)
        if isinstance(link, TeacherLink):
            _become_teacher(link)
        elif link is not None:
            _rejoin(link)
            keep = {JOIN}
    except InputError as err:
        st.warning(f"This class link does not work: {plain(str(err))}.", icon=":material/link_off:")
        st.session_state.pop("live_code", None)
    for name in found:
        if name not in keep:
            del st.query_params[name]
    st.session_state["_live_link"] = _signature({k: found[k] for k in keep})


def _become_teacher(link: TeacherLink) -> None:
    default_store().check_teacher(link.code, link.secret)
    st.session_state[TEACHER_KEY] = link
    claims.keep_teacher_claim(link.code, link.secret, CLASS_HOURS * 3600)


def _rejoin(link: StudentLink) -> None:
    """A join link: this browser's student in the class if it has one, else the join form
    with the code filled in. A link's `me=` must be this browser's own student."""
    store = default_store()
    mine = store.find_student(link.code, claims.browser_id())
    if link.me is not None and link.me != mine:
        st.warning(
            "This link names a student id that is not this device's. Links no longer carry a "
            "student's id: your device is your place in the class. Join with the code below.",
            icon=":material/person_off:",
        )
    if mine is not None:
        st.session_state[STUDENT_KEY] = StudentLink(link.code, mine)
        return
    store.check_code(link.code)  # a wrong or ended class: say so now
    st.session_state["live_code"] = display_code(link.code)


def _reclaim() -> None:
    """The browser's teacher claim (a cookie) brings the teacher back into their class."""
    claim = claims.teacher_claim()
    if claim is None:
        st.session_state["_live_claim_checked"] = True
        return
    try:
        _become_teacher(TeacherLink(*claim))
    except StoreDown as err:  # tried again on the next run
        problem(err)
        return
    except ClassError as err:
        claims.drop_teacher_claim()
        st.info(f"Your class is over: {plain(str(err))}.", icon=":material/event_busy:")
    st.session_state["_live_claim_checked"] = True


def teacher_active() -> None:
    """The teacher clicked (a page, a slide): the class stays open (at most one store write a
    minute)."""
    me = teaching()
    now = time.monotonic()
    if me is None or now - st.session_state.get("_live_active_at", -1e9) < ACTIVE_EVERY_S:
        return
    st.session_state["_live_active_at"] = now
    try:
        default_store().keep_open(me.code, me.secret)
    except StoreDown:
        st.session_state.pop("_live_active_at", None)  # tried again on the next click
    except ClassError:
        pass  # the Class page and the panels say the class has ended


def keep_in_url() -> None:
    """A student's `join` in the address bar on every page (page switches drop the query
    string): a reload then finds the same student (by the browser)."""
    params = url_params()
    for name, value in params.items():
        st.query_params[name] = value
    if params:  # a visitor who has not joined may keep a join link's code (_follow)
        st.session_state["_live_link"] = _signature(params)


def _signature(params: Mapping[str, object]) -> str:
    """The class parameters a URL had, as remembered in "_live_link" (followed once)."""
    return repr(sorted(params.items()))


# ---------------------------------------------------------------- starting and ending


def start_class() -> None:
    """Open a new class with this session as its teacher; a cap says what to do instead."""
    try:
        new = default_store().open_class(
            browser=claims.browser_id(), address=claims.client_address()
        )
    except ClassError as err:
        st.session_state["_live_start_problem"] = err
        return
    st.session_state[TEACHER_KEY] = TeacherLink(new.code, new.teacher_secret)
    st.session_state["_live_claim_checked"] = True
    claims.keep_teacher_claim(new.code, new.teacher_secret, CLASS_HOURS * 3600)
    land("live_join_card", itself=True)  # the focus goes to how to join


def start_problem() -> None:
    """Why the last Start a class did not start one, if it did not."""
    if err := st.session_state.pop("_live_start_problem", None):
        problem(err)


def sidebar_start() -> None:
    """In the sidebar of every page: start a class in one click, then the Class page (its code,
    QR code and lessons), or go back to the class this session teaches."""
    if studying() is not None:
        return
    if teaching() is None:
        clicked = st.sidebar.button(
            "Start a live class", key="live_start_sidebar", icon=":material/groups:"
        )
        if clicked:
            start_class()
            if teaching() is None:
                start_problem_in_sidebar()
                return
            st.switch_page(CLASS_PAGE)


def start_problem_in_sidebar() -> None:
    if err := st.session_state.pop("_live_start_problem", None):
        st.sidebar.error(plain(str(err)[:1].upper() + str(err)[1:]) + ".")


def _close_dialog() -> None:
    st.session_state.pop("_live_dialog", None)


def _asks_first(
    label: str, key: str, icon: str, name: str, dialog: Callable[..., None], *args: object
) -> None:
    """A button whose action a dialog confirms: it stays open until answered or closed."""
    st.button(
        label,
        key=key,
        icon=icon,
        on_click=st.session_state.__setitem__,
        args=("_live_dialog", name),
    )
    if st.session_state.get("_live_dialog") == name:
        dialog(*args)


def _confirmed(yes: str, yes_key: str, no: str, no_key: str) -> bool | None:
    """The dialog's two answers, side by side: True or False once pressed (the dialog then
    closes), None before."""
    left, right = st.columns(2)
    if left.button(yes, key=yes_key, type="primary", width="stretch"):
        return True
    if right.button(no, key=no_key, width="stretch"):
        _close_dialog()
        st.rerun()
    return None


@st.dialog("End the class for everyone?", on_dismiss=_close_dialog)
def _end_dialog(me: TeacherLink) -> None:
    st.markdown(
        f"Class **{display_code(me.code)}** ends on every device: students see that it has "
        "ended, and its answers are deleted when the next class opens. Download the answer "
        "counts first if you want them."
    )
    if not _confirmed("End class", "live_end_confirm", "Keep it running", "live_end_cancel"):
        return
    try:
        default_store().end_class(me.code, me.secret)
    except StoreDown as err:
        problem(err)
        return
    except ClassError:
        pass  # ended already
    _stop_teaching()
    st.session_state["_live_ended"] = display_code(me.code)
    _close_dialog()
    st.rerun()


def end_button() -> None:
    """End class, for everyone, after a confirmation."""
    if (me := teaching()) is not None:
        _asks_first("End class", "live_end", ":material/stop_circle:", "end", _end_dialog, me)


def ended_notice() -> None:
    if code := st.session_state.pop("_live_ended", None):
        st.success(f"Class {code} has ended.", icon=":material/check:")


# ---------------------------------------------------------------- how to join


def join_card(code: str) -> None:
    """The join code, big; the join link to type; the QR code to scan from the back; and,
    when the teacher's own address is this machine's loopback, what phones use instead."""
    base = _join_base()
    link = join_link(base.url, code)
    with st.container(key="live_join_card"):
        st.html(
            f'<div class="lnlab-join"><span>Join at</span> <b>{html.escape(link)}</b>'
            f'<div class="lnlab-code">{html.escape(display_code(code))}</div></div>'
        )
        st.html(f'<div class="lnlab-qr-box">{qr_image(link)}</div>')
    if base.unreachable:
        _unreachable_note(base)


def _unreachable_note(base: JoinBase) -> None:
    if is_loopback(urlsplit(base.url).hostname):
        st.warning(
            f"This page is open at {plain(base.unreachable)}, which only this computer can "
            "reach, and it has no other network address: phones cannot join. Connect it to "
            "the room's network, or set LNLAB_PUBLIC_URL to the address students can reach.",
            icon=":material/wifi_off:",
        )
        return
    others = ", ".join(plain(u) for u in base.others)
    st.caption(
        f"Phones cannot reach {plain(base.unreachable)} (this computer only): the link and QR "
        "code use this computer's network address"
        + (f"; its other addresses: {others}" if others else "")
        + ". Behind a proxy or a domain, set LNLAB_PUBLIC_URL."
    )


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
    if st.session_state.pop("_live_show_join", False) and teaching() is not None:
        _join_dialog(teaching().code)


def _show(start: bool) -> None:
    if start:
        start_class()
    st.session_state["_live_show_join"] = True


def teacher_link_copy() -> None:
    """Copy the teacher link to the clipboard, to open the class on another device; it is not
    shown, so the projector never shows it."""
    me = teaching()
    if me is None:
        return
    link = teacher_link(_join_base().url, me.code, me.secret)
    st.html(
        '<div class="lnlab-copy"><button type="button" id="lnlab-copy-teacher" '
        f'data-link="{html.escape(link)}">Copy the teacher link</button> '
        '<span id="lnlab-copy-status" role="status">To teach this class from another device: '
        "it is copied, never shown.</span></div>"
        '<script src="./lnlab-copy.js"></script>',  # lnlab/ui/assets/copy.js
        unsafe_allow_javascript=True,
    )


# ---------------------------------------------------------------- a question's slide


def present_from_first_question() -> None:
    """The lesson opened next shows in presenter mode, at its first slide with a question
    (lnlab.ui.lesson reads FIRST_QUESTION_KEY)."""
    st.session_state["present"] = True  # lnlab.ui.page.PRESENT_KEY (which imports this module)
    st.session_state[FIRST_QUESTION_KEY] = True


@dataclass(frozen=True)
class LiveSlide:
    """A question's slide while this session teaches: the question as the class gets it and
    where the class is with it (NOT_ASKED, ASKED, REVEALED); None stage: it has no options
    to tap."""

    question: LiveQuestion | None
    stage: str | None

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


def _teacher_does(me: TeacherLink, action: str, what: LiveQuestion | str) -> None:
    """Ask (action "pose", a LiveQuestion) or Reveal ("reveal", a qid): the store checks the
    secret. The whole page reruns after, so the slide shows the change."""
    try:
        getattr(default_store(), action)(me.code, me.secret, what)
    except InputError as err:  # an ended class, say
        st.session_state["_live_problem"] = err
        return
    st.session_state["_live_changed"] = True
    if action == "reveal":
        st.session_state["_live_show_answers"] = what
        land("live_panel", itself=True)  # the Reveal button goes: the focus stays on the panel


def _ask_row(me: TeacherLink, live: LiveQuestion) -> None:
    with st.container(horizontal=True, vertical_alignment="center", key="live_panel"):
        st.button(
            "Ask the class",
            key=f"live_ask_{live.qid}",
            icon=":material/campaign:",
            type="primary",
            on_click=_teacher_does,
            args=(me, "pose", live),
        )
        st.caption("The question and its options go to every student's device.")
    if err := st.session_state.pop("_live_problem", None):
        problem(err)


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
    if st.session_state.pop("_live_changed", False):
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
            on_click=_teacher_does,
            args=(me, "reveal", live.qid),
        )
    if err := st.session_state.pop("_live_problem", None):
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
        on_click=st.session_state.__setitem__,
        args=("_live_show_answers", live.qid),
    )
    if st.session_state.pop("_live_show_answers", None) == live.qid:
        _answers_dialog(live, tally)


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


# ---------------------------------------------------------------- the Class page, teacher


@following(TEACHER_POLL_S)
def class_question(me: TeacherLink) -> None:
    """The Class page's view of the question asked now: the count and Reveal, then, once
    revealed, the answers by group."""
    watch("teacher_class", me.code, COUNTS, PULSE_S)
    st.session_state.pop("_live_changed", None)  # this fragment shows the change itself
    st.session_state.pop("_live_show_answers", None)
    store = default_store()
    try:
        posed = store.current(me.code)
        tally = store.tally(me.code, me.secret, posed.question.qid) if posed else None
    except InputError as err:
        problem(err)
        return
    if posed is None or tally is None:
        st.caption("No question asked yet: present a lesson and press Ask the class.")
        return
    live = posed.question
    st.markdown(f"**{plain(live.prompt)}**")
    with st.container(horizontal=True, vertical_alignment="center", key="live_panel"):
        st.markdown(f"**{tally.answered} of {tally.joined}** answered")
        if not posed.revealed:
            st.button(
                "Reveal",
                key=f"live_reveal_{live.qid}",
                icon=":material/visibility:",
                on_click=_teacher_does,
                args=(me, "reveal", live.qid),
            )
        else:
            st.markdown(f"Revealed: **{plain(', '.join(right_options(live)))}**")
    if posed.revealed:
        st.plotly_chart(
            tally_bars(live.groups, tally.by_group),
            key="live_bars",
            config={"displayModeBar": False},
            alt=f"Answers by group: {tally_summary(live.groups, tally.by_group)}",
        )


def teacher_view() -> bool:
    """The Class page for the teacher, beside how to join: the lessons to present (the
    `lessons` callback draws them), End class; under it the question asked now, who joined,
    and the teacher link to copy. False when the class has ended."""
    me = teaching()
    try:
        info = default_store().check_teacher(me.code, me.secret)
    except StoreDown as err:
        problem(err)
        return False
    except ClassError as err:
        problem(err)
        _stop_teaching()
        st.button("Start a new class", key="live_restart", on_click=start_class)
        return False
    st.session_state["_live_info"] = info
    return True


def class_info_line() -> None:
    info = st.session_state.get("_live_info")
    if info is None:
        return
    until = datetime.fromtimestamp(info.closes_at)
    st.caption(
        f"{info.joined} joined. The class closes at {until:%H:%M} (server time) unless you "
        "ask or reveal before, or when you end it."
    )


def roster() -> None:
    """Who joined: the nicknames students typed, as plain text, look-alikes numbered apart."""
    me = teaching()
    info = st.session_state.get("_live_info")
    try:
        names = default_store().roster(me.code, me.secret)
    except InputError as err:
        problem(err)
        return
    joined = info.joined if info else len(names)
    anonymous = joined - len(names)
    shown = [html.escape(n) for n in shown_apart(names)]
    if anonymous:
        shown.append(f"{anonymous} without a nickname")
    st.html(
        f'<p class="lnlab-roster">{joined} joined'
        + (f": {', '.join(shown)}." if joined else ".")
        + "</p>"
    )


def counts_csv() -> str:
    """The taught class's answer counts as CSV ("" when the database does not answer)."""
    me = teaching()
    try:
        return default_store().counts_csv(me.code, me.secret)
    except InputError:
        return ""


# ---------------------------------------------------------------- the student


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
        st.session_state[STUDENT_KEY] = StudentLink(normalize_code(code), me)
        land("live_student", itself=True)  # the focus goes to the class's question
    except InputError as err:
        st.session_state["_live_join_problem"] = err


def _leave() -> None:
    """This device stops following the class (a student's answers stay in the class)."""
    st.session_state.pop(STUDENT_KEY, None)
    st.query_params.pop(JOIN, None)
    land("live_code")


@st.dialog("Leave the class?", on_dismiss=_close_dialog)
def _leave_dialog() -> None:
    st.markdown(
        "Your answers and score stay in the class: join again with the same code on this "
        "device to get them back."
    )
    if _confirmed("Leave", "live_leave_confirm", "Stay", "live_leave_cancel"):
        _leave()
        _close_dialog()
        st.rerun()


def leave_button() -> None:
    """Leave the class, after asking."""
    _asks_first("Leave the class", "live_leave", ":material/logout:", "leave", _leave_dialog)


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
    if err := st.session_state.pop("_live_join_problem", None):
        problem(err)


def _answer(me: StudentLink, qid: str, text: str) -> None:
    """An option's button: the answer goes to the store, the focus to what the device shows
    now (the buttons go)."""
    land("live_student", itself=True)
    try:
        stored = default_store().answer(me.code, me.me, qid, text)
    except StoreDown as err:
        st.session_state["_live_answer_problem"] = StoreDown(
            f"your answer was not stored: {err}. Tap it again"
        )
    except InputError as err:
        st.session_state["_live_answer_problem"] = err
    else:
        if not stored:
            st.session_state["_live_answer_problem"] = ClassError(
                "this question is no longer asked, or you answered it already; your first "
                "answer counts"
            )


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
        drew(asdict(CLOSED) if isinstance(err, ClassError) else UNKNOWN)
        problem(err)
        if isinstance(err, ClassError) and "has ended" in str(err):
            st.button("Back to the join form", key="live_after_end", on_click=_leave)
        return
    posed = now.posed
    qid = posed.question.qid if posed else None
    drew({"qid": qid, "revealed": bool(posed and posed.revealed), "open": True})
    with st.container(key="live_student"):
        if err := st.session_state.pop("_live_answer_problem", None):
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


def _question(me: StudentLink, live: LiveQuestion, revealed: bool, mine: str | None) -> None:
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
    return f"New question: {live.prompt}"
