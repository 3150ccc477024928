"""The Class page and the teacher's panel, as a teacher and students meet them (AppTest).

Each AppTest is one browser session: the teacher's, and one per student. They share the
process's class store, here a fresh SQLite file per test. AppTest sends no cookies: a test
gives a session the cookies a browser would have sent by putting them where the page keeps
what it wrote (lnlab.ui.claims), so "the same browser, a new session" is a reload.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time

import pytest
from helpers import downloaded, page_test, record_downloads

from lnlab.classroom import store as store_module
from lnlab.classroom.asking import live_question, right_options
from lnlab.classroom.links import StudentLink, TeacherLink
from lnlab.classroom.store import ClassError, ClassStore, Limits, display_code
from lnlab.serving.cluster import free_port
from lnlab.teach.quiz import Question
from lnlab.ui import claims, state
from lnlab.ui.classroom.common import ClassSession, TeacherPanel

from .test_asking import QUESTION


def _class(at) -> ClassSession:
    """Who the session of `at` is in a class."""
    return state.of(ClassSession, at.session_state)


PAGE = "pages/class.py"
PHONE = "a-phone-browser-id-0001"


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


def _browser(at, browser: str = PHONE, teacher: TeacherLink | None = None):
    """The session of a browser that sent these cookies when it opened the page."""
    cookies = {claims.BROWSER_COOKIE: browser}
    if teacher is not None:
        cookies[claims.TEACHER_COOKIE] = f"{teacher.code}.{teacher.secret}"
    state.of(claims.Cookies, at.session_state).written.update(cookies)
    return at


def _student(code: str, browser: str = PHONE, **query) -> object:
    at = _browser(page_test(PAGE, {"join": code, **query}), browser).run()
    assert not at.exception
    return at


def test_start_a_class_shows_the_code_link_and_qr(classes):
    at = page_test(PAGE).run()
    at.button(key="live_start").click().run()
    teacher = _class(at).teacher
    shown = _texts(at)
    assert display_code(teacher.code) in shown
    assert f"/class?join={teacher.code}" in shown
    assert 'class="lnlab-qr"' in shown
    assert "teacher" not in at.query_params  # the secret stays out of the address bar
    # and off the screen: only the copy button's data and the cookie's script hold it
    unseen = re.sub(r"<script\b.*?</script>", "", shown, flags=re.S)
    assert unseen.count(teacher.secret) == unseen.count(f'teacher={teacher.secret}">Copy') == 1
    assert classes.check_code(teacher.code).students == 0
    written = state.of(claims.Cookies, at.session_state).written  # the browser keeps the claim
    assert written[claims.TEACHER_COOKIE] == f"{teacher.code}.{teacher.secret}"


def test_a_reload_a_new_tab_or_the_page_by_its_address_brings_the_teacher_back(classes):
    teacher = _teacher(classes)
    for path in (PAGE, "pages/step_through.py"):  # any page, opened by its address
        at = _browser(page_test(path), "the-teachers-laptop-01", teacher).run()
        assert not at.exception
        assert _class(at).teacher == teacher
    at = _browser(page_test(PAGE), "the-teachers-laptop-01", teacher).run()
    assert display_code(teacher.code) in _texts(at)
    classes.end_class(teacher.code, teacher.secret)
    at = _browser(page_test(PAGE), "the-teachers-laptop-01", teacher).run()
    assert _class(at).teacher is None
    assert "its teacher ended it" in at.info[0].value
    written = state.of(claims.Cookies, at.session_state).written
    assert written[claims.TEACHER_COOKIE] is None  # claim dropped


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
    assert message.lower() in at.error[0].value.replace("\\", "").lower()
    assert _class(at).student is None


def test_a_long_nickname_is_refused_and_the_teacher_link_opens_the_class(classes):
    teacher = _teacher(classes)
    at = _student(teacher.code)
    at.text_input(key="live_nickname").input("x" * 21)
    at.button(key="live_join").click().run()
    assert "at most 20 characters" in at.error[0].value
    assert _class(at).student is None
    at = page_test(PAGE, {"class": teacher.code, "teacher": teacher.secret}).run()
    assert _class(at).teacher == teacher
    assert "teacher" not in at.query_params  # the secret leaves the address bar


def test_an_ended_class_and_a_bad_link_get_a_notice(classes):
    ended = classes.open_class(now=time.time() - 25 * 3600)
    at = _student(ended.code)
    assert "has ended" in at.warning[0].value
    at = page_test(PAGE, {"join": "<b>", "me": "x"}).run()
    assert not at.exception and "does not work" in at.warning[0].value
    at = page_test(PAGE, {"class": ended.code, "teacher": "not-the-secret-at-all"}).run()
    assert not at.exception and "has ended" in at.warning[0].value
    assert _class(at).teacher is None


def test_students_answer_the_teacher_reveals_and_a_reload_keeps_the_score(classes):
    teacher = _teacher(classes)
    live = live_question(QUESTION, "step_through")
    student = _student(teacher.code)
    assert student.text_input(key="live_code").value == display_code(teacher.code)
    student.text_input(key="live_nickname").input("<b>Ada</b>")
    student.button(key="live_join").click().run()
    me = _class(student).student
    assert dict(student.query_params) == {"join": me.code}  # no student id in the link
    assert "Waiting for the teacher" in _texts(student)

    classes.pose(teacher.code, teacher.secret, live)
    student.run()
    right = next(i for i, o in enumerate(live.options) if o.correct)
    assert student.button(key=f"live_opt_{live.qid}_{right}").label.startswith(f"{right + 1}")
    student.button(key=f"live_opt_{live.qid}_{right}").click().run()
    assert "Waiting for the reveal" in _texts(student)
    assert classes.tally(teacher.code, teacher.secret, live.qid).answered == 1

    classes.reveal(teacher.code, teacher.secret, live.qid)
    student.run()
    assert "Right" in student.success[0].value
    assert student.metric[0].value == "1 / 1"

    student.switch_page("pages/padding.py").run()  # a page switch keeps the class in the URL
    assert not student.exception
    assert dict(student.query_params).get("join") == me.code
    student.switch_page(PAGE).run()
    assert student.metric[0].value == "1 / 1"

    again = _student(teacher.code)  # a reload: a new session of the same browser
    assert _class(again).student == StudentLink(teacher.code, me.me)
    assert again.metric[0].value == "1 / 1"
    again.button(key="live_leave").click().run()  # asks first
    again.button(key="live_leave_confirm").click().run()
    assert _class(again).student is None and "join" not in again.query_params
    again.text_input(key="live_code").input(teacher.code)
    again.button(key="live_join").click().run()  # the same phone rejoining: the same student
    assert _class(again).student == StudentLink(teacher.code, me.me)
    assert again.metric[0].value == "1 / 1"
    assert classes.check_code(teacher.code).students == 1

    other = _student(teacher.code, "another-phone-browser-02")  # the same link, another phone
    assert _class(other).student is None  # joins as someone new, if they press Join


def test_a_made_up_or_someone_elses_student_id_gets_a_message(classes):
    teacher = _teacher(classes)
    theirs = classes.join(teacher.code, browser="someone-elses-browser")
    for me in ("made-up-student-id", theirs):
        at = _student(teacher.code, me=me)
        assert "not this device's" in at.warning[0].value
        assert _class(at).student is None
        assert "me" not in at.query_params
    assert classes.check_code(teacher.code).students == 1  # nobody joined silently


def test_after_reveal_a_late_answer_is_refused_with_a_message(classes):
    teacher = _teacher(classes)
    live = live_question(QUESTION, "step_through")
    classes.pose(teacher.code, teacher.secret, live)
    classes.join(teacher.code, browser=PHONE)
    at = _student(teacher.code)
    classes.reveal(teacher.code, teacher.secret, live.qid)
    at.button(key=f"live_opt_{live.qid}_0").click().run()  # tapped before the page knew
    assert "answers to this question are closed" in at.error[0].value
    assert classes.tally(teacher.code, teacher.secret, live.qid).answered == 0


def test_a_wrong_answer_gets_its_misconception_named(classes):
    teacher = _teacher(classes)
    live = live_question(QUESTION, "step_through")
    classes.pose(teacher.code, teacher.secret, live)
    classes.join(teacher.code, browser=PHONE)
    at = _student(teacher.code)
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
    _class(at).teacher = teacher
    at.run()
    assert "No question asked yet" in _texts(at)
    live = live_question(QUESTION, "step_through")
    classes.pose(teacher.code, teacher.secret, live)
    for k, nickname in enumerate(("<i>Bo</i>", "", "https://evil.example")):
        me = classes.join(teacher.code, nickname=nickname, browser=f"browser-{k}")
        classes.answer(teacher.code, me, live.qid, live.options[k % len(live.options)].text)
    at.run()
    shown = _texts(at)
    assert "**3 of 3** answered" in shown
    assert not at.get("plotly_chart")  # no distribution before Reveal
    roster = next(h.proto.body for h in at.get("html") if "lnlab-roster" in h.proto.body)
    assert "&lt;i&gt;Bo&lt;/i&gt;" in roster and "1 without a nickname" in roster
    assert "<a " not in roster and "https://evil.example" in roster  # plain text, no link
    at.button(key=f"live_reveal_{live.qid}").click().run()
    assert classes.current(teacher.code).revealed
    (chart,) = at.get("plotly_chart")
    (bars,) = json.loads(chart.proto.spec)["data"]  # a bar per option, by number and text
    assert bars["x"] == [1, 1, 1][: len(live.options)] + [0] * (len(live.options) - 3)
    assert [y.split("<br>")[0] for y in bars["y"]] == [
        f"{k}. {o.text}" for k, o in enumerate(live.options, 1)
    ]
    assert "By misconception: Right 1" in _texts(at)
    counts = downloaded(at, "live_counts_csv", files)
    assert counts.splitlines()[0] == "question,prompt,option,answer,group,group_name,count"
    assert len(counts.splitlines()) == 1 + len(live.options)


def test_end_class_asks_first_and_ends_it_for_everyone(classes):
    teacher = _teacher(classes)
    at = _browser(page_test(PAGE), "the-teachers-laptop-01", teacher).run()
    at.button(key="live_end").click().run()
    assert classes.check_code(teacher.code)  # nothing ended before the confirmation
    at.button(key="live_end_confirm").click().run()
    assert not at.exception
    assert _class(at).teacher is None
    assert f"Class {display_code(teacher.code)} has ended" in at.success[0].value
    assert state.of(claims.Cookies, at.session_state).written[claims.TEACHER_COOKIE] is None
    student = _student(teacher.code)
    assert "its teacher ended it" in student.warning[0].value


def test_ask_answer_reveal_on_a_lesson_slide(classes):
    teacher = _teacher(classes)
    at = page_test("pages/step_through.py", {"present": "1"}, timeout=120)
    _class(at).teacher = teacher
    # as the Class page's lesson buttons do
    state.of(TeacherPanel, at.session_state).first_question = True
    at.run()
    assert display_code(teacher.code) in _texts(at)  # the join line on every slide
    asks = [b for b in at.button if b.key and b.key.startswith("live_ask_")]
    assert asks, "the lesson did not open at a question the class can tap"
    before = _texts(at)
    assert 'class="lnlab-unknown"' in before  # the "?" where the result goes
    assert not [m for m in at.metric]  # the value asked for is held
    asks[0].click().run()
    posed = classes.current(teacher.code)
    assert posed is not None and asks[0].key == f"live_ask_{posed.question.qid}"
    assert posed.question.page == "step_through"
    asked = _texts(at)
    assert "lnlab-live-prompt" in asked and "lnlab-live-options" in asked
    assert "0 of 0</b> answered" in asked
    assert "Right" not in asked and not at.get("plotly_chart") and not at.metric
    me = classes.join(teacher.code, browser=PHONE)
    classes.answer(teacher.code, me, posed.question.qid, posed.question.options[0].text)
    at.run()
    assert "1 of 1</b> answered" in _texts(at)
    at.button(key=f"live_reveal_{posed.question.qid}").click().run()
    assert classes.current(teacher.code).revealed
    revealed = _texts(at)
    answers = at.button(key=f"live_answers_{posed.question.qid}")
    assert answers.label.startswith("Answer: ") and answers.label.endswith(" of 1 right")
    assert 'class="lnlab-unknown"' not in revealed
    assert at.metric  # the slide's result shows
    assert at.get("plotly_chart")  # the class's answers by group, in the dialog


def test_a_class_ended_on_another_device_leaves_this_ones_slide(classes):
    teacher = _teacher(classes)
    at = page_test("pages/step_through.py", {"present": "1"}, timeout=120)
    at = _browser(at, "the-teachers-laptop-01", teacher)  # the claim: this browser teaches
    state.of(TeacherPanel, at.session_state).first_question = True
    at.run()
    next(b for b in at.button if b.key and b.key.startswith("live_ask_")).click().run()
    assert "lnlab-live-prompt" in _texts(at)  # the question on the projector
    classes.end_class(teacher.code, teacher.secret)  # End class, on the teacher's phone
    at.run()  # what the page's watcher runs once the class's pulse says it closed
    assert not at.exception
    assert _class(at).teacher is None
    assert 'class="lnlab-live-prompt"' not in _texts(at)  # the slide, without the class
    assert not [b for b in at.button if b.key and b.key.startswith("live_ask_")]
    assert at.toast[0].value == f"Class {display_code(teacher.code)} has ended."
    assert state.of(claims.Cookies, at.session_state).written[claims.TEACHER_COOKIE] is None


def test_start_a_class_from_presenter_mode(classes):
    at = page_test("pages/padding.py", {"present": "1"}, timeout=120).run()
    at.button(key="live_start_present").click().run()
    teacher = _class(at).teacher
    assert classes.check_code(teacher.code).code == teacher.code
    assert display_code(teacher.code) in _texts(at)  # the join line, and the dialog's card
    assert at.button(key="live_show_join").label == "Show how to join"
    assert "lnlab-copy-teacher" in _texts(at)  # the teacher link to copy, in the dialog


def test_a_limit_reached_gets_a_message_not_a_traceback(classes, monkeypatch, tmp_path):
    limited = ClassStore(f"sqlite:///{tmp_path / 'limited.db'}", limits=Limits(classes=1))
    monkeypatch.setattr(store_module, "_default", limited)
    try:
        limited.open_class()
        at = page_test(PAGE).run()
        at.button(key="live_start").click().run()
        assert not at.exception
        assert "already runs 1 classes, its limit" in at.error[0].value
        assert _class(at).teacher is None
    finally:
        limited.close()


def test_a_database_that_is_down_gets_a_message_without_details(classes, monkeypatch):
    teacher = _teacher(classes)
    port = free_port()
    monkeypatch.setenv(store_module.URL_ENV, f"postgresql://lnlab@127.0.0.1:{port}/lnlab")
    store_module._default = None
    views = {
        "teacher": _browser(page_test(PAGE), "laptop-browser-000", teacher),
        "student": page_test(PAGE),
    }
    for who, at in views.items():
        at.run()
        if who == "student":
            at.text_input(key="live_code").input(teacher.code)
            at.button(key="live_join").click().run()
        assert not at.exception, who
        shown = _texts(at)
        assert "database is not answering" in shown, who
        for detail in (str(port), "127.0.0.1", "psycopg", "Traceback", "/"):
            assert detail not in " ".join(e.value for e in at.error), (who, detail)
    store_module._default = classes  # the fixture closes it


# --- what a script meets: each limit, through the page, with a message ---------------------


@pytest.fixture
def limited(monkeypatch, tmp_path):
    """The app's store with small limits, and every visitor at one network address."""
    opened = ClassStore(
        f"sqlite:///{tmp_path / 'limited.db'}",
        limits=Limits(starts_per_address=3, joins_per_address=4, students_per_address=6),
    )
    monkeypatch.setattr(store_module, "_default", opened)
    monkeypatch.setattr(claims, "client_address", lambda: "203.0.113.5")
    yield opened
    opened.close()


def test_start_end_start_from_one_browser_meets_the_per_address_limit(limited):
    at = _browser(page_test(PAGE), "one-script-browser-01").run()
    for _ in range(3):
        at.button(key="live_start").click().run()
        assert _class(at).teacher is not None
        at.button(key="live_end").click().run()
        at.button(key="live_end_confirm").click().run()
        assert _class(at).teacher is None
        at.button(key="live_report_close").click().run()  # the report, then the start page
    at.button(key="live_start").click().run()
    assert not at.exception
    assert "3 classes were started from your network in the last 10 minutes" in at.error[0].value
    assert "try again in 10 minutes" in at.error[0].value


def test_a_teacher_who_taught_here_starts_past_a_script_s_starts(limited):
    """Issue 38: a script's starts held a school's teachers back. The refusal says the way
    through, and the browser that taught a class with students here (its report's claim)
    starts one."""
    taught = limited.open_class(address="203.0.113.5")
    limited.join(taught.code, browser="a-student-browser-01", address="203.0.113.5")
    limited.end_class(taught.code, taught.teacher_secret)
    for _ in range(2):  # the script's: the network's 3 starts are used up
        limited.open_class(address="203.0.113.5")
    stranger = _browser(page_test(PAGE), "a-new-browser-0001").run()
    stranger.button(key="live_start").click().run()
    assert _class(stranger).teacher is None
    assert "A teacher who taught a class with students here goes first" in stranger.error[0].value
    at = _browser(page_test(PAGE), "the-teacher-browser-1")
    written = state.of(claims.Cookies, at.session_state).written
    written[claims.REPORTS_COOKIE] = f"{taught.code}.{taught.teacher_secret}"
    at.run()
    at.button(key="live_start").click().run()
    assert not at.exception and not at.error
    assert _class(at).teacher is not None


def test_one_browser_joining_again_and_again_is_one_student(limited):
    new = limited.open_class()
    at = _browser(page_test(PAGE, {"join": new.code}), "one-script-browser-01").run()
    for k in range(10):
        at.text_input(key="live_code").input(new.code)
        at.text_input(key="live_nickname").input(f"fake {k}")
        at.button(key="live_join").click().run()
        _class(at).student = None  # as if it left and came back with another name
        at.run()
    assert not at.exception and not at.error
    assert limited.check_code(new.code).students == 1
    assert limited.roster(new.code, new.teacher_secret) == ["fake 9"]


def test_new_browsers_from_one_address_are_stopped_and_told_to_wait(limited):
    new = limited.open_class()
    for k in range(5):
        at = _student(new.code, f"fresh-browser-{k:04d}")
        at.button(key="live_join").click().run()
        assert not at.exception
    assert "4 students joined from your network in the last minute" in at.error[0].value
    assert "wait a minute and press Join again" in at.error[0].value
    assert limited.check_code(new.code).students == 4


# --- after End: the teacher's report, each phone's end screen ---------------------------------


def _two_questions_answered(classes, teacher: TeacherLink) -> None:
    """Three students answer two questions, each revealed: Ann both right; Bo the first
    wrong, the second not at all; the third (no nickname) the first right, the second
    wrong."""
    first = live_question(QUESTION, "step_through")
    second = live_question(Question("which", "Which one?", "b", "Because.", ("a", "b", "c")), "p")
    ids = [
        classes.join(teacher.code, nickname=n, browser=f"{n}-phone-0001") for n in ("Ann", "Bo", "")
    ]
    for live, picks in ((first, (True, False, True)), (second, (True, None, False))):
        classes.pose(teacher.code, teacher.secret, live)
        for me, right in zip(ids, picks, strict=True):
            if right is not None:
                option = next(o for o in live.options if o.correct == right)
                classes.answer(teacher.code, me, live.qid, option.text)
        classes.reveal(teacher.code, teacher.secret, live.qid)


def test_after_end_the_teacher_gets_the_report_and_keeps_it(classes, monkeypatch):
    files = record_downloads(monkeypatch)
    teacher = _teacher(classes)
    at = _browser(page_test(PAGE), "the-teachers-laptop-01", teacher).run()
    _two_questions_answered(classes, teacher)
    at.button(key="live_end").click().run()
    at.button(key="live_end_confirm").click().run()
    assert not at.exception
    shown = _texts(at)
    assert f"Report of class {display_code(teacher.code)}" in at.header[0].value
    assert "3 students, 2 questions" in shown and "Mean score: **1.0 of 2**" in shown
    assert "Did not answer: Bo." in shown  # the second question
    (students,) = at.expander
    table = next(h.proto.body for h in students.get("html"))
    for name in ("Ann", "Bo", "Anonymous 1"):
        assert f">{name}</th>" in table
    csv_text = downloaded(at, "live_report_csv", files)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [(r["student"], r["question"], r["score"]) for r in rows] == [
        ("Ann", "1", "2"),
        ("Ann", "2", "2"),
        ("Bo", "1", "0"),
        ("Bo", "2", "0"),
        ("Anonymous 1", "1", "1"),
        ("Anonymous 1", "2", "1"),
    ]
    assert json.loads(downloaded(at, "live_report_json", files))["class"] == teacher.code
    written = state.of(claims.Cookies, at.session_state).written
    assert written[claims.REPORTS_COOKIE] == f"{teacher.code}.{teacher.secret}"

    # a new session of the same browser (its cookies): the past classes, and Delete
    later = page_test(PAGE)
    state.of(claims.Cookies, later.session_state).written.update(
        {claims.BROWSER_COOKIE: "the-teachers-laptop-01", **written}
    )
    later.run()
    assert "Your past classes" in [h.value for h in later.header]
    later.button(key=f"live_report_{teacher.code}").click().run()
    assert "Report of class" in later.header[0].value
    later.button(key="live_report_delete").click().run()
    later.button(key="live_report_delete_confirm").click().run()
    assert not later.exception
    assert "Your past classes" not in [h.value for h in later.header]
    assert state.of(claims.Cookies, later.session_state).written[claims.REPORTS_COOKIE] is None
    with pytest.raises(ClassError, match="there is no report"):
        classes.report(teacher.code, teacher.secret)


def test_each_phone_gets_its_end_screen_then_the_join_form(classes):
    teacher = _teacher(classes)
    live = live_question(QUESTION, "step_through")
    student = _student(teacher.code)
    student.text_input(key="live_nickname").input("Ada")
    student.button(key="live_join").click().run()
    classes.pose(teacher.code, teacher.secret, live)
    student.run()
    wrong = next(k for k, o in enumerate(live.options) if o.group == "d_minus_1")
    student.button(key=f"live_opt_{live.qid}_{wrong}").click().run()
    classes.end_class(teacher.code, teacher.secret)  # ended before the reveal
    for at in (student.run(), _student(teacher.code)):  # and after a reload
        assert not at.exception
        assert at.metric[0].label == "Your final score" and at.metric[0].value == "0 / 1"
        assert "Dividing by D − 1" in at.warning[0].value
        assert f"The answer: **{right_options(live)[0]}**" in at.warning[0].value
        assert not [b for b in at.button if b.key == "live_leave"]
    at.button(key="live_after_end").click().run()
    assert not at.exception
    assert _class(at).student is None and "join" not in at.query_params
    assert at.text_input(key="live_code").value == ""  # the join form, not a blank page
    assert at.button(key="live_join")


def test_a_teacher_link_for_another_class_asks_before_it_switches(classes):
    """Issue 38: a student starts class B and sends the teacher a link with B's secret. The
    teacher's browser teaches A: opening the link asks first, and A stays the class until the
    teacher says otherwise."""
    mine, theirs = _teacher(classes), _teacher(classes)
    at = _browser(page_test(PAGE, {"class": theirs.code, "teacher": theirs.secret}), teacher=mine)
    at.run()
    assert not at.exception
    assert _class(at).teacher == mine
    assert any(
        f"teacher's link for class {display_code(theirs.code)}" in w.value for w in at.warning
    )
    assert "teacher" not in at.query_params  # the secret leaves the address bar all the same
    at.button(key="live_switch_no").click().run()
    assert _class(at).teacher == mine and _class(at).switch is None
    again = _browser(
        page_test(PAGE, {"class": theirs.code, "teacher": theirs.secret}), teacher=mine
    )
    again.run()
    again.button(key="live_switch_yes").click().run()
    assert _class(again).teacher == theirs
    written = state.of(claims.Cookies, again.session_state).written[claims.TEACHER_COOKIE]
    assert written == f"{theirs.code}.{theirs.secret}"


def test_a_teacher_link_for_an_ended_class_does_not_ask(classes):
    """Nothing to lose: the browser's own class has ended, so the link is followed."""
    mine, theirs = _teacher(classes), _teacher(classes)
    classes.end_class(mine.code, mine.secret)
    at = _browser(page_test(PAGE, {"class": theirs.code, "teacher": theirs.secret}), teacher=mine)
    at.run()
    assert _class(at).teacher == theirs and _class(at).switch is None


def test_the_teacher_removes_a_fake_student_and_closes_joining(classes):
    """Issue 38: fake students filled a class and the teacher had no way out."""
    at = page_test(PAGE).run()
    at.button(key="live_start").click().run()
    teacher = _class(at).teacher
    classes.join(teacher.code, nickname="Ada", browser="phone-ada-browser")
    time.sleep(0.01)  # joined_at orders the roster
    classes.join(teacher.code, nickname="spam", browser="phone-spam-browser")
    at.run()
    pick = at.multiselect(key="live_remove_pick")
    assert [o.split(" · joined ")[0] for o in pick.options] == ["Ada", "spam"]  # who, and when
    assert all(re.fullmatch(r".* · joined \d\d:\d\d:\d\d", o) for o in pick.options)
    assert "in the last minute" in _texts(at)
    pick.select(pick.options[1]).run()
    at.button(key="live_remove").click().run()
    assert not at.exception
    assert classes.roster(teacher.code, teacher.secret) == ["Ada"]
    at.toggle(key="live_joining").set_value(False).run()
    late = _student(teacher.code, "phone-late-browser")
    late.button(key="live_join").click().run()
    assert "closed joining" in _texts(late)
    assert _class(late).student is None


def _holding(at, current: TeacherLink | None, *kept: TeacherLink):
    """The session of the teacher's browser: it teaches `current` (None: no class) and keeps
    the claims of `kept` too."""
    _browser(at, "the-teachers-laptop-01", current)
    held = [current, *kept] if current else list(kept)
    reports = ":".join(f"{t.code}.{t.secret}" for t in held)
    state.of(claims.Cookies, at.session_state).written[claims.REPORTS_COOKIE] = reports
    return at


def _teach_buttons(at) -> list[str]:
    return [b.label for b in at.button if b.key and b.key.startswith("live_teach_")]


def test_a_browser_teaching_two_classes_goes_back_to_the_other(classes):
    """Issue 38: the teacher teaches A, opens the teacher's link of B (another section) and
    switches; A is still open and this browser goes back to it with one press, then to B."""
    at = _browser(page_test(PAGE), "the-teachers-laptop-01").run()
    at.button(key="live_start").click().run()
    a, b = _class(at).teacher, _teacher(classes)
    written = state.of(claims.Cookies, at.session_state).written
    again = _browser(page_test(PAGE, {"class": b.code, "teacher": b.secret}))
    state.of(claims.Cookies, again.session_state).written.update(written)
    again.run()
    again.button(key="live_switch_yes").click().run()
    assert _class(again).teacher == b
    assert _teach_buttons(again) == [f"Teach {display_code(a.code)}"]
    assert "Your other open classes" in [h.value for h in again.header]
    again.toggle(key="live_joining").set_value(False).run()  # B's joining closes
    again.button(key=f"live_teach_{a.code}").click().run()
    assert not again.exception
    assert _class(again).teacher == a
    assert again.toggle(key="live_joining").value  # A's is open
    written = state.of(claims.Cookies, again.session_state).written
    assert written[claims.TEACHER_COOKIE] == f"{a.code}.{a.secret}"
    assert display_code(a.code) in _texts(again)  # A's join card
    assert _teach_buttons(again) == [f"Teach {display_code(b.code)}"]  # B stays listed
    assert classes.check_teacher(b.code, b.secret)  # and open
    again.button(key=f"live_teach_{b.code}").click().run()
    assert _class(again).teacher == b
    assert _teach_buttons(again) == [f"Teach {display_code(a.code)}"]


def test_an_ended_class_or_a_wrong_secret_is_not_listed(classes):
    teaching, ended, other, wrong = (_teacher(classes) for _ in range(4))
    classes.end_class(ended.code, ended.secret)
    forged = TeacherLink(wrong.code, "not-this-class-secret")
    at = _holding(page_test(PAGE), teaching, ended, forged, other).run()
    assert not at.exception
    assert _teach_buttons(at) == [f"Teach {display_code(other.code)}"]
    # with no class taught now: the same list under Start a class, and Teach takes the class
    start = _holding(page_test(PAGE), None, ended, forged, other).run()
    assert _class(start).teacher is None
    assert _teach_buttons(start) == [f"Teach {display_code(other.code)}"]
    classes.end_class(other.code, other.secret)  # ended since the list was drawn
    start.button(key=f"live_teach_{other.code}").click().run()
    assert _class(start).teacher is None
    assert "has ended" in _texts(start) and not _teach_buttons(start)


def test_the_other_classes_never_show_a_secret(classes):
    teaching, a, b = (_teacher(classes) for _ in range(3))
    forged = TeacherLink(a.code, "a-made-up-secret-0001")
    for current in (teaching, None):
        at = _holding(page_test(PAGE), current, forged, a, b).run()
        assert len(_teach_buttons(at)) == 2
        shown = _texts(at) + "\n".join(w.label for w in at.button)
        unseen = re.sub(r"<script\b.*?</script>", "", shown, flags=re.S)
        for secret in (a.secret, b.secret, forged.secret):
            assert secret not in unseen
        copied = f'teacher={teaching.secret}">Copy'  # the copy button's data: this class's
        assert unseen.count(teaching.secret) == unseen.count(copied) == (current is not None)
