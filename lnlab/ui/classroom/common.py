"""Who this session is in a live class, and what the class's other views share; every page.

Who this session is in a class lives in its ClassSession (lnlab.ui.state): `teacher` (a
TeacherLink) once it started a class or opened the teacher's link, `student` (a StudentLink
with the student's anonymous id) once it joined. The browser keeps both across reloads, tabs,
server restarts and a cluster's processes (lnlab.ui.claims): the teacher's class in a cookie,
and the browser's own random id, by which the class store finds its student again. The
address bar keeps only a student's `join=CODE` (as `present=1`), never a secret or a student's id.

Everyone sees what this module draws, on every page (lnlab.ui.page.page_setup): a link's
notice (take_link), the sidebar's Start a live class (sidebar_start). The teacher's, the
slide's and the student's views (teacher, slide, phone) share the rest: the class's
problem messages, starting a class, the dialogs that ask first, the teacher's Ask and Reveal.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

from lnlab.classroom.links import (
    JOIN,
    PARAMS,
    JoinBase,
    StudentLink,
    TeacherLink,
    join_base,
    network_addresses,
    public_url,
    read_link,
)
from lnlab.classroom.live import LiveQuestion
from lnlab.classroom.store import (
    CLASS_HOURS,
    ClassError,
    StoreDown,
    Teaching,
    default_store,
    display_code,
)
from lnlab.core.errors import InputError
from lnlab.teach.markdown import plain
from lnlab.ui import claims, state
from lnlab.ui.assist import land
from lnlab.ui.pulse import QUESTION, following, watch

# How often the teacher's fragments rerun on a timer to see what changed, where the browser
# cannot follow the class's pulse (lnlab.ui.pulse): the counts within about a second of a tap
# (a student's device: phone.STUDENT_POLL_S).
TEACHER_POLL_S = 1.0
WATCH_S = 1.0  # a teacher's page notices what their other devices did within this
# How often the browser reads the class's pulse (no script runs unless something changed).
PULSE_S = 0.5  # the teacher's devices: counts within half a second
ACTIVE_EVERY_S = 60.0  # a teacher's clicks keep the class open; the store hears at most this often
CLASS_PAGE = "pages/class.py"


@dataclass
class ClassSession:
    """Who this session is in a class, and what its pages remember of it (lnlab.ui.state)."""

    teacher: TeacherLink | None = None  # the class it teaches
    student: StudentLink | None = None  # the class it joined, as its browser's student
    link: str | None = None  # the class parameters of the URL followed last (_signature)
    claim_checked: bool = False  # the browser's teacher claim was looked at (_reclaim)
    seen: tuple[str, bool] | None = None  # the question asked now and revealed or not (_where)
    ended: str | None = None  # the code of the class that ended here: the Class page says so
    report: TeacherLink | None = None  # the class whose report the Class page shows (report)
    active_at: float = -1e9  # when (time.monotonic) the store last heard the teacher click
    start_problem: ClassError | None = None  # why the last Start a class started none
    dialog: str | None = None  # the dialog that asks first, open until answered (asks_first)
    switch: TeacherLink | None = None  # a teacher's link for another class: asked first


@dataclass
class TeacherPanel:
    """What the teacher's views hand on to the next run (lnlab.ui.state): the outcome of Ask
    and Reveal (teacher_does), the dialogs to open, the next lesson's first slide."""

    problem: InputError | None = None  # why the last Ask or Reveal failed: the panel says it
    changed: bool = False  # Ask or Reveal changed the class: the slide redraws
    show_answers: str | None = None  # the qid whose answers open in a dialog, once
    show_join: bool = False  # presenter mode's Show how to join opens its dialog, once
    first_question: bool = False  # the next lesson opens at its first question, once
    info: Teaching | None = None  # the class as the Class page last read it (teacher_view)
    ended_here: str | None = None  # the class presenter mode's End ended: it says so, once


def teaching() -> TeacherLink | None:
    """The class this session teaches, if any."""
    return state.of(ClassSession).teacher


def studying() -> StudentLink | None:
    """The class this session has joined as a student (with its id), if any."""
    return state.of(ClassSession).student


def url_params() -> dict[str, str]:
    """The query parameters every page keeps while this session is a student in a class."""
    me = studying()
    return {JOIN: me.code} if me else {}


@st.cache_data(ttl=60, show_spinner=False)
def _addresses() -> list[str]:
    return network_addresses()


def join_base_here() -> JoinBase:
    """Where phones reach the Class page (lnlab.classroom.links.join_base)."""
    return join_base(str(st.context.url or ""), public_url(), _addresses())


def data_html(data: str) -> str:
    """A question's data (LiveQuestion.data) as HTML: its parts (" · " apart) each kept on
    one line where the screen has room, so "x = (2, 4, 6, 8)" does not break on a phone."""
    parts = data.split(" · ")
    spans = " ".join(
        f"<span>{html.escape(part)}{' ·' if k < len(parts) - 1 else ''}</span>"
        for k, part in enumerate(parts)
    )
    return f'<p class="lnlab-live-data">{spans}</p>'


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
    here = state.of(ClassSession)
    if found and here.link != signature:
        here.link = signature
        _follow(found)
    ask_to_switch()
    if teaching() is None and not here.claim_checked:
        _reclaim()
    teacher_active()
    if (me := teaching()) is None:
        return
    try:
        here.seen = _where(me)
    except ClassError:  # ended on another of the teacher's devices, or closed by itself
        stop_teaching()
        here.ended = display_code(me.code)  # the Class page says so too, with the report
        here.report = me
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


def stop_teaching() -> None:
    """This session and its browser no longer teach a class (it ended)."""
    state.of(ClassSession).teacher = None
    claims.drop_teacher_claim()


@following(WATCH_S)
def _watch(me: TeacherLink) -> None:
    """Every page of the teacher's follows the class: when another of their devices asks or
    reveals, the page runs again; when the class has ended there, the whole page runs without
    it (take_link). After a server restart or a move to another process, its first tick runs
    the whole page (lnlab.ui.runtime.failover), which brings the teacher back."""
    watch("teacher_page", me.code, QUESTION, PULSE_S)
    try:
        now = _where(me)
    except ClassError:
        st.rerun(scope="app")
        return
    here = state.of(ClassSession)
    if now is not None and now != here.seen:
        here.seen = now
        st.rerun(scope="app")


def _follow(found: Mapping[str, object]) -> None:
    """Follow a link once; a good join link stays in the address bar (a reload keeps the
    code, or the student), anything else leaves it."""
    keep: set[str] = set()
    try:
        link = read_link(found)
        if isinstance(link, TeacherLink):
            _teacher_link(link)
        elif link is not None:
            _rejoin(link)
            keep = {JOIN}
    except InputError as err:
        st.warning(f"This class link does not work: {plain(str(err))}.", icon=":material/link_off:")
        st.session_state.pop("live_code", None)
    for name in found:
        if name not in keep:
            del st.query_params[name]
    state.of(ClassSession).link = _signature({k: found[k] for k in keep})


def _teacher_link(link: TeacherLink) -> None:
    """A teacher's link for another class than the open one this browser teaches waits for
    the teacher's yes (ask_to_switch): a link a student sends must not swap the projector's
    class behind the teacher's back (issue 38). Any other teacher's link is followed."""
    default_store().check_teacher(link.code, link.secret)
    held = claims.teacher_claim()
    if held is not None and held[0] != link.code and _open(TeacherLink(*held)):
        state.of(ClassSession).switch = link
        return
    _keep_claims(link)


def _open(link: TeacherLink) -> bool:
    """Whether the class of `link` is still open (a store that is down: assume so)."""
    try:
        default_store().check_teacher(link.code, link.secret)
    except StoreDown:
        return True
    except ClassError:
        return False
    return True


def ask_to_switch() -> None:
    """The question a teacher's link for another class asks, until answered: teach that
    class, or keep teaching this one. The class not chosen stays open, and its report is
    kept for this browser either way (claims.keep_report_claim)."""
    here = state.of(ClassSession)
    link, held = here.switch, claims.teacher_claim()
    if link is None:
        return
    if held is None or held[0] == link.code:
        here.switch = None
        _keep_claims(link)
        return
    new, old = display_code(link.code), display_code(held[0])
    st.warning(
        f"This link is a teacher's link for class {new}, but this browser teaches class {old}. "
        f"Teach {new} instead? Class {old} stays open either way.",
        icon=":material/swap_horiz:",
    )
    yes, no = st.columns(2)
    yes.button(f"Teach {new}", key="live_switch_yes", on_click=_switch, args=(True,))
    no.button(f"Keep teaching {old}", key="live_switch_no", on_click=_switch, args=(False,))


def _switch(yes: bool) -> None:
    here = state.of(ClassSession)
    link, here.switch = here.switch, None
    if yes and link is not None:
        take_over(link)


def take_over(link: TeacherLink) -> None:
    """This session teaches `link`'s class instead of the browser's until now, which stays open
    and whose claim the browser keeps, to come back to (teacher.other_classes)."""
    held = claims.teacher_claim()
    if held is not None and held[0] != link.code:
        _keep_report_claim(TeacherLink(*held))
    _keep_claims(link)
    state.of(ClassSession).active_at = ClassSession.active_at  # the new class hears at once


def _become_teacher(link: TeacherLink) -> None:
    default_store().check_teacher(link.code, link.secret)
    _keep_claims(link)


def _keep_claims(link: TeacherLink) -> None:
    """This session teaches the class, and its browser keeps the claims: to teach it, and to
    open its report once it has ended (as long as the report is kept) or teach it again."""
    here = state.of(ClassSession)
    if here.teacher != link:  # another class: its own joining toggle and pick, not the last's
        for key in ("live_joining", "live_remove_pick"):  # teacher._manage's
            st.session_state.pop(key, None)
    here.teacher = link
    claims.keep_teacher_claim(link.code, link.secret, CLASS_HOURS * 3600)
    _keep_report_claim(link)


def _keep_report_claim(link: TeacherLink) -> None:
    keep_s = default_store().keep_reports_s + CLASS_HOURS * 3600
    claims.keep_report_claim(link.code, link.secret, keep_s)


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
        state.of(ClassSession).student = StudentLink(link.code, mine)
        return
    store.check_code(link.code)  # a wrong or ended class: say so now
    st.session_state["live_code"] = display_code(link.code)


def _reclaim() -> None:
    """The browser's teacher claim (a cookie) brings the teacher back into their class."""
    claim = claims.teacher_claim()
    if claim is None:
        state.of(ClassSession).claim_checked = True
        return
    try:
        _become_teacher(TeacherLink(*claim))
    except StoreDown as err:  # tried again on the next run
        problem(err)
        return
    except ClassError as err:
        claims.drop_teacher_claim()
        st.info(f"Your class is over: {plain(str(err))}.", icon=":material/event_busy:")
    state.of(ClassSession).claim_checked = True


def teacher_active() -> None:
    """The teacher clicked (a page, a slide): the class stays open (at most one store write a
    minute)."""
    me = teaching()
    here = state.of(ClassSession)
    now = time.monotonic()
    if me is None or now - here.active_at < ACTIVE_EVERY_S:
        return
    here.active_at = now
    try:
        default_store().keep_open(me.code, me.secret)
    except StoreDown:
        here.active_at = ClassSession.active_at  # tried again on the next click
    except ClassError:
        pass  # the Class page and the panels say the class has ended


def keep_in_url() -> None:
    """A student's `join` in the address bar on every page (page switches drop the query
    string): a reload then finds the same student (by the browser)."""
    params = url_params()
    for name, value in params.items():
        st.query_params[name] = value
    if params:  # a visitor who has not joined may keep a join link's code (_follow)
        state.of(ClassSession).link = _signature(params)


def _signature(params: Mapping[str, object]) -> str:
    """The class parameters a URL had, as remembered in ClassSession.link (followed once)."""
    return repr(sorted(params.items()))


# ---------------------------------------------------------------- starting a class


def start_class() -> None:
    """Open a new class with this session as its teacher; a cap says what to do instead."""
    try:
        new = default_store().open_class(
            browser=claims.browser_id(), address=claims.client_address(), taught=claims.taught()
        )
    except ClassError as err:
        state.of(ClassSession).start_problem = err
        return
    here = state.of(ClassSession)
    _keep_claims(TeacherLink(new.code, new.teacher_secret))
    here.claim_checked = True
    here.report = None  # the new class's page, not the last one's report
    land("live_join_card", itself=True)  # the focus goes to how to join


def start_problem() -> None:
    """Why the last Start a class did not start one, if it did not."""
    if err := _start_problem():
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
    if err := _start_problem():
        st.sidebar.error(plain(str(err)[:1].upper() + str(err)[1:]) + ".")


def _start_problem() -> ClassError | None:
    """Why the last Start a class did not start one, once."""
    here = state.of(ClassSession)
    err, here.start_problem = here.start_problem, None
    return err


# ---------------------------------------------------------------- dialogs that ask first


def close_dialog() -> None:
    state.of(ClassSession).dialog = None


def _open_dialog(name: str) -> None:
    state.of(ClassSession).dialog = name


def asks_first(
    label: str, key: str, icon: str, name: str, dialog: Callable[..., None], *args: object
) -> None:
    """A button whose action a dialog confirms: it stays open until answered or closed."""
    st.button(
        label,
        key=key,
        icon=icon,
        on_click=_open_dialog,
        args=(name,),
    )
    if state.of(ClassSession).dialog == name:
        dialog(*args)


def confirmed(yes: str, yes_key: str, no: str, no_key: str) -> bool | None:
    """The dialog's two answers, side by side: True or False once pressed (the dialog then
    closes), None before."""
    left, right = st.columns(2)
    if left.button(yes, key=yes_key, type="primary", width="stretch"):
        return True
    if right.button(no, key=no_key, width="stretch"):
        close_dialog()
        st.rerun()
    return None


# ---------------------------------------------------------------- the teacher's Ask and Reveal


def teacher_does(me: TeacherLink, action: str, what: LiveQuestion | str) -> None:
    """Ask (action "pose", a LiveQuestion) or Reveal ("reveal", a qid): the store checks the
    secret. The whole page reruns after, so the slide shows the change."""
    panel = state.of(TeacherPanel)
    try:
        getattr(default_store(), action)(me.code, me.secret, what)
    except InputError as err:  # an ended class, say
        panel.problem = err
        return
    panel.changed = True
    if action == "reveal":
        panel.show_answers = what
        land("live_panel", itself=True)  # the Reveal button goes: the focus stays on the panel
