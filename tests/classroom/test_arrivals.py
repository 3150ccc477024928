"""Who may start a class and join one while a script floods (issue 38), on SQLite and PostgreSQL:
a teacher who taught here goes first past a flood of starts from their network, and a class
takes a room of 60 in a minute but not a script's fakes from many networks."""

from __future__ import annotations

import pytest

from lnlab.classroom.store import (
    CLASS_JOIN_WINDOW_S,
    START_WINDOW_S,
    ClassError,
    ClassStore,
    Limits,
)

from .test_store import Clock

SCHOOL, ELSEWHERE = "192.0.2.1", "198.51.100.7"


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _store(db_url: str, clock: Clock, **limits) -> ClassStore:
    return ClassStore(db_url, clock=clock, limits=Limits(**limits))


def _taught(store: ClassStore, clock: Clock, browser: str, *, end: bool = True):
    """A class this browser taught from the school, with a student: its (code, secret)."""
    new = store.open_class(browser=browser, address=SCHOOL)
    store.join(new.code, browser=f"{browser}-student", address=SCHOOL)
    if end:
        store.end_class(new.code, new.teacher_secret)
    clock.now += 1
    return new.code, new.teacher_secret


def test_a_teacher_who_taught_here_starts_past_a_flood_of_starts(db_url: str, clock) -> None:
    """A script behind the school's router used up its starts; a teacher whose browser keeps
    the claim of a class it taught with students starts anyway, on that claim's own allowance
    (one class open per claim); a claim of a class with no student, a claim of a class that
    was itself opened on a claim, or a wrong secret do not; the refusal says the way."""
    store = _store(db_url, clock, starts_per_address=5, vouched_per_address=3)
    try:
        report = _taught(store, clock, "teacher-browser-1")  # ended: its report is kept
        running = _taught(store, clock, "teacher-browser-2", end=False)  # still open
        empty = store.open_class(browser="teacher-browser-3", address=SCHOOL)  # no student
        for k in range(2):  # the script: starts until refused
            store.open_class(browser=f"script-{k:04d}-browser", address=SCHOOL)
        with pytest.raises(ClassError, match="5 classes were started from your network") as err:
            store.open_class(browser="teacher-browser-1", address=SCHOOL)
        assert "A teacher who taught a class with students here goes first" in str(err.value)
        for claims in (
            [(empty.code, empty.teacher_secret)],
            [(report[0], "not-the-secret-of-it")],
            [("ABCDEFGHJ", "no-such-class-at-all")],
            [],
        ):
            with pytest.raises(ClassError, match="goes first"):
                store.open_class(browser="teacher-browser-1", address=SCHOOL, taught=claims)
        first = store.open_class(browser="teacher-browser-1", address=SCHOOL, taught=[report])
        store.check_teacher(first.code, first.teacher_secret)
        store.open_class(browser="teacher-browser-2", address=SCHOOL, taught=[running])
        # one open class per claim: the same claim again (another browser, say) does not
        with pytest.raises(ClassError, match="goes first"):
            store.open_class(browser="another-browser-1", address=SCHOOL, taught=[report])
        # a class opened on a claim, taught with students, cannot vouch for the next one
        store.join(first.code, browser="first-student-1", address=SCHOOL)
        store.end_class(first.code, first.teacher_secret)
        with pytest.raises(ClassError, match="goes first"):
            store.open_class(
                browser="teacher-browser-1",
                address=SCHOOL,
                taught=[(first.code, first.teacher_secret)],
            )
        # the claim is free again once its class ended; the first good claim in order counts
        store.open_class(
            browser="teacher-browser-1",
            address=SCHOOL,
            taught=[(empty.code, empty.teacher_secret), report],
        )
        store.open_class(browser="elsewhere-browser", address=ELSEWHERE)  # not held back
        clock.now += START_WINDOW_S
        store.open_class(browser="teacher-browser-4", address=SCHOOL)  # the window passed
    finally:
        store.close()


def test_classes_on_claims_hold_their_own_share_of_a_network(db_url: str, clock) -> None:
    """Classes opened on claims do not count in the network's open classes (a flood there
    never holds a returning teacher back) and have a cap of their own."""
    store = _store(db_url, clock, open_per_address=2, vouched_per_address=2)
    try:
        claims = [_taught(store, clock, f"teacher-browser-{k}") for k in range(3)]
        for k in range(2):
            store.open_class(browser=f"script-{k:04d}-browser", address=SCHOOL)
        with pytest.raises(ClassError, match="2 classes are open from your network"):
            store.open_class(browser="teacher-browser-0", address=SCHOOL)
        for k in range(2):
            store.open_class(browser=f"teacher-browser-{k}", address=SCHOOL, taught=[claims[k]])
        with pytest.raises(ClassError, match="2 classes are open from your network that"):
            store.open_class(browser="teacher-browser-2", address=SCHOOL, taught=[claims[2]])
    finally:
        store.close()


def test_a_room_of_60_joins_in_30_seconds_and_a_flood_of_fakes_is_refused(
    db_url: str, clock
) -> None:
    """Joins per class per minute, from every network together. A room of 60 behind one
    router in 30 s passes; a script adding fakes from several networks (each under its own
    caps) stops at `joins_per_class` in a minute; past it a latecomer from a network that
    added nobody in that minute still joins (one), and rejoining is not a join."""
    store = _store(db_url, clock)
    rate = store.limits.joins_per_class
    assert rate > 60
    try:
        room = store.open_class()
        phones = [f"phone-{k:04d}-browser" for k in range(60)]
        for phone in phones:
            store.join(room.code, browser=phone, address=SCHOOL)
            clock.now += 0.5
        assert store.check_code(room.code).students == 60
        for phone in phones:  # a reload each: the same students, not new joins
            store.join(room.code, browser=phone, address=SCHOOL)
        attacked = store.open_class()
        joined = 0
        with pytest.raises(ClassError, match=f"{rate} students joined class .* in the last"):
            while True:
                where = f"10.0.0.{joined % 5}"  # five networks, in turn
                store.join(attacked.code, browser=f"fake-{joined:05d}", address=where)
                joined += 1
        assert joined == rate
        store.join(attacked.code, browser="latecomer-browser-1", address=ELSEWHERE)
        with pytest.raises(ClassError, match="from networks that already joined it"):
            store.join(attacked.code, browser="latecomer-browser-2", address=ELSEWHERE)
        store.join(room.code, browser="late-phone-browser", address=SCHOOL)  # another class
        clock.now += CLASS_JOIN_WINDOW_S
        store.join(attacked.code, browser="fake-after-the-minute", address="10.0.0.1")
    finally:
        store.close()
