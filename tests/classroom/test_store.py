"""The class store's rules, each on SQLite and on PostgreSQL (`db_url` runs both)."""

from __future__ import annotations

import csv
import io
import math
import multiprocessing
import threading
from collections import Counter

import db
import pytest
import server_process
import sqlalchemy as sa

from lnlab.classroom import store as store_module
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import (
    CLASS_HOURS,
    CODE_ALPHABET,
    CODE_LENGTH,
    MIGRATIONS,
    ClassError,
    ClassStore,
    Following,
    Limits,
    display_code,
    new_code,
    normalize_code,
)
from lnlab.core.errors import InputError

T0 = 1_800_000_000.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def question(qid: str = "q1") -> LiveQuestion:
    return LiveQuestion(
        qid=qid,
        page="Token",
        prompt="What is the mean of 2, 4, 6, 8?",
        options=(
            LiveOption("5", "right", "Yes: 20 / 4."),
            LiveOption("4", "divide-by-d-minus-1", "That divides by 5."),
            LiveOption("20", "forgot-to-divide", "That is the sum."),
            LiveOption("I don't know", "other"),
        ),
        explanation="The mean is the sum over the count.",
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(db_url: str, clock: Clock):
    opened = ClassStore(db_url, clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def posed(store: ClassStore):
    """A class with question q1 posed: (store, code, teacher secret)."""
    new = store.open_class()
    store.pose(new.code, new.teacher_secret, question())
    return store, new.code, new.teacher_secret


# --- codes -----------------------------------------------------------------------------------


def test_codes_are_short_unambiguous_and_carry_40_bits(store: ClassStore) -> None:
    assert CODE_LENGTH * math.log2(len(CODE_ALPHABET)) >= 40
    assert not set("01OILU") & set(CODE_ALPHABET)
    codes = [store.open_class().code for _ in range(10)]
    assert len(set(codes)) == 10
    for code in codes:
        assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)


def test_code_characters_are_uniform() -> None:
    """9,000 draws: each of the 30 characters 300 times on average; a chi-square test with
    29 degrees of freedom fails a fair generator with probability about 1e-6 (at 80)."""
    counts = Counter("".join(new_code() for _ in range(1000)))
    assert set(counts) == set(CODE_ALPHABET)
    expected = 9000 / len(CODE_ALPHABET)
    assert sum((n - expected) ** 2 / expected for n in counts.values()) < 80


def test_typed_codes_are_normalised(posed) -> None:
    store, code, _ = posed
    shown = display_code(code)
    assert shown.count("-") == 2
    for typed in (code, code.lower(), shown, f"  {shown.lower()} ", " ".join(code)):
        assert store.check_code(typed).code == code


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "type the class code"),
        ("ABC", "has 9 characters"),
        ("ABCDEFGHJK", "has 9 characters"),
        ("ABCDEFGH0", "no '0'"),
        ("<script>", "no '<'"),
        ("x" * 1000, "not a class code"),
    ],
)
def test_malformed_codes_get_a_clear_message(typed: str, message: str) -> None:
    with pytest.raises(ClassError, match=message):
        normalize_code(typed)


def test_unknown_code(store: ClassStore) -> None:
    with pytest.raises(ClassError, match="there is no class ABC-DEF-GHJ"):
        store.check_code("abc-def-ghj")
    assert issubclass(ClassError, InputError)


# --- the teacher's secret --------------------------------------------------------------------


def test_teacher_actions_need_the_secret(posed) -> None:
    store, code, secret = posed
    other = store.open_class()
    for wrong in ("", "guess", other.teacher_secret, secret + "x"):
        with pytest.raises(ClassError, match="only the teacher of this class can"):
            store.pose(code, wrong, question("q2"))
        with pytest.raises(ClassError, match="only the teacher"):
            store.tally(code, wrong, "q1")
        with pytest.raises(ClassError, match="only the teacher"):
            store.reveal(code, wrong, "q1")
        with pytest.raises(ClassError, match="only the teacher"):
            store.roster(code, wrong)
        with pytest.raises(ClassError, match="only the teacher"):
            store.counts_csv(code, wrong)
        with pytest.raises(ClassError, match="only the teacher"):
            store.end_class(code, wrong)
        with pytest.raises(ClassError, match="only the teacher"):
            store.check_teacher(code, wrong)
    store.check_teacher(code.lower(), secret)  # the right secret: no error
    assert store.current(code).question.qid == "q1"
    assert not store.current(code).revealed


# --- answers ---------------------------------------------------------------------------------


def test_a_student_answers_each_question_once(posed) -> None:
    store, code, secret = posed
    student = store.join(code)
    assert store.answer(code, student, "q1", "4") is True
    assert store.answer(code, student, "q1", "5") is False  # the first answer stands
    assert store.my_answer(code, student, "q1") == "4"
    tally = store.tally(code, secret, "q1")
    assert tally.joined == 1 and tally.answered == 1
    assert tally.by_group == {
        "right": 0,
        "divide-by-d-minus-1": 1,
        "forgot-to-divide": 0,
        "other": 0,
    }


def test_group_and_correctness_come_from_the_stored_question(posed) -> None:
    store, code, secret = posed
    student = store.join(code)
    with pytest.raises(ClassError, match="not one of this question's options"):
        store.answer(code, student, "q1", "right")
    with pytest.raises(ClassError, match="not one of"):
        store.answer(code, student, "q1", "5 ")
    assert store.tally(code, secret, "q1").answered == 0


def test_only_the_current_question_takes_answers(posed) -> None:
    store, code, secret = posed
    student = store.join(code)
    store.pose(code, secret, question("q2"))
    assert store.answer(code, student, "q1", "5") is False
    assert store.answer(code, student, "q2", "5") is True
    assert store.answer(code, student, "nope", "5") is False


def test_reposing_keeps_the_answers(posed) -> None:
    store, code, secret = posed
    student = store.join(code)
    assert store.answer(code, student, "q1", "5")
    store.pose(code, secret, question("q2"))
    store.pose(code, secret, question("q1"))
    assert store.tally(code, secret, "q1").by_group["right"] == 1
    assert store.answer(code, student, "q1", "4") is False


def test_unknown_students_cannot_answer(posed) -> None:
    store, code, _ = posed
    with pytest.raises(ClassError, match="join the class first"):
        store.answer(code, "made-up", "q1", "5")


def test_students_can_read_only_their_own_answer(posed) -> None:
    store, code, _ = posed
    ann, bob = store.join(code), store.join(code)
    assert store.answer(code, ann, "q1", "5")
    assert store.my_answer(code, bob, "q1") is None
    assert store.my_answer(code, "someone-else", "q1") is None
    # No student-facing method takes anything but the caller's own id, or returns others' data.
    student_api = {"check_code", "join", "current", "answer", "my_answer", "score", "follow"}
    teacher_api = {"pose", "reveal", "tally", "roster", "counts_csv", "end_class"}
    teacher_api |= {"check_teacher"}
    public = {name for name in vars(ClassStore) if not name.startswith("_")}
    assert public == student_api | teacher_api | {
        "open_class",
        "migrate",
        "schema_version",
        "close",
    }


def test_score_counts_revealed_questions_and_survives_a_reload(posed) -> None:
    store, code, secret = posed
    student = store.join(code, nickname="Ann")
    store.answer(code, student, "q1", "5")
    assert store.score(code, student) == (0, 0)  # not revealed yet: no hint
    store.reveal(code, secret, "q1")
    assert store.current(code).revealed
    assert store.score(code, student) == (1, 1)
    store.pose(code, secret, question("q2"))
    store.answer(code, student, "q2", "20")
    store.reveal(code, secret, "q2")
    assert store.join(code, student) == student  # a reload keeps the id, so the score
    assert store.score(code, student) == (1, 2)
    assert store.join(code, "forged-or-stale") != "forged-or-stale"


def test_follow_is_current_my_answer_and_score_at_once(store: ClassStore) -> None:
    new = store.open_class()
    code, secret = new.code, new.teacher_secret
    ann, bob = store.join(code), store.join(code)
    assert store.follow(code, ann) == Following(None, None, 0, 0)  # before the first question
    store.pose(code, secret, question("q1"))
    store.answer(code, ann, "q1", "5")
    for when in ("answered", "revealed"):
        for student in (ann, bob):
            mine, score = store.my_answer(code, student, "q1"), store.score(code, student)
            expected = Following(store.current(code), mine, *score)
            assert store.follow(code, student) == expected, (when, student)
        store.reveal(code, secret, "q1")
    assert store.follow(code, ann) == Following(store.current(code), "5", 1, 1)
    assert store.follow(code, bob).mine is None


X = object()  # where a hostile value goes in a call
HOSTILE = (None, 7, ["q1"], "", "\x00", "q1\x00", "x" * 100_000, "'; DROP TABLE answers; --")


def test_anything_a_student_sends_gets_a_message_or_nothing(posed) -> None:
    """Every value a browser could send, in every argument a student controls: a ClassError,
    False or None, never another exception, and nothing counted."""
    store, code, secret = posed
    student = store.join(code)
    calls = [
        ("check_code", (X,)),
        ("join", (X,)),
        ("join", (code, X)),
        ("join", (code, None, X)),
        ("answer", (X, student, "q1", "5")),
        ("answer", (code, X, "q1", "5")),
        ("answer", (code, student, X, "5")),
        ("answer", (code, student, "q1", X)),
        ("my_answer", (code, X, "q1")),
        ("my_answer", (code, student, X)),
        ("score", (code, X)),
        ("follow", (X, student)),
        ("follow", (code, X)),
        ("tally", (code, secret, X)),
        ("reveal", (code, X, "q1")),
    ]
    for bad in HOSTILE:
        for method, args in calls:
            try:
                result = getattr(store, method)(*(bad if a is X else a for a in args))
            except ClassError:
                continue
            if isinstance(result, Following):  # a stranger follows with nothing of their own
                result = (result.mine, result.right, result.answered)
                assert result == (None, 0, 0), (method, bad)
                continue
            assert result in (False, None, (0, 0)) or isinstance(result, str), (method, bad)
    assert store.tally(code, secret, "q1").answered == 0
    assert store.answer(code, student, "q1", "5")


# --- students and nicknames ------------------------------------------------------------------


def test_nicknames_are_checked_and_shown_only_to_the_teacher(posed, clock: Clock) -> None:
    store, code, secret = posed
    for nickname in ("  <b>Ann</b>  ", "", "Bob"):
        store.join(code, nickname=nickname)
        clock.now += 1
    assert store.roster(code, secret) == ["<b>Ann</b>", "Bob"]  # stored as typed, never parsed
    with pytest.raises(ClassError, match="at most 20 characters"):
        store.join(code, nickname="x" * 21)
    with pytest.raises(ClassError, match="line breaks"):
        store.join(code, nickname="a\nb")
    assert store.check_code(code).students == 3


def test_a_new_nickname_replaces_the_old(posed) -> None:
    store, code, secret = posed
    ann = store.join(code, nickname="Ann")
    assert store.join(code, ann, nickname="Annie") == ann
    assert store.join(code, ann) == ann
    assert store.roster(code, secret) == ["Annie"]


# --- caps ------------------------------------------------------------------------------------


def test_caps(db_url: str, clock: Clock) -> None:
    store = ClassStore(db_url, clock=clock, limits=Limits(classes=2, students=2, questions=2))
    try:
        new = store.open_class()
        store.open_class()
        with pytest.raises(ClassError, match="already runs 2 classes, its limit"):
            store.open_class()
        code, secret = new.code, new.teacher_secret
        store.pose(code, secret, question("q1"))
        store.pose(code, secret, question("q2"))
        store.pose(code, secret, question("q1"))  # re-posing is not a new question
        with pytest.raises(ClassError, match="has had 2 questions, its limit"):
            store.pose(code, secret, question("q3"))
        ann = store.join(code)
        store.join(code)
        with pytest.raises(ClassError, match="is full"):
            store.join(code)
        assert store.join(code, ann) == ann  # a known student still gets back in
        store.end_class(code, secret)
        store.open_class()  # the ended class's slot is free again
    finally:
        store.close()


def at_once(action, times: int) -> list[object]:
    """Run `action` on `times` threads released together; each result or ClassError."""
    barrier = threading.Barrier(times)
    results: list[object] = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(action())
        except ClassError as error:
            results.append(error)

    threads = [threading.Thread(target=run) for _ in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_caps_hold_when_everyone_arrives_at_once(db_url: str, clock: Clock) -> None:
    store = ClassStore(db_url, clock=clock, limits=Limits(classes=4, students=5))
    try:
        opened = at_once(store.open_class, 12)
        assert sum(not isinstance(r, ClassError) for r in opened) == 4
        code = next(r.code for r in opened if not isinstance(r, ClassError))
        joined = at_once(lambda: store.join(code), 12)
        assert sum(isinstance(r, str) for r in joined) == 5
        assert store.check_code(code).students == 5
    finally:
        store.close()


def test_answers_per_student_cap(db_url: str, clock: Clock) -> None:
    store = ClassStore(db_url, clock=clock, limits=Limits(answers=2))
    try:
        new = store.open_class()
        student = store.join(new.code)
        for qid in ("q1", "q2"):
            store.pose(new.code, new.teacher_secret, question(qid))
            assert store.answer(new.code, student, qid, "5")
        store.pose(new.code, new.teacher_secret, question("q3"))
        with pytest.raises(ClassError, match="given 2 answers, the limit"):
            store.answer(new.code, student, "q3", "5")
    finally:
        store.close()


# --- expiry and restarts ---------------------------------------------------------------------


def test_classes_expire_and_are_purged(posed, clock: Clock) -> None:
    store, code, secret = posed
    student = store.join(code)
    assert store.check_code(code).expires_at == clock.now + CLASS_HOURS * 3600
    clock.now += CLASS_HOURS * 3600 - 1
    assert store.answer(code, student, "q1", "5")
    clock.now += 1
    for action in (
        lambda: store.check_code(code),
        lambda: store.join(code),
        lambda: store.answer(code, student, "q1", "4"),
        lambda: store.tally(code, secret, "q1"),
        lambda: store.score(code, student),
    ):
        with pytest.raises(ClassError, match="has ended"):
            action()
    store.open_class()  # purges lazily
    with pytest.raises(ClassError, match="there is no class"):
        store.check_code(code)


def test_a_restart_loses_no_class(posed, db_url: str, clock: Clock) -> None:
    store, code, secret = posed
    student = store.join(code, nickname="Ann")
    store.answer(code, student, "q1", "5")
    store.close()
    again = ClassStore(db_url, clock=clock)
    try:
        assert again.current(code).question == question()
        assert again.tally(code, secret, "q1").by_group["right"] == 1
        assert again.my_answer(code, student, "q1") == "5"
        assert again.roster(code, secret) == ["Ann"]
    finally:
        again.close()


# --- schema ----------------------------------------------------------------------------------


def test_schema_is_migrated_once(store: ClassStore, db_url: str) -> None:
    assert store.schema_version() == len(MIGRATIONS)
    assert store.migrate() == len(MIGRATIONS)  # nothing left to run
    barrier = threading.Barrier(4)
    found: list[int] = []

    def open_store() -> None:
        barrier.wait()
        other = ClassStore(db_url)
        found.append(other.schema_version())
        other.close()

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [len(MIGRATIONS)] * 4


def test_the_query_tables_match_the_migrated_schema(store: ClassStore, db_url: str) -> None:
    """The migrations are the schema's history; the Table objects the queries use must name
    the same columns, with the same primary keys."""
    engine = sa.create_engine(db_url)
    try:
        inspector = sa.inspect(engine)
        for table in store_module.metadata.sorted_tables:
            columns = [column["name"] for column in inspector.get_columns(table.name)]
            assert columns == [column.name for column in table.columns]
            primary = inspector.get_pk_constraint(table.name)["constrained_columns"]
            assert primary == [column.name for column in table.primary_key]
    finally:
        engine.dispose()


def test_a_new_migration_runs_once_on_an_existing_database(posed) -> None:
    store, code, _ = posed
    later = (*MIGRATIONS, ("CREATE TABLE later (n INTEGER)", "INSERT INTO later VALUES (1)"))
    assert store.migrate(later) == len(MIGRATIONS)
    assert store.migrate(later) == len(later)
    assert store.schema_version() == len(later)
    assert store.check_code(code).code == code  # the class is still there
    with pytest.raises(RuntimeError, match="newer than this code"):
        store.migrate()


def test_default_store_is_one_per_process(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(store_module.URL_ENV, f"sqlite:///{tmp_path / 'app.db'}")
    monkeypatch.setattr(store_module, "_default", None)
    stores = []
    threads = [
        threading.Thread(target=lambda: stores.append(store_module.default_store()))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(s) for s in stores}) == 1
    assert stores[0].url.endswith("app.db")
    stores[0].close()


def test_default_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(store_module.URL_ENV, raising=False)
    assert store_module.database_url().endswith(".lnlab-data/classes.db")
    monkeypatch.setenv(store_module.URL_ENV, "postgresql://u@h/db")
    assert store_module.database_url() == "postgresql+psycopg://u@h/db"
    with pytest.raises(InputError, match="not memory"):
        store_module.database_url("sqlite://")


# --- the CSV and the question's JSON ---------------------------------------------------------


def test_counts_csv(posed) -> None:
    store, code, secret = posed
    for option in ("5", "5", "20"):
        store.answer(code, store.join(code), "q1", option)
    rows = list(csv.reader(io.StringIO(store.counts_csv(code, secret))))
    assert rows[0] == ["question", "prompt", "group", "answer", "count"]
    counts = {row[2]: int(row[4]) for row in rows[1:]}
    assert {row[2]: row[3] for row in rows[1:]}["right"] == "Right"
    assert counts == {"right": 2, "divide-by-d-minus-1": 0, "forgot-to-divide": 1, "other": 0}
    assert {row[1] for row in rows[1:]} == {question().prompt}


def test_live_question_json_round_trip() -> None:
    q = question()
    assert LiveQuestion.from_json(q.to_json()) == q
    assert q.option("5").correct and not q.option("20").correct
    with pytest.raises(InputError, match="2 to 12 options"):
        LiveQuestion("q", "p", "prompt?", (LiveOption("a", "right"),))
    with pytest.raises(InputError, match="must differ"):
        LiveQuestion("q", "p", "prompt?", (LiveOption("a", "right"), LiveOption("a", "other")))


# --- many students at once -------------------------------------------------------------------


def test_sixty_students_answering_in_the_same_second(posed) -> None:
    store, code, secret = posed
    options = [o.text for o in question().options]
    ids = [store.join(code) for _ in range(60)]
    chosen = {sid: options[i % len(options)] for i, sid in enumerate(ids)}
    barrier = threading.Barrier(60)
    results: dict[str, list[bool]] = {}

    def student(sid: str) -> None:
        barrier.wait()
        # Each student double-clicks: the second answer must not count.
        results[sid] = [store.answer(code, sid, "q1", chosen[sid]) for _ in range(2)]

    threads = [threading.Thread(target=student, args=(sid,)) for sid in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results[sid] == [True, False] for sid in ids)
    tally = store.tally(code, secret, "q1")
    groups = {o.text: o.group for o in question().options}
    assert tally.answered == 60
    assert tally.by_group == Counter(groups[chosen[sid]] for sid in ids)


def test_sixty_students_on_two_server_processes(posed, db_url: str, tmp_path) -> None:
    """Two processes share the database (as two servers would): they migrate a fresh one at the
    same moment, then 60 students, 30 per process, answer in the same second."""
    store, code, secret = posed
    fresh_url = (
        f"sqlite:///{tmp_path / 'fresh.db'}"
        if db_url.startswith("sqlite")
        else db.schema_url(db_url.split("?")[0])
    )
    options = [o.text for o in question().options]
    ids = [store.join(code) for _ in range(60)]
    chosen = {sid: options[i % len(options)] for i, sid in enumerate(ids)}
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(2), context.Queue()
    processes = [
        context.Process(
            target=server_process.answer,
            args=(db_url, fresh_url, code, "q1", dict(ids_part), start, results),
        )
        for ids_part in (list(chosen.items())[i::2] for i in range(2))
    ]
    try:
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=120) for _ in processes]
    finally:  # a process that failed leaves the other at the barrier: never wait for it
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert [version for version, _ in outcomes] == [len(MIGRATIONS)] * 2
    answered = {sid: result for _, part in outcomes for sid, result in part.items()}
    assert answered == {sid: [True, False] for sid in ids}
    groups = {o.text: o.group for o in question().options}
    tally = store.tally(code, secret, "q1")
    assert tally.answered == 60
    assert tally.by_group == Counter(groups[chosen[sid]] for sid in ids)
