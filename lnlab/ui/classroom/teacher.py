"""The teacher's Class page: how to join, the class's question, who joined, End class.

Only the teacher sees it (pages/class.py, while this session teaches): the join card (code,
link, QR code; also in presenter mode's Show how to join, lnlab.ui.classroom.slide), the
class's info line, End class and its dialog (then the class's report: lnlab.ui.classroom.report),
the question asked now with its count, Reveal and the class's answers by option (also on the
slide), the roster, the answer counts as CSV, the teacher link to copy, the other open
classes this browser teaches (also under Start a class), and Present, which opens a lesson at
its first question. End class also stands in presenter mode's
Class menu (lnlab.ui.classroom.slide), and the home page tells the teacher's browser that its
class is running, with the way back (running_class).
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import streamlit as st

from lnlab.classroom.asking import right_options
from lnlab.classroom.links import (
    JoinBase,
    TeacherLink,
    is_loopback,
    join_link,
    qr_image,
    teacher_link,
)
from lnlab.classroom.live import LiveQuestion
from lnlab.classroom.nicknames import shown_apart
from lnlab.classroom.plots import option_bars, option_summary, tally_summary
from lnlab.classroom.store import (
    CLASS_JOIN_WINDOW_S,
    ClassError,
    StoreDown,
    Tally,
    Teaching,
    default_store,
    display_code,
)
from lnlab.core.errors import InputError
from lnlab.teach.markdown import plain
from lnlab.ui import claims, state
from lnlab.ui.assist import land
from lnlab.ui.classroom.common import (
    CLASS_PAGE,
    PULSE_S,
    TEACHER_POLL_S,
    ClassSession,
    TeacherPanel,
    asks_first,
    close_dialog,
    confirmed,
    join_base_here,
    problem,
    start_class,
    stop_teaching,
    take_over,
    teacher_does,
    teaching,
)
from lnlab.ui.pulse import COUNTS, following, watch
from lnlab.ui.server.shell import asset_url

# ---------------------------------------------------------------- ending the class


@st.dialog("End the class for everyone?", on_dismiss=close_dialog)
def _end_dialog(me: TeacherLink, on_slide: bool = False) -> None:
    """End, confirmed: on the Class page its report follows; on a slide (presenter mode's
    Class menu) the slide stays, without the class, and a link to the report (never on the
    projector by itself: it names each student's answers)."""
    days = default_store().keep_reports_s / 86400
    st.markdown(
        f"Class **{display_code(me.code)}** ends on every device: each student sees their "
        f"final score and answers. You get the class's report, kept {days:g} days."
    )
    if not confirmed("End class", "live_end_confirm", "Keep it running", "live_end_cancel"):
        return
    try:
        default_store().end_class(me.code, me.secret)
    except StoreDown as err:
        problem(err)
        return
    except ClassError:
        pass  # ended already
    stop_teaching()
    here = state.of(ClassSession)
    here.ended, here.report = display_code(me.code), me
    if on_slide:
        state.of(TeacherPanel).ended_here = display_code(me.code)
    else:
        land("live_report", itself=True)  # the report's top (End was further down)
    close_dialog()
    st.rerun()


def end_button(on_slide: bool = False) -> None:
    """End class, for everyone, after a confirmation; `on_slide`: in presenter mode's Class
    menu (a key and a dialog of its own: the Class page may show both)."""
    if (me := teaching()) is not None:
        key, name = ("live_end_present", "end_present") if on_slide else ("live_end", "end")
        asks_first("End class", key, ":material/stop_circle:", name, _end_dialog, me, on_slide)


def running_class() -> None:
    """For the browser that teaches a class (its claim, lnlab.ui.claims), on the home page:
    the class is running, how many joined, and the way back to its Class page."""
    me = teaching()
    if me is None:
        return
    try:
        pulse = default_store().pulse(me.code)
    except InputError:
        pulse = None
    if pulse is not None and not pulse.open:
        return  # ended: the next page's run lets the claim go (common.take_link)
    joined = f" · {pulse.joined} joined" if pulse is not None else ""
    with st.container(
        border=True, horizontal=True, vertical_alignment="center", key="live_running"
    ):
        st.markdown(f":material/groups: Your class **{display_code(me.code)}** is running{joined}")
        st.page_link(CLASS_PAGE, label="Back to your class", icon=":material/arrow_forward:")


def ended_notice() -> None:
    here = state.of(ClassSession)
    code, here.ended = here.ended, None
    if code:
        st.success(f"Class {code} has ended.", icon=":material/check:")


# ---------------------------------------------------------------- how to join


def join_card(code: str) -> None:
    """The join code, big; the join link to type; the QR code to scan from the back; and,
    when the teacher's own address is this machine's loopback, what phones use instead."""
    base = join_base_here()
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


# ---------------------------------------------------------------- the teacher's other devices


def teacher_link_copy() -> None:
    """Copy the teacher link to the clipboard, to open the class on another device; it is not
    shown, so the projector never shows it."""
    me = teaching()
    if me is None:
        return
    link = teacher_link(join_base_here().url, me.code, me.secret)
    st.html(
        '<div class="lnlab-copy"><button type="button" id="lnlab-copy-teacher" '
        f'data-link="{html.escape(link)}">Copy the teacher link</button> '
        '<span id="lnlab-copy-status" role="status">To teach this class from another device: '
        "it is copied, never shown.</span></div>"
        f'<script src="{asset_url("lnlab-copy.js")}"></script>',  # lnlab/ui/assets/copy.js
        unsafe_allow_javascript=True,
    )


def present_from_first_question() -> None:
    """The lesson opened next shows in presenter mode, at its first slide with a question
    (the lesson's hooks read TeacherPanel.first_question: slide.LessonHooks.first_question)."""
    st.session_state["present"] = True  # lnlab.ui.page.PRESENT_KEY (which imports this package)
    state.of(TeacherPanel).first_question = True


# ---------------------------------------------------------------- the teacher's other classes


@dataclass
class OtherClasses:
    """What the list of the teacher's other classes hands on to the next run (lnlab.ui.state)."""

    problem: ClassError | None = None  # why the last Teach <code> did not (teach_other)


def teach_other(link: TeacherLink) -> None:
    """A Teach button: checked with the store first, since the class may have ended since the
    list was drawn."""
    try:
        default_store().check_teacher(link.code, link.secret)
    except ClassError as err:  # ended, or the database is down: the list says why
        state.of(OtherClasses).problem = err
        return
    take_over(link)
    state.of(ClassSession).report = None  # the class's page, not a report that was open


def other_classes(subheading: bool = False) -> None:
    """The other open classes this browser teaches (two sections from one laptop, or the class
    left for a teacher's link), each with its Teach button: the browser keeps their claims
    (lnlab.ui.claims, at most MAX_REPORT_CLAIMS), each checked with the store, since a class
    may have ended or a claim be wrong. Nothing when there are none; never a secret."""
    others = state.of(OtherClasses)
    if err := others.problem:
        others.problem = None
        problem(err)
    seen = {me.code} if (me := teaching()) else set()
    found: list[tuple[TeacherLink, Teaching]] = []
    for code, secret in claims.taught():  # the newest first
        if code in seen:
            continue
        try:
            found.append((TeacherLink(code, secret), default_store().check_teacher(code, secret)))
        except StoreDown:
            return  # the page says so where it needs the database
        except ClassError:
            continue  # ended, or not this class's secret (another claim of it may be right)
        seen.add(code)
    if not found:
        return
    (st.subheader if subheading else st.header)("Your other open classes")
    st.caption(
        "Classes this browser also teaches, still open. Teach one to show it here; the others "
        "stay open and stay listed."
    )
    for link, info in found:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.button(
                f"Teach {display_code(link.code)}",
                key=f"live_teach_{link.code}",
                icon=":material/swap_horiz:",
                on_click=teach_other,
                args=(link,),
            )
            st.caption(
                f"{info.joined} joined · open until {datetime.fromtimestamp(info.closes_at):%H:%M}"
            )


# ---------------------------------------------------------------- the class now


@following(TEACHER_POLL_S)
def class_question(me: TeacherLink) -> None:
    """The Class page's view of the question asked now: the count and Reveal, then, once
    revealed, the answers by group."""
    watch("teacher_class", me.code, COUNTS, PULSE_S)
    panel = state.of(TeacherPanel)
    panel.changed = False  # this fragment shows the change itself
    panel.show_answers = None
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
    if live.data:
        st.caption(plain(live.data))  # the numbers it is about, as the phones show them
    with st.container(horizontal=True, vertical_alignment="center", key="live_panel"):
        st.markdown(f"**{tally.answered} of {tally.joined}** answered")
        if not posed.revealed:
            st.button(
                "Reveal",
                key=f"live_reveal_{live.qid}",
                icon=":material/visibility:",
                on_click=teacher_does,
                args=(me, "reveal", live.qid),
            )
        else:
            st.markdown(f"Revealed: **{plain(', '.join(right_options(live)))}**")
    if posed.revealed:
        answers_chart(live, tally)


def answers_chart(live: LiveQuestion, tally: Tally) -> None:
    """The class's answers after Reveal: a bar per option (its number, text and group), and
    the counts by group (right, each misconception) under it."""
    st.plotly_chart(
        option_bars(live, tally.by_option),
        key="live_bars",
        config={"displayModeBar": False},
        alt=f"Answers by option: {option_summary(live, tally.by_option)}",
    )
    st.caption(f"By misconception: {tally_summary(live.groups, tally.by_group)}")


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
        stop_teaching()
        st.button("Start a new class", key="live_restart", on_click=start_class)
        return False
    state.of(TeacherPanel).info = info
    return True


def class_info_line() -> None:
    info = state.of(TeacherPanel).info
    if info is None:
        return
    until = datetime.fromtimestamp(info.closes_at)
    st.caption(
        f"{info.joined} joined · open until {until:%H:%M}",
        help=f"{until:%H:%M} server time. Asking or revealing keeps the class open longer; "
        "End class closes it now.",
    )


def roster() -> None:
    """Who joined: the nicknames students typed, as plain text, look-alikes numbered apart."""
    me = teaching()
    info = state.of(TeacherPanel).info
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
    _manage(me, info.joining if info else True)


def _manage(me: TeacherLink, joining: bool) -> None:
    """Close joining, and take students out (120 fakes from one network filled a class,
    issue 38): by their nicknames, numbered apart, or their place for those without one,
    each with the time they joined (server time, to the second: fakes come in bursts)."""
    with st.expander("Manage who joined"):
        st.toggle(
            "New students may join",
            value=joining,
            key="live_joining",
            on_change=_set_joining,
            args=(me,),
            help="Closed: nobody new can join; those who joined can still come back.",
        )
        try:
            seats = default_store().seats(me.code, me.secret)
        except InputError as err:
            problem(err)
            return
        if seats:  # "the last minute" is the class's join rate's (Limits.joins_per_class)
            lately = sum(seat.joined_at > time.time() - CLASS_JOIN_WINDOW_S for seat in seats)
            last = datetime.fromtimestamp(seats[-1].joined_at)
            st.caption(f"The last joined at {last:%H:%M:%S}; {lately} in the last minute.")
        names = shown_apart(
            [seat.nickname or f"student {k + 1} (no nickname)" for k, seat in enumerate(seats)]
        )
        labels = [
            f"{name} · joined {datetime.fromtimestamp(seat.joined_at):%H:%M:%S}"
            for name, seat in zip(names, seats, strict=True)
        ]
        picked = st.multiselect(
            "Students to remove",
            labels,
            key="live_remove_pick",
            help="Each with the time they joined (server time).",
        )
        handles = [
            seat.handle for seat, label in zip(seats, labels, strict=True) if label in picked
        ]
        st.button(
            "Remove them",
            key="live_remove",
            disabled=not picked,
            on_click=_remove,
            args=(me, handles),
        )


def _remove(me: TeacherLink, handles: list[str]) -> None:
    """Take the picked students out, then clear the pick (a callback: before the widgets)."""
    try:
        for handle in handles:
            default_store().remove_student(me.code, me.secret, handle)
    except InputError as err:
        state.of(TeacherPanel).problem = err
    st.session_state.pop("live_remove_pick", None)


def _set_joining(me: TeacherLink) -> None:
    try:
        default_store().set_joining(me.code, me.secret, bool(st.session_state.live_joining))
    except InputError as err:
        state.of(TeacherPanel).problem = err


def counts_csv() -> str:
    """The taught class's answer counts as CSV ("" when the database does not answer)."""
    me = teaching()
    try:
        return default_store().counts_csv(me.code, me.secret)
    except InputError:
        return ""
