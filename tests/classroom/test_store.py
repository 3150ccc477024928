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
    CLOSED,
    CODE_ALPHABET,
    CODE_LENGTH,
    IDLE_HOURS,
    MIGRATIONS,
    ClassError,
    ClassStore,
    Following,
    Limits,
    Pulse,
    StoreDown,
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
    student_api |= {"pulse"}  # counts only, as the projector shows them: no one's answer
    teacher_api = {"pose", "reveal", "tally", "roster", "counts_csv", "end_class"}
    teacher_api |= {"check_teacher", "keep_open"}
    student_api |= {"find_student", "final"}  # final: one's own answers, once closed
    student_api |= {"board"}  # the question asked: lnlab.ui.server.pulse sends a phone its
    # right answer and feedback only once revealed (tests/ui/test_phone_route.py)
    teacher_api |= {"reports", "report", "delete_report"}  # each needs the class's secret
    teacher_api |= {"set_joining", "seats", "remove_student"}  # seats: handles, not ids
    public = {name for name in vars(ClassStore) if not name.startswith("_")}
    assert public == student_api | teacher_api | {
        "open_class",
        "migrate",
        "schema_version",
        "close",
        "listen",
    }


def test_a_class_pulse_follows_asking_answering_revealing_and_ending(store) -> None:
    new = store.open_class()
    code, secret = new.code, new.teacher_secret
    assert store.pulse(code) == Pulse(None, False, 0, 0, True)
    ann, bob = store.join(code), store.join(code)
    assert store.pulse(display_code(code).lower()) == Pulse(None, False, 0, 2, True)
    store.pose(code, secret, question())
    assert store.pulse(code) == Pulse("q1", False, 0, 2, True)
    store.answer(code, ann, "q1", "5")
    assert store.pulse(code) == Pulse("q1", False, 1, 2, True)
    store.reveal(code, secret, "q1")
    assert store.pulse(code) == Pulse("q1", True, 1, 2, True)
    store.pose(code, secret, question("q2"))  # a new question: its own count, not revealed
    assert store.pulse(code) == Pulse("q2", False, 0, 2, True)
    store.answer(code, bob, "q2", "4")
    assert store.pulse(code) == Pulse("q2", False, 1, 2, True)
    store.end_class(code, secret)
    assert store.pulse(code) == CLOSED
    assert store.pulse("ABCDEFGHJ") == CLOSED  # no such class: as good as closed
    with pytest.raises(ClassError, match=r"has no"):
        store.pulse("no!")


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
    with pytest.raises(ClassError, match="has no such student: join with the class code"):
        store.join(code, "forged-or-stale")


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
    end = clock.now + CLASS_HOURS * 3600
    while clock.now + IDLE_HOURS * 3600 < end:  # a teacher active every hour and a half
        clock.now += 5400
        store.keep_open(code, secret)
    assert store.check_code(code).expires_at == end  # never past CLASS_HOURS
    clock.now = end - 1
    assert store.answer(code, student, "q1", "5")
    clock.now = end
    for action in (
        lambda: store.check_code(code),
        lambda: store.join(code),
        lambda: store.answer(code, student, "q1", "4"),
        lambda: store.tally(code, secret, "q1"),
        lambda: store.score(code, student),
    ):
        with pytest.raises(ClassError, match=rf"has ended \(a class lasts {CLASS_HOURS} hours"):
            action()
    store.open_class()  # purges lazily, once the phones have had their end screens
    with pytest.raises(ClassError, match="has ended"):
        store.check_code(code)
    assert store.final(code, student).right == 1
    clock.now = end + store_module.ENDED_KEEP_S
    store.open_class()
    with pytest.raises(ClassError, match="there is no class"):
        store.check_code(code)
    assert store.reports([(code, secret)])[0].students == 1  # its report stays


def test_a_class_closes_after_two_idle_hours_and_when_its_teacher_ends_it(posed, clock) -> None:
    store, code, secret = posed
    student = store.join(code)
    clock.now += IDLE_HOURS * 3600 - 1  # students polling and answering are not the teacher
    assert store.answer(code, student, "q1", "5")
    store.tally(code, secret, "q1")
    store.reveal(code, secret, "q1")  # the teacher's action: 2 more hours from now
    clock.now += IDLE_HOURS * 3600 - 1
    assert store.follow(code, student).right == 1
    clock.now += 1
    with pytest.raises(ClassError, match="no teacher activity for 2 hours"):
        store.follow(code, student)
    with pytest.raises(ClassError, match="has ended"):
        store.keep_open(code, secret)  # too late: the class is closed for everyone

    other = store.open_class()
    store.join(other.code)
    store.end_class(other.code, other.teacher_secret)
    for action in (lambda: store.join(other.code), lambda: store.check_code(other.code)):
        with pytest.raises(ClassError, match=r"has ended \(its teacher ended it"):
            action()


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
    assert rows[0] == ["question", "prompt", "option", "answer", "group", "group_name", "count"]
    assert [row[2:] for row in rows[1:]] == [
        ["1", "5", "right", "Right", "2"],
        ["2", "4", "divide-by-d-minus-1", "Something else", "0"],  # not a key of ours
        ["3", "20", "forgot-to-divide", "Something else", "1"],
        ["4", "I don't know", "other", "Something else", "0"],
    ]
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


# --- answers close on reveal -------------------------------------------------------------------


def test_answers_close_when_the_answer_is_revealed(posed) -> None:
    store, code, secret = posed
    early, late = store.join(code), store.join(code)
    assert store.answer(code, early, "q1", "4")
    store.reveal(code, secret, "q1")
    with pytest.raises(ClassError, match="revealed the answer, so answers to this question"):
        store.answer(code, late, "q1", "5")
    assert store.answer(code, early, "q1", "5") is False  # answered already: nothing new
    assert store.score(code, late) == (0, 0) and store.score(code, early) == (0, 1)
    assert store.tally(code, secret, "q1").answered == 1


# --- one browser, one student ------------------------------------------------------------------


def test_the_same_browser_rejoining_is_the_same_student(posed) -> None:
    store, code, secret = posed
    phone = "browser-of-a-phone-0123456789"
    ann = store.join(code, nickname="Ann", browser=phone, address="10.0.0.7")
    assert store.find_student(code, phone) == ann
    assert store.answer(code, ann, "q1", "5")
    # rejoining (a reload, Leave then Join, another tab) finds the same student and score
    assert store.join(code, browser=phone, address="10.0.0.7") == ann
    assert store.join(code, nickname="Annie", browser=phone) == ann
    assert store.check_code(code).students == 1
    assert store.roster(code, secret) == ["Annie"]
    other = store.join(code, browser="another-browser-0123456789")
    assert other != ann and store.find_student(code, "nobody-0123456789") is None
    assert store.find_student(code, "") is None
    assert store.check_code(code).students == 2


# --- limits a script meets and a class does not -------------------------------------------------


def _limited(db_url: str, clock: Clock, **limits) -> ClassStore:
    return ClassStore(db_url, clock=clock, limits=Limits(**limits))


def test_one_browser_keeps_at_most_three_classes_open(db_url: str, clock: Clock) -> None:
    store = _limited(db_url, clock)
    try:
        opened = [
            store.open_class(browser="b-0123456789", address=f"10.0.0.{k}") for k in (1, 2, 3)
        ]
        with pytest.raises(ClassError, match="already has 3 classes open, the limit: end one"):
            store.open_class(browser="b-0123456789", address="10.0.0.4")
        store.open_class(browser="another-0123456789")  # another browser is not held back
        store.end_class(opened[0].code, opened[0].teacher_secret)
        store.open_class(browser="b-0123456789")  # an ended class frees its place
    finally:
        store.close()


def test_class_starts_per_address_per_ten_minutes(db_url: str, clock: Clock) -> None:
    """A flood of starts from a school's address holds its teachers back 10 minutes at most
    (issue 38: it was an hour)."""
    store = _limited(db_url, clock, starts_per_address=5)
    try:
        for k in range(5):  # start, end, start, end...: each start counts
            new = store.open_class(browser=f"fresh-browser-{k:04d}", address="203.0.113.9")
            store.end_class(new.code, new.teacher_secret)
            clock.now += 60
        with pytest.raises(ClassError, match="5 classes were started from your network in the"):
            store.open_class(address="203.0.113.9")
        with pytest.raises(ClassError, match="last 10 minutes, the limit; try again in 5 minutes"):
            store.open_class(address="203.0.113.9")
        store.open_class(address="198.51.100.1")  # another network is not held back
        clock.now += 600 - 4 * 60
        store.open_class(address="203.0.113.9")  # the oldest start left the window
    finally:
        store.close()


def test_one_network_holds_a_share_and_classes_nobody_joins_close(db_url: str, clock) -> None:
    """Issue 38: from 5 addresses a flood filled the server's 200 classes, and they stayed
    2 hours. Now one address holds at most `open_per_address` open classes, and a class that
    no student joined and that asked nothing closes UNTAUGHT_S after it opened."""
    store = _limited(db_url, clock, open_per_address=3, starts_per_address=100)
    try:
        flood = [
            store.open_class(browser=f"b-{k:04d}-flood", address="203.0.113.9") for k in range(3)
        ]
        with pytest.raises(ClassError, match="3 classes are open from your network"):
            store.open_class(browser="b-0000-teacher", address="203.0.113.9")
        taught = store.open_class(browser="b-0001-teacher", address="198.51.100.7")
        store.join(taught.code, browser="phone-0001-browser", address="198.51.100.8")
        clock.now += store_module.UNTAUGHT_S + 1
        store.open_class(browser="b-0002-teacher", address="203.0.113.9")  # the flood closed
        for new in flood:
            with pytest.raises(ClassError):
                store.check_teacher(new.code, new.teacher_secret)
        store.check_teacher(taught.code, taught.teacher_secret)  # a class with a student stays
    finally:
        store.close()


def test_a_class_behind_one_router_joins_and_a_script_is_stopped(db_url: str, clock) -> None:
    store = _limited(db_url, clock, joins_per_class=10**6)  # the address's caps alone
    try:
        new = store.open_class()
        school = "192.0.2.1"
        for k in range(60):  # 60 students behind one school router within a minute
            store.join(new.code, browser=f"phone-{k:04d}-browser", address=school)
            clock.now += 0.5
        assert store.check_code(new.code).students == 60
        # a script (a new browser each time) from one address: the per-minute rate stops it
        joined = 0
        with pytest.raises(ClassError, match="90 students joined from your network in the last"):
            while True:
                store.join(new.code, browser=f"fake-{joined:05d}-browser", address="198.51.100.7")
                joined += 1
        assert joined == 90 - 0  # the school's joins are another address's
        clock.now += 61
        with pytest.raises(ClassError, match="120 students have joined this class from your"):
            while True:
                store.join(new.code, browser=f"fake-{joined:05d}-browser", address="198.51.100.7")
                joined += 1
        assert joined == 120
        assert store.join(new.code, browser="a-real-student-000", address="192.0.2.99")
    finally:
        store.close()


def test_the_server_cap_says_when_a_class_closes(db_url: str, clock: Clock) -> None:
    store = _limited(db_url, clock, classes=2)
    try:
        store.open_class()
        clock.now += 1200  # under UNTAUGHT_S: a class nobody joined yet is still open
        store.open_class()
        with pytest.raises(ClassError, match="already runs 2 classes, its limit; the next one"):
            store.open_class()
        with pytest.raises(ClassError, match="closes within 100 minutes"):
            store.open_class()
    finally:
        store.close()


# --- the database down, locked or full -----------------------------------------------------------


def _no_details(message: str, *details: str) -> None:
    for detail in ("Traceback", "sqlite", "psycopg", "127.0.0.1", "/", *details):
        assert detail not in message, (detail, message)


def test_a_database_that_is_not_there_gets_a_message_without_details() -> None:
    from lnlab.serving.cluster import free_port

    port = free_port()
    with pytest.raises(StoreDown, match="the class's database is not answering") as err:
        ClassStore(f"postgresql+psycopg://lnlab@127.0.0.1:{port}/nowhere")
    _no_details(str(err.value), str(port), "nowhere")


def test_a_locked_database_says_busy_and_the_class_goes_on(tmp_path, monkeypatch, clock) -> None:
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "classes.db"
    store = ClassStore(f"sqlite:///{path}", clock=clock)
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, question())
        ann = store.join(new.code)
        holder = sa.create_engine(f"sqlite:///{path}")
        with holder.connect() as conn:
            conn.exec_driver_sql("BEGIN EXCLUSIVE")  # another process holds the database
            with pytest.raises(StoreDown, match="the class's database is busy: nothing was stored"):
                store.answer(new.code, ann, "q1", "5")
            conn.exec_driver_sql("ROLLBACK")
        holder.dispose()
        assert store.my_answer(new.code, ann, "q1") is None  # told "not stored": it was not
        assert store.answer(new.code, ann, "q1", "5")  # the database is back: the class goes on
        assert store.tally(new.code, new.teacher_secret, "q1").answered == 1
    finally:
        store.close()


def test_a_full_disk_says_so_and_nothing_is_lost(tmp_path, clock) -> None:
    store = ClassStore(f"sqlite:///{tmp_path / 'classes.db'}", clock=clock)
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, question())
        ids = [store.join(new.code) for _ in range(3)]
        store.answer(new.code, ids[0], "q1", "5")
        full = {"on": True}

        @sa.event.listens_for(store._db.engine, "begin")
        def _full(conn) -> None:  # SQLite's own "disk full", at the file's present size
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
            conn.exec_driver_sql(f"PRAGMA max_page_count={pages if full['on'] else 2**30}")

        message = ""
        for _ in range(200):  # until a write needs a new page
            try:
                store.join(new.code, nickname="x" * 20)
            except StoreDown as err:
                message = str(err)
                break
        assert "has no space left" in message, message
        _no_details(message)
        full["on"] = False
        assert store.answer(new.code, ids[1], "q1", "4")
        tally = store.tally(new.code, new.teacher_secret, "q1")
        assert tally.answered == 2 and tally.by_group["right"] == 1
    finally:
        store.close()


def test_postgresql_dropping_its_connections_loses_nothing(postgres_url: str, clock) -> None:
    """A database restart drops every connection: the next call reconnects (pre-ping)."""
    import psycopg

    url = db.schema_url(postgres_url)
    store = ClassStore(url, clock=clock)
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, question())
        ann = store.join(new.code)
        conninfo = postgres_url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = current_database()"
            )
        assert store.answer(new.code, ann, "q1", "5")
        assert store.tally(new.code, new.teacher_secret, "q1").answered == 1
    finally:
        store.close()


def test_a_postgresql_restart_mid_class_loses_nothing(restartable_postgres, clock) -> None:
    """The database stops in the middle of a question and starts again: while it is down every
    call says so plainly (nothing stored, no host, port or path), and once it is back the class
    goes on with every answer it had; the answer refused meanwhile is given again."""
    server = restartable_postgres
    store = ClassStore(server.url, clock=clock)
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, question())
        ann, bob = store.join(new.code), store.join(new.code)
        assert store.answer(new.code, ann, "q1", "5")
        server.stop()
        for call in (
            lambda: store.answer(new.code, bob, "q1", "4"),
            lambda: store.follow(new.code, bob),
            lambda: store.pulse(new.code),
            lambda: store.tally(new.code, new.teacher_secret, "q1"),
            lambda: store.join(new.code),
        ):
            with pytest.raises(StoreDown, match="not answering") as err:
                call()
            _no_details(str(err.value), str(server.port))
        server.start()
        assert store.my_answer(new.code, bob, "q1") is None  # told "not stored": it was not
        assert store.answer(new.code, bob, "q1", "4")
        tally = store.tally(new.code, new.teacher_secret, "q1")
        assert (tally.joined, tally.answered, tally.by_group["right"]) == (2, 2, 1)
        assert store.follow(new.code, ann).mine == "5"
    finally:
        store.close()


def test_the_teacher_removes_fake_students_and_closes_joining(db_url: str, clock: Clock) -> None:
    """Issue 38: 120 fake students filled a class and the teacher could do nothing. Now the
    teacher removes a student (and their answers) by a handle that is not their id, and closes
    joining: new students are refused, those who joined can still rejoin."""
    store = _limited(db_url, clock)
    try:
        new = store.open_class()
        real = store.join(new.code, nickname="Ada", browser="phone-real-browser")
        clock.now += 1
        fake = store.join(new.code, nickname="spam", browser="phone-fake-browser")
        seats = store.seats(new.code, new.teacher_secret)
        assert [seat.nickname for seat in seats] == ["Ada", "spam"]
        assert [seat.joined_at for seat in seats] == [T0, T0 + 1]  # who joined when
        assert all(real not in s.handle and fake not in s.handle for s in seats)  # no id given
        assert store.remove_student(new.code, new.teacher_secret, seats[1].handle)
        assert not store.remove_student(new.code, new.teacher_secret, "no-such-handle")
        assert store.roster(new.code, new.teacher_secret) == ["Ada"]
        store.set_joining(new.code, new.teacher_secret, False)
        assert not store.check_teacher(new.code, new.teacher_secret).joining
        with pytest.raises(ClassError, match="closed joining"):
            store.join(new.code, browser="phone-late-browser")
        assert store.join(new.code, browser="phone-real-browser") == real  # rejoining is fine
        store.set_joining(new.code, new.teacher_secret, True)
        store.join(new.code, browser="phone-late-browser")
        with pytest.raises(ClassError):
            store.set_joining(new.code, "not-the-secret", False)
    finally:
        store.close()
