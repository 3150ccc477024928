"""The Class page and the teacher's panel, as a teacher and students meet them (AppTest).

Each AppTest is one browser session: the teacher's, and one per student. They share the
process's class store, here a fresh SQLite file per test.
"""

from __future__ import annotations

import time

import pytest
from helpers import downloaded, page_test, record_downloads

from lnlab.classroom.asking import live_question
from lnlab.classroom.links import StudentLink, TeacherLink
from lnlab.classroom.store import display_code
from lnlab.ui.classroom import STUDENT_KEY, TEACHER_KEY

from .test_asking import QUESTION

PAGE = "pages/class.py"


def _texts(at) -> str:
    parts = [
        e.value
        for kind in ("markdown", "caption", "info", "success", "warning", "error")
        for e in getattr(at, kind)
    ]
    return "\n".join(str(p) for p in parts) + "\n".join(h.proto.body for h in at.get("html"))


def _teacher(classes) -> TeacherLink:
    new = classes.open_class()
    return TeacherLink(new.code, new.teacher_secret)


def _student(code: str, **query) -> object:
    at = page_test(PAGE, {"join": code, **query}).run()
    assert not at.exception
    return at


def test_start_a_class_shows_the_code_link_and_qr(classes):
    at = page_test(PAGE).run()
    at.button(key="live_start").click().run()
    teacher = at.session_state[TEACHER_KEY]
    shown = _texts(at)
    assert display_code(teacher.code) in shown
    assert f"/class?join={teacher.code}" in shown
    assert 'class="lnlab-qr"' in shown
    assert "teacher" not in at.query_params  # the secret stays out of the address bar
    assert classes.check_code(teacher.code).students == 0


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "type the class code"),
        ("ABC", "9 characters"),
        ("ABCDEFGH0", "has no '0'"),
        ("ABC-DEF-GHJ", "there is no class ABC-DEF-GHJ"),
    ],
)
def test_joining_with_a_bad_code_says_why(classes, typed, message):
    at = page_test(PAGE).run()
    at.text_input(key="live_code").input(typed)
    at.button(key="live_join").click().run()
    assert not at.exception
    assert message in at.error[0].value.replace("\\", "")
    assert STUDENT_KEY not in at.session_state


def test_a_long_nickname_is_refused_and_the_teacher_link_opens_the_class(classes):
    teacher = _teacher(classes)
    at = _student(teacher.code)
    at.text_input(key="live_nickname").input("x" * 21)
    at.button(key="live_join").click().run()
    assert "at most 20 characters" in at.error[0].value
    assert STUDENT_KEY not in at.session_state
    at = page_test(PAGE, {"class": teacher.code, "teacher": teacher.secret}).run()
    assert at.session_state[TEACHER_KEY] == teacher
    assert "teacher" not in at.query_params  # the secret leaves the address bar


def test_an_ended_class_and_a_bad_link_get_a_notice(classes):
    ended = classes.open_class(now=time.time() - 25 * 3600)
    at = _student(ended.code)
    assert "has ended" in at.warning[0].value
    at = page_test(PAGE, {"join": "<b>", "me": "x"}).run()
    assert not at.exception and "does not work" in at.warning[0].value
    at = page_test(PAGE, {"class": ended.code, "teacher": "not-the-secret-at-all"}).run()
    assert not at.exception and "has ended" in at.warning[0].value
    assert TEACHER_KEY not in at.session_state


def test_students_answer_the_teacher_reveals_and_a_reload_keeps_the_score(classes):
    teacher = _teacher(classes)
    live = live_question(QUESTION, "step_through")
    student = _student(teacher.code)
    assert student.text_input(key="live_code").value == display_code(teacher.code)
    student.text_input(key="live_nickname").input("<b>Ada</b>")
    student.button(key="live_join").click().run()
    me = student.session_state[STUDENT_KEY]
    assert student.query_params["me"] == me.me  # the URL keeps the student
    assert "Waiting for the teacher" in _texts(student)

    classes.pose(teacher.code, teacher.secret, live)
    student.run()
    right = next(i for i, o in enumerate(live.options) if o.correct)
    student.button(key=f"live_opt_{live.qid}_{right}").click().run()
    assert "Waiting for the reveal" in _texts(student)
    assert classes.tally(teacher.code, teacher.secret, live.qid).answered == 1

    classes.reveal(teacher.code, teacher.secret, live.qid)
    student.run()
    assert "Right" in student.success[0].value
    assert student.metric[0].value == "1 / 1"

    student.switch_page("pages/padding.py").run()  # a page switch keeps the class in the URL
    assert not student.exception
    assert (student.query_params["join"], student.query_params["me"]) == (me.code, me.me)
    student.switch_page(PAGE).run()
    assert student.metric[0].value == "1 / 1"

    again = _student(teacher.code, me=me.me)  # a reload: a new session, the same link
    assert again.session_state[STUDENT_KEY] == StudentLink(teacher.code, me.me)
    assert again.metric[0].value == "1 / 1"
    assert classes.check_code(teacher.code).students == 1
    again.button(key="live_leave").click().run()
    assert STUDENT_KEY not in again.session_state and "me" not in again.query_params
    assert again.button(key="live_join")  # the join form again


def test_a_wrong_answer_gets_its_misconception_named(classes):
    teacher = _teacher(classes)
    live = live_question(QUESTION, "step_through")
    classes.pose(teacher.code, teacher.secret, live)
    me = classes.join(teacher.code)
    at = _student(teacher.code, me=me)
    k = next(i for i, o in enumerate(live.options) if o.group == "d_minus_1")
    at.button(key=f"live_opt_{live.qid}_{k}").click().run()
    classes.reveal(teacher.code, teacher.secret, live.qid)
    at.run()
    assert "Dividing by D − 1" in at.warning[0].value
    assert at.metric[0].value == "0 / 1"


def test_the_teacher_page_counts_reveals_and_downloads(classes, monkeypatch):
    files = record_downloads(monkeypatch)
    teacher = _teacher(classes)
    at = page_test(PAGE)
    at.session_state[TEACHER_KEY] = teacher
    at.run()
    assert "No question asked yet" in _texts(at)
    live = live_question(QUESTION, "step_through")
    classes.pose(teacher.code, teacher.secret, live)
    for k, nickname in enumerate(("<i>Bo</i>", "", "")):
        me = classes.join(teacher.code, nickname=nickname)
        classes.answer(teacher.code, me, live.qid, live.options[k].text)
    at.run()
    shown = _texts(at)
    assert "**3 of 3** answered" in shown
    assert "\\<i\\>Bo\\</i\\>" in shown and "2 without a nickname" in shown  # escaped
    (chart,) = at.get("plotly_chart")
    assert '"x":[1,1,1]' in chart.proto.spec.replace(" ", "")
    at.button(key=f"live_reveal_{live.qid}").click().run()
    assert classes.current(teacher.code).revealed
    csv = downloaded(at, "live_counts_csv", files)
    assert csv.splitlines()[0] == "question,prompt,group,answer,count"
    assert len(csv.splitlines()) == 1 + len(live.options)


def test_ask_the_class_from_a_lesson_slide(classes):
    teacher = _teacher(classes)
    at = page_test("pages/step_through.py", {"present": "1"}, timeout=120)
    at.session_state[TEACHER_KEY] = teacher
    at.run()
    assert display_code(teacher.code) in _texts(at)  # the join line on every slide
    for _ in range(6):  # to the first slide with a question the class can tap
        asks = [b for b in at.button if b.key and b.key.startswith("live_ask_")]
        if asks:
            break
        at.button(key="step_through_next").click().run()
    ask = asks[0]
    ask.click().run()
    posed = classes.current(teacher.code)
    assert posed is not None and ask.key == f"live_ask_{posed.question.qid}"
    assert "The class is answering" in _texts(at)  # the result stays off the projector
    assert posed.question.page == "step_through"
    me = classes.join(teacher.code)
    classes.answer(teacher.code, me, posed.question.qid, posed.question.options[0].text)
    at.run()
    assert "**1 of 1** answered" in _texts(at)
    at.button(key=f"live_reveal_{posed.question.qid}").click().run()
    assert classes.current(teacher.code).revealed
    assert "The class is answering" not in _texts(at)


def test_start_a_class_from_presenter_mode(classes):
    at = page_test("pages/padding.py", {"present": "1"}, timeout=120).run()
    at.button(key="live_start_present").click().run()
    teacher = at.session_state[TEACHER_KEY]
    assert classes.check_code(teacher.code).code == teacher.code
    assert display_code(teacher.code) in _texts(at)  # the join line, and the dialog's card
    assert at.button(key="live_show_join").label == "Show how to join"
