"""A class question's data (issue 37, item 4): the numbers it is about go to the phones with
it, and the slide shows them before Ask; presenter mode runs the class (item 6); the home page
leads the teacher's browser back to its class.

The data is the lesson's line of the example (Lesson.context) as plain text, in the question's
JSON (no migration: a question stored before it loads with none).
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from helpers import page_test

from lnlab.classroom import store as store_module
from lnlab.classroom.asking import live_question, question_data
from lnlab.classroom.live import MAX_DATA, LiveOption, LiveQuestion
from lnlab.classroom.store import ClassStore, display_code
from lnlab.core.errors import InputError
from lnlab.ui import claims, state
from lnlab.ui.classroom.common import TeacherPanel

from .test_asking import QUESTION
from .test_page import _browser, _class, _student, _teacher, _texts

CONTEXT = r"**Token 1: \<b\>t\_1\</b\>** · x = \(2, 4, 6, 8\) · D = 4 · ε = 1e\-05 · γ = 1 · β = 0"
DATA = "Token 1: <b>t_1</b> · x = (2, 4, 6, 8) · D = 4 · ε = 1e-05 · γ = 1 · β = 0"


def _live(data: str = DATA, qid: str = "q1") -> LiveQuestion:
    return LiveQuestion(
        qid,
        "step_through",
        "What variance does Layer Norm compute for it?",
        (LiveOption("5", "right"), LiveOption("6.6667", "d_minus_1"), LiveOption("4", "other")),
        "Average the squared distances from the mean 5.",
        data=data,
    )


# --- the data field --------------------------------------------------------------------------


def test_the_lessons_line_becomes_plain_text_data():
    assert question_data(CONTEXT) == DATA  # escapes read, bold marks dropped
    assert question_data("**3** sentences,\n  the longest **5** words") == (
        "3 sentences, the longest 5 words"
    )
    assert question_data("") == ""
    long = question_data("x = (" + "1, " * MAX_DATA + ")")
    assert len(long) <= MAX_DATA and long.endswith(", 1,…")  # cut, never refused
    live = live_question(QUESTION, "step_through", CONTEXT)
    assert live.data == DATA
    assert live_question(QUESTION, "step_through").data == ""  # a question that says it all


def test_data_round_trips_through_json_and_old_questions_load():
    live = _live()
    stored = json.loads(live.to_json())
    assert stored["data"] == DATA
    assert LiveQuestion.from_json(live.to_json()) == live
    del stored["data"]  # a question stored before questions had data
    assert LiveQuestion.from_json(json.dumps(stored)) == _live("")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("x" * (MAX_DATA + 1), f"longer than {MAX_DATA} characters"),
        ("x = \x00", "NUL character"),
        (["x = 1"], "must be text"),
    ],
)
def test_data_is_checked_like_the_rest(data, message):
    with pytest.raises(InputError, match=message):
        _live(data)
    assert _live("x" * MAX_DATA).data  # the cap itself is fine


def test_the_store_keeps_the_data_and_loads_a_question_stored_without_it(tmp_path):
    store = ClassStore(f"sqlite:///{tmp_path / 'classes.db'}")
    try:
        new = store.open_class()
        store.pose(new.code, new.teacher_secret, _live())
        assert store.current(new.code).question.data == DATA
        me = store.join(new.code, browser="a-phone-browser-id-0001")
        assert store.follow(new.code, me).posed.question.data == DATA

        old = json.loads(_live(qid="old").to_json())
        del old["data"]
        engine = sa.create_engine(f"sqlite:///{tmp_path / 'classes.db'}")
        with engine.begin() as conn:  # as a server before this change stored it
            conn.execute(
                sa.text(
                    "INSERT INTO questions (code, qid, body, revealed, posed_at) "
                    "VALUES (:code, 'old', :body, 0, 0)"
                ),
                {"code": new.code, "body": json.dumps(old)},
            )
            conn.execute(
                sa.text("UPDATE classes SET current_qid = 'old' WHERE code = :code"),
                {"code": new.code},
            )
        engine.dispose()
        posed = store.current(new.code)
        assert posed.question.qid == "old" and posed.question.data == ""
        assert store.answer(new.code, me, "old", "5")
    finally:
        store.close()


# --- the phone and the slide -----------------------------------------------------------------


def _in_order(block):
    """The elements under an AppTest block, in the order the page shows them."""
    for _, child in sorted(getattr(block, "children", {}).items()):
        if hasattr(child, "children"):
            yield from _in_order(child)
        else:
            yield child


def test_the_phone_shows_the_data_above_the_question_and_its_options(classes):
    teacher = _teacher(classes)
    classes.pose(teacher.code, teacher.secret, _live())
    classes.join(teacher.code, browser="a-phone-browser-id-0001")
    at = _student(teacher.code)
    (box,) = [h.proto.body for h in at.get("html") if 'class="lnlab-live-data"' in h.proto.body]
    assert "&lt;b&gt;t_1&lt;/b&gt; ·</span>" in box  # escaped, each part whole
    assert "<span>x = (2, 4, 6, 8) ·</span>" in box and "<span>β = 0</span>" in box
    assert at.button(key="live_opt_q1_0")  # the options, under it
    shown = [
        e.proto.body if e.type == "html" else e.value
        for e in _in_order(at.main)
        if e.type in ("html", "markdown")
    ]
    data = next(k for k, t in enumerate(shown) if 'class="lnlab-live-data"' in t)
    prompt = next(k for k, t in enumerate(shown) if "What variance" in t)
    assert data < prompt

    classes.pose(teacher.code, teacher.secret, _live("", qid="q2"))  # no data: no box
    at.run()
    assert 'class="lnlab-live-data"' not in _texts(at)
    assert at.button(key="live_opt_q2_0")


def test_the_slide_shows_what_ask_sends_and_ask_sends_the_lessons_line(classes):
    teacher = _teacher(classes)
    at = page_test("pages/step_through.py", {"present": "1"}, timeout=120)
    _class(at).teacher = teacher
    state.of(TeacherPanel, at.session_state).first_question = True
    at.run()
    ask = next(b for b in at.button if b.key and b.key.startswith("live_ask_"))
    before = _texts(at).replace("\\", "")  # the Markdown's escapes
    assert "Every phone gets **What variance" in before
    assert "With: Token 1: token · x = (2, 4, 6, 8) · D = 4" in before
    ask.click().run()
    posed = classes.current(teacher.code).question
    assert posed.data.startswith("Token 1: token · x = (2, 4, 6, 8) · D = 4 · ε = ")
    assert f"With: {posed.data}" in before  # what the slide said is what went


# --- presenter mode runs the class; the home page leads back to it ---------------------------


def _presenting(classes, path: str = "pages/padding.py"):
    teacher = _teacher(classes)
    at = _browser(page_test(path, {"present": "1"}, timeout=120), "the-teachers-laptop-01", teacher)
    at.run()
    assert not at.exception
    return at, teacher


def test_presenter_mode_shows_who_joined_and_switches_lesson(classes):
    at, teacher = _presenting(classes)
    assert f"code **{display_code(teacher.code)}** · **0 joined**" in _texts(at)
    classes.join(teacher.code, browser="a-phone-browser-id-0001")
    at.run()
    assert "· **1 joined**" in _texts(at)
    lessons = [b.key for b in at.button if b.key and b.key.startswith("live_switch_")]
    assert "live_switch_step_through" in lessons and "live_switch_class" not in lessons
    at.button(key="live_switch_step_through").click().run()
    assert not at.exception
    assert at.session_state["present"]  # still presenting, at the lesson's first question
    assert next(b for b in at.button if b.key and b.key.startswith("live_ask_"))


def test_end_class_from_presenter_mode_stays_on_the_slide(classes):
    at, teacher = _presenting(classes)
    at.button(key="live_end_present").click().run()  # asks first
    assert classes.check_code(teacher.code)
    at.button(key="live_end_confirm").click().run()
    assert not at.exception
    assert _class(at).teacher is None and at.session_state["present"]
    assert at.toast[0].value == f"Class {display_code(teacher.code)} has ended."
    assert at.button(key="live_start_present")  # a new class, if wanted
    written = state.of(claims.Cookies, at.session_state).written
    assert written[claims.TEACHER_COOKIE] is None
    with pytest.raises(store_module.ClassError):
        classes.check_teacher(teacher.code, teacher.secret)
    assert _class(at).report == teacher  # its report: a link in the top row


def test_the_home_page_leads_the_teachers_browser_back_to_its_class(classes):
    teacher = _teacher(classes)
    classes.join(teacher.code, browser="a-phone-browser-id-0001")
    at = _browser(page_test("home.py"), "the-teachers-laptop-01", teacher).run()
    assert not at.exception
    assert f"Your class **{display_code(teacher.code)}** is running · 1 joined" in _texts(at)
    (back,) = [link for link in at.get("page_link") if link.value == "Back to your class"]
    assert back.proto.page.endswith("class")
    visitor = page_test("home.py").run()
    assert "is running" not in _texts(visitor)
    classes.end_class(teacher.code, teacher.secret)
    at = _browser(page_test("home.py"), "the-teachers-laptop-01", teacher).run()
    assert "is running" not in _texts(at)
