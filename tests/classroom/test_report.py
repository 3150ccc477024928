"""A class's report after End, each rule on SQLite and on PostgreSQL (`db_url` runs both):
its content, CSV and JSON, its keeping time, Delete, a store reopened, and a student's end."""

from __future__ import annotations

import csv
import io
import json

import pytest
import sqlalchemy as sa

from lnlab.classroom import store as store_module
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.report import CSV_COLUMNS, REPORT_DAYS_ENV, keep_days
from lnlab.classroom.store import IDLE_HOURS, ClassError, ClassStore
from lnlab.core.errors import InputError
from lnlab.teach.misconceptions import MISCONCEPTIONS

from .test_store import Clock, question

KEEP_S = 3 * 86400.0
PAD_AS_TOKENS = MISCONCEPTIONS["pad_as_tokens"].name


def second() -> LiveQuestion:
    return LiveQuestion(
        qid="q2",
        page="Padding",
        prompt="Which statistics does padding change?",
        options=(
            LiveOption("Batch Norm's", "right", "Yes: PAD rows join the batch's column."),
            LiveOption("Both", "pad_as_tokens", "Layer Norm's are a token's own."),
            LiveOption("Layer Norm's mean of a real token", "pad_as_tokens", "Its own only."),
        ),
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(db_url: str, clock: Clock):
    opened = ClassStore(db_url, clock=clock, keep_reports_s=KEEP_S)
    yield opened
    opened.close()


@pytest.fixture
def ended(store: ClassStore, clock: Clock):
    """A class of three (Ann, Bo, one without a nickname) that answered two questions and
    ended: (store, code, secret, {name: student id})."""
    new = store.open_class()
    code, secret = new.code, new.teacher_secret
    ids = {}
    for name in ("Ann", "Bo", ""):
        clock.now += 1  # the order they joined in
        ids[name] = store.join(code, nickname=name, browser=f"browser-{name or 'anon'}")
    store.pose(code, secret, question())
    for name, option in (("Ann", "5"), ("Bo", "4"), ("", "20")):
        assert store.answer(code, ids[name], "q1", option)
    store.reveal(code, secret, "q1")
    clock.now += 60
    store.pose(code, secret, second())
    for name, option in (("Ann", "Batch Norm's"), ("", "Both")):  # Bo does not answer
        assert store.answer(code, ids[name], "q2", option)
    store.end_class(code, secret)
    return store, code, secret, ids


def test_the_report_holds_each_question_and_each_student(ended, clock: Clock) -> None:
    store, code, secret, _ = ended
    report = store.report(code, secret)
    assert report.code == code and report.kept_until == report.ended_at + KEEP_S
    assert report.ended_at == clock.now
    assert report.names == ("Ann", "Bo", "Anonymous 1")
    assert [q.qid for q in report.questions] == ["q1", "q2"]
    first, padding = report.questions
    spread = report.spread(first)
    assert spread.by_option == {"5": 1, "4": 1, "20": 1, "I don't know": 0}
    assert spread.by_group == {
        "right": 1,
        "divide-by-d-minus-1": 1,
        "forgot-to-divide": 1,
        "other": 0,
    }
    assert (spread.answered, spread.right, spread.missing) == (3, 1, ())
    assert spread.percent_right == pytest.approx(100 / 3)
    spread = report.spread(padding)  # two options of one misconception stay apart
    assert spread.by_option == {
        "Batch Norm's": 1,
        "Both": 1,
        "Layer Norm's mean of a real token": 0,
    }
    assert spread.by_group == {"right": 1, "pad_as_tokens": 1}
    assert (spread.answered, spread.right, spread.missing) == (2, 1, ("Bo",))
    assert [report.score(s) for s in range(3)] == [2, 0, 0]
    assert report.scores() == {2: 1, 1: 0, 0: 2}
    assert report.mean_score() == pytest.approx(2 / 3)
    assert report.choice(1, padding) is None and report.choice(1, first).text == "4"


def test_the_report_as_csv_one_row_per_student_and_question(ended) -> None:
    store, code, secret, _ = ended
    rows = list(csv.DictReader(io.StringIO(store.report(code, secret).to_csv())))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 3 * 2
    seen = {(r["student"], r["question"]): r for r in rows}
    ann = seen["Ann", "1"]
    assert (ann["class"], ann["score"], ann["questions"], ann["qid"]) == (code, "2", "2", "q1")
    assert (ann["answer"], ann["option"], ann["group"], ann["right"]) == ("5", "1", "right", "1")
    assert ann["group_name"] == "Right" and ann["prompt"] == question().prompt
    bo = seen["Bo", "2"]  # no answer: empty, not right
    assert (bo["answer"], bo["option"], bo["group"], bo["right"], bo["score"]) == (
        "",
        "",
        "",
        "0",
        "0",
    )
    anon = seen["Anonymous 1", "2"]
    assert (anon["answer"], anon["option"], anon["group"]) == ("Both", "2", "pad_as_tokens")


def test_a_nickname_never_runs_as_a_spreadsheet_formula(store: ClassStore) -> None:
    new = store.open_class()
    live = LiveQuestion(
        "q", "p", "Which?", (LiveOption("-0.5", "right"), LiveOption("=1", "other"))
    )
    store.pose(new.code, new.teacher_secret, live)
    evil = store.join(new.code, nickname='=HYPERLINK("x")')
    store.answer(new.code, evil, "q", "-0.5")
    store.end_class(new.code, new.teacher_secret)
    (row,) = csv.DictReader(io.StringIO(store.report(new.code, new.teacher_secret).to_csv()))
    assert row["student"] == '\'=HYPERLINK("x")'
    assert row["answer"] == "-0.5"  # a number stays a number


def test_the_report_as_json(ended) -> None:
    store, code, secret, _ = ended
    data = json.loads(store.report(code, secret).to_json())
    assert data["class"] == code and data["ended"].endswith("Z")
    first, padding = data["questions"]
    assert first["answer"] == "5" and first["right"] == 1 and first["answered"] == 3
    assert [o["students"] for o in padding["options"]] == [1, 1, 0]
    assert [o["group_name"] for o in padding["options"]][1:] == [PAD_AS_TOKENS] * 2
    assert padding["not_answered"] == ["Bo"]
    ann, bo, anon = data["students"]
    assert (ann["name"], ann["score"], bo["score"], anon["name"]) == ("Ann", 2, 0, "Anonymous 1")
    assert [a["answer"] for a in bo["answers"]] == ["4", None]
    assert data["scores"]["distribution"] == [
        {"score": 2, "students": 1},
        {"score": 1, "students": 0},
        {"score": 0, "students": 2},
    ]


def test_only_the_classes_teacher_sees_or_deletes_its_report(ended, clock: Clock) -> None:
    store, code, secret, ids = ended
    for action in (store.report, store.delete_report):
        with pytest.raises(ClassError, match="only the teacher of this class"):
            action(code, "not-the-secret")
    assert store.reports([(code, "not-the-secret"), ("ABC", secret)]) == []
    (past,) = store.reports([(code, secret)])
    assert (past.code, past.students, past.questions) == (code, 3, 2)
    assert past.kept_until == past.ended_at + KEEP_S
    store.delete_report(code, secret)
    with pytest.raises(ClassError, match="there is no report"):
        store.report(code, secret)
    assert store.reports([(code, secret)]) == []
    for gone in (lambda: store.final(code, ids["Ann"]), lambda: store.check_code(code)):
        with pytest.raises(ClassError, match="there is no class"):  # the class went with it
            gone()
    clock.now += IDLE_HOURS * 3600
    store.open_class()  # a purge does not bring the report back
    assert store.reports([(code, secret)]) == []


def test_a_report_is_deleted_after_its_keeping_time(ended, db_url: str, clock: Clock) -> None:
    store, code, secret, _ = ended
    clock.now += KEEP_S - 1
    assert store.report(code, secret).names == ("Ann", "Bo", "Anonymous 1")
    clock.now += 1
    with pytest.raises(ClassError, match="its 3 days are over"):
        store.report(code, secret)
    store.close()
    ClassStore(db_url, clock=clock, keep_reports_s=KEEP_S).close()  # the store purges on open
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            for table in store_module.REPORT_TABLES + store_module.LIVE_TABLES:
                left = conn.execute(sa.select(sa.func.count()).select_from(table)).scalar()
                assert left == 0, table.name
    finally:
        engine.dispose()


def test_a_short_keeping_time_and_a_class_that_closed_by_itself(db_url: str, clock: Clock) -> None:
    """A class no teacher ended is reported once it has closed (idle); a keeping time shorter
    than the end screens' hour takes the class with its report."""
    store = ClassStore(db_url, clock=clock, keep_reports_s=120)
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, question())
        store.answer(new.code, store.join(new.code, nickname="Cy"), "q1", "5")
        clock.now += IDLE_HOURS * 3600  # closed for no teacher activity
        (past,) = store.reports([(new.code, new.teacher_secret)])
        assert past.ended_at == clock.now and past.students == 1
        assert store.report(new.code, new.teacher_secret).score(0) == 1
        clock.now += 120
        assert store.reports([(new.code, new.teacher_secret)]) == []
        with pytest.raises(ClassError, match="there is no class"):
            store.check_code(new.code)
    finally:
        store.close()


def test_the_report_survives_a_restart(ended, db_url: str, clock: Clock) -> None:
    store, code, secret, _ = ended
    before = store.report(code, secret)
    store.close()
    clock.now += store_module.ENDED_KEEP_S + 1  # the class itself is purged on open
    again = ClassStore(db_url, clock=clock, keep_reports_s=KEEP_S)
    try:
        assert again.report(code, secret) == before
        with pytest.raises(ClassError, match="there is no class"):
            again.check_code(code)
        assert again.open_class().code != code  # a report's code is not given out again
    finally:
        again.close()


def test_a_report_holds_nicknames_and_answers_nothing_else(ended, db_url: str) -> None:
    """No student id, browser, address or time: a student is their place in the class."""
    _, _, _, ids = ended
    engine = sa.create_engine(db_url)
    try:
        inspector = sa.inspect(engine)
        columns = {
            t: {c["name"] for c in inspector.get_columns(t)}
            for t in ("reports", "report_students", "report_questions", "report_answers")
        }
        assert columns["report_students"] == {"code", "seat", "nickname"}
        assert columns["report_answers"] == {"code", "seat", "qid", "option"}
        with engine.connect() as conn:
            stored = " ".join(
                str(row)
                for table in ("report_students", "report_answers")
                for row in conn.exec_driver_sql(f"SELECT * FROM {table}")
            )
        assert not any(student_id in stored for student_id in ids.values())
    finally:
        engine.dispose()


def test_a_students_final_screen(ended) -> None:
    store, code, _, ids = ended
    final = store.final(code, ids["Ann"])
    assert [q.qid for q in final.questions] == ["q1", "q2"]
    assert final.mine == {"q1": "5", "q2": "Batch Norm's"} and final.right == 2
    assert store.final(code, ids["Bo"]).mine == {"q1": "4"}
    assert store.final(code, "someone-else") is None
    new = store.open_class()  # while a class runs, nobody gets the answers
    me = store.join(new.code)
    with pytest.raises(ClassError, match="has not ended"):
        store.final(new.code, me)
    assert store.find_student(code, "browser-Ann") == ids["Ann"]  # a reload finds them


def test_the_keeping_time_comes_from_the_environment(monkeypatch, db_url: str) -> None:
    assert keep_days({}) == 30
    assert keep_days({REPORT_DAYS_ENV: " 0.5 "}) == 0.5
    for wrong in ("0", "-1", "nan", "thirty", "1e9"):
        with pytest.raises(InputError, match=REPORT_DAYS_ENV):
            keep_days({REPORT_DAYS_ENV: wrong})
    monkeypatch.setenv(REPORT_DAYS_ENV, "2")
    opened = ClassStore(db_url)
    try:
        assert opened.keep_reports_s == 2 * 86400
    finally:
        opened.close()
