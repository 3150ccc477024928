"""The class store's side of a phone that draws the question itself (issue 39): the board (the
pulse and the question in one read), an answer by the option's place, and the listeners that
hear each change this process makes."""

from __future__ import annotations

import pytest

from lnlab.classroom.store import CLOSED, Board, ClassError, ClassStore, Posed, Pulse

from .test_store import question


@pytest.fixture
def store(db_url: str):
    opened = ClassStore(db_url)
    yield opened
    opened.close()


def test_the_board_is_the_pulse_and_the_question_asked(store: ClassStore) -> None:
    new = store.open_class()
    code, secret = new.code, new.teacher_secret
    assert store.board(code) == Board(Pulse(None, False, 0, 0, True), None)
    ann = store.join(code)
    store.pose(code, secret, question())
    assert store.board(code) == Board(Pulse("q1", False, 0, 1, True), Posed(question(), False))
    assert store.answer(code, ann, "q1", 0)
    store.reveal(code, secret, "q1")
    assert store.board(code) == Board(Pulse("q1", True, 1, 1, True), Posed(question(), True))
    store.end_class(code, secret)
    assert store.board(code) == Board(CLOSED, None)
    assert store.board("ZZZZZZZZZ") == Board(CLOSED, None)
    with pytest.raises(ClassError):
        store.board("not a code!")


@pytest.mark.parametrize("option", [1, "4"])
def test_an_answer_names_its_option_by_text_or_place(store: ClassStore, option) -> None:
    new = store.open_class()
    store.pose(new.code, new.teacher_secret, question())
    ann = store.join(new.code)
    assert store.answer(new.code, ann, "q1", option)
    assert store.my_answer(new.code, ann, "q1") == "4"


@pytest.mark.parametrize("option", [4, -1, True, 1.0, None, ["5"]])
def test_an_option_the_question_has_not_is_refused(store: ClassStore, option) -> None:
    new = store.open_class()
    store.pose(new.code, new.teacher_secret, question())
    ann = store.join(new.code)
    with pytest.raises(ClassError, match="not one of this question's options"):
        store.answer(new.code, ann, "q1", option)
    assert store.my_answer(new.code, ann, "q1") is None


def test_listeners_hear_every_change_a_device_shows_once_stored(store: ClassStore) -> None:
    heard: list[str] = []
    store.listen(heard.append)
    store.listen(lambda code: 1 / 0)  # a failing listener: the others still hear
    new = store.open_class()
    code, secret = new.code, new.teacher_secret
    ann = store.join(code.lower())
    store.pose(code, secret, question())
    assert store.answer(code, ann, "q1", "5")
    assert not store.answer(code, ann, "q1", "4")  # not stored: nothing changed
    store.reveal(code, secret, "q1")
    store.end_class(code, secret)
    assert heard == [code] * 5  # join, pose, answer, reveal, end
    with pytest.raises(ClassError):
        store.pose(code, secret, question("q2"))  # refused: nothing heard
    assert len(heard) == 5
