"""The teacher's report of an ended class, and their past classes, on the Class page.

After End (or once the class has ended on another of their devices) the Class page shows the
class's report (lnlab.classroom.report): the class's scores; each question with its answer, the
share right, the spread over the options and over the misconceptions, and who did not answer;
each student's answers and score, folded away (the projector may be on); the report as CSV and
JSON; Close, and Delete (asked first). Under the join and start columns, the browser lists the
classes it taught whose reports are still kept (its report claims, lnlab.ui.claims); each
opens its report.
"""

from __future__ import annotations

import html
from datetime import datetime

import streamlit as st

from lnlab.classroom.links import TeacherLink
from lnlab.classroom.plots import tally_summary
from lnlab.classroom.report import Report, right_text
from lnlab.classroom.store import ClassError, StoreDown, default_store, display_code
from lnlab.core.errors import InputError
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import group_name
from lnlab.ui import claims, state
from lnlab.ui.assist import land
from lnlab.ui.classroom.common import ClassSession, asks_first, close_dialog, confirmed, problem

NO_ANSWER = "—"


def reading() -> TeacherLink | None:
    """The class whose report this session shows, if any."""
    return state.of(ClassSession).report


def _when(seconds: float) -> str:
    """A moment in server time: "09:47 on 3 May 2026"."""
    at = datetime.fromtimestamp(seconds)
    return f"{at:%H:%M} on {at.day} {at:%B %Y}"


def _day(seconds: float) -> str:
    at = datetime.fromtimestamp(seconds)
    return f"{at.day} {at:%B %Y}"


def _keep_days() -> float:
    return default_store().keep_reports_s / 86400


# ---------------------------------------------------------------- the teacher's past classes


def _open(link: TeacherLink) -> None:
    state.of(ClassSession).report = link
    land("live_report", itself=True)  # the report's top, wherever the page was scrolled


def past_classes() -> None:
    """The classes this browser taught whose reports are kept, newest first, each a button
    that opens its report (nothing when there are none)."""
    mine = claims.report_claims()
    if not mine:
        return
    try:
        found = default_store().reports(mine)
    except InputError as err:
        problem(err)
        return
    if not found:
        return
    secret = dict(mine)
    st.header("Your past classes")
    st.caption(
        f"The classes this browser taught. Their reports are kept {_keep_days():g} days after "
        "each class ends, then deleted."
    )
    for past in found:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.button(
                f"Report {display_code(past.code)}",
                key=f"live_report_{past.code}",
                icon=":material/summarize:",
                on_click=_open,
                args=(TeacherLink(past.code, secret[past.code]),),
            )
            st.caption(
                f"Ended {_when(past.ended_at)} · {past.students} students · "
                f"{past.questions} questions · kept until {_day(past.kept_until)}"
            )


# ---------------------------------------------------------------- the report


def _close() -> None:
    here = state.of(ClassSession)
    here.report, here.ended = None, None


@st.dialog("Delete this report?", on_dismiss=close_dialog)
def _delete_dialog(me: TeacherLink) -> None:
    st.markdown(
        f"The report of class **{display_code(me.code)}**, its questions, nicknames and "
        "answers, is deleted for good. Download it first to keep a copy."
    )
    if not confirmed("Delete", "live_report_delete_confirm", "Keep it", "live_report_keep"):
        return
    try:
        default_store().delete_report(me.code, me.secret)
    except StoreDown as err:
        problem(err)
        return
    except ClassError:
        pass  # deleted already, or its time was over
    claims.drop_report_claim(me.code, default_store().keep_reports_s)
    _close()
    close_dialog()
    st.rerun()


def report_view() -> None:
    """The report of the class this session shows (`reading`), with its downloads, Close
    and Delete."""
    me = reading()
    try:
        report = default_store().report(me.code, me.secret)
    except StoreDown as err:
        problem(err)
        return
    except ClassError as err:
        problem(err)
        st.button("Close", key="live_report_close", on_click=_close)
        return
    with st.container(key="live_report"):
        st.header(f"Report of class {display_code(report.code)}")
        st.caption(
            f"Opened {_when(report.opened_at)}, ended {_when(report.ended_at)} (server time). "
            f"{len(report.names)} students, {len(report.questions)} questions. Kept until "
            f"{_day(report.kept_until)}, then deleted: nicknames and answers, nothing else."
        )
        _actions(me, report)
        _scores(report)
        _questions(report)
        _students(report)


def _actions(me: TeacherLink, report: Report) -> None:
    with st.container(horizontal=True, vertical_alignment="center"):
        for label, data, ext, mime, icon in (
            ("Report (CSV)", report.to_csv(), "csv", "text/csv", "table_view"),
            ("Report (JSON)", report.to_json(), "json", "application/json", "data_object"),
        ):
            st.download_button(
                label,
                data,
                file_name=f"lnlab-report-{report.code}.{ext}",
                mime=mime,
                key=f"live_report_{ext}",
                icon=f":material/{icon}:",
                on_click="ignore",
            )
        st.button(
            "Close the report", key="live_report_close", icon=":material/close:", on_click=_close
        )
        asks_first(
            "Delete the report",
            "live_report_delete",
            ":material/delete:",
            "delete_report",
            _delete_dialog,
            me,
        )
    st.caption(
        "CSV: one row per student and question (the answer, its option's number, its group, "
        "right or not, the student's score). JSON: all of this report."
    )


def _table(rows: list[list[str | int]], columns: list[str], name: str) -> None:
    """A table in the app's style (lnlab.teach.tables'), in a region called `name`: each row
    headed by its first cell, text to the left, counts to the right, every cell escaped."""
    align = [
        "right" if rows and isinstance(rows[0][k], int) else "left" for k in range(len(columns))
    ]
    head = "".join(
        f'<th scope="col" style="text-align:{a}">{html.escape(c)}</th>'
        for c, a in zip(columns, align, strict=True)
    )
    body = "".join(
        f'<tr><th scope="row" class="label">{html.escape(str(row[0]))}</th>'
        + "".join(
            f'<td style="text-align:{a}">{html.escape(str(v))}</td>'
            for v, a in zip(row[1:], align[1:], strict=True)
        )
        + "</tr>"
        for row in rows
    )
    st.html(
        f'<div class="lnlab-table-wrap" role="region" aria-label="{html.escape(name)}">'
        f'<table class="lnlab-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
        "</table></div>"
    )


def _scores(report: Report) -> None:
    st.subheader("The class's scores")
    asked, mean = len(report.questions), report.mean_score()
    if mean is None or not asked:
        st.markdown("Nobody joined this class." if mean is None else "No question was asked.")
        return
    st.markdown(f"Mean score: **{mean:.1f} of {asked}** right ({100 * mean / asked:.0f} %).")
    rows: list[list[str | int]] = [[f"{s} of {asked}", n] for s, n in report.scores().items()]
    _table(rows, ["Score", "Students"], "The class's scores")


def _questions(report: Report) -> None:
    if not report.questions:
        return
    st.subheader("Each question")
    for k, question in enumerate(report.questions, 1):
        spread = report.spread(question)
        st.markdown(f"**{k}. {plain(question.prompt)}**")
        share = spread.percent_right
        right = (
            f"{spread.right} right ({share:.0f} % of the answers)"
            if share is not None
            else "nobody answered"
        )
        st.markdown(
            f"The answer: **{plain(right_text(question))}** · {spread.answered} of "
            f"{len(report.names)} answered · {right}"
        )
        rows: list[list[str | int]] = [
            [f"{n}. {o.text}", spread.by_option[o.text], group_name(o.group)]
            for n, o in enumerate(question.options, 1)
        ]
        _table(rows, ["Option", "Students", "Counts as"], f"Question {k}'s answers by option")
        missing = plain(", ".join(spread.missing))
        st.caption(
            f"By misconception: {tally_summary(question.groups, spread.by_group)} "
            + (f"Did not answer: {missing}." if missing else "Everyone answered.")
        )


def _students(report: Report) -> None:
    if not report.names:
        return
    asked = len(report.questions)
    with st.expander(f"Each student's answers and score ({len(report.names)} students)"):
        st.caption("Folded away, since the projector may be on. ✓ right, ✗ not, — no answer.")
        rows: list[list[str | int]] = []
        for student, name in enumerate(report.names):
            cells = [name, f"{report.score(student)} of {asked}"]
            for question in report.questions:
                option = report.choice(student, question)
                mark = "✓" if option and option.correct else "✗"
                cells.append(f"{mark} {option.text}" if option else NO_ANSWER)
            rows.append(cells)
        columns = ["Student", "Score", *(f"Q{k}" for k in range(1, asked + 1))]
        _table(rows, columns, "Each student's answers and score")
