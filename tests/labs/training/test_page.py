"""AppTest of pages/training.py: the defaults, every setting, bad links and crafted values
(a notice, never a traceback), the cap, a tiny run trained from the Train button through the
worker process, every slide with its numbers, predictions on its questions, a live class
asked one, and the script download. About 40 s."""

from __future__ import annotations

import pytest
from helpers import downloaded, front_of_line_held, page_test, record_downloads
from streamlit.testing.v1 import AppTest

from lnlab.classroom import store
from lnlab.classroom.links import TeacherLink
from lnlab.labs.training import lesson as slides
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.worker import LAB
from lnlab.teach.markdown import plain
from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.teach.quiz import RIGHT, Question, diagnose, options
from lnlab.ui import claims, line, state
from lnlab.ui.classroom import ClassSession

PAGE = "pages/training.py"
TINY_LINK = {"var": "pre,bn", "layers": "1", "steps": "20", "seed": "7"}
TIMEOUT = 180  # torch, and the worker process's start on a shared machine
LOCKED = "Check your prediction to see this step's result."


def _open(query: dict | None = None) -> AppTest:
    at = page_test(PAGE, query, timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    html = "\n".join(h.proto.body for h in at.get("html"))  # the "?" box, a class's question
    return "\n".join(m.value for m in at.markdown) + "\n".join(i.value for i in at.info) + html


def test_defaults_wait_for_the_train_button() -> None:
    at = _open()
    assert at.pills(key="tr_variants").value == ["post", "pre", "bn", "mbn"]
    assert at.button(key="tr_run").label in ("Train", "Trained (cached)")
    at.session_state["tr_slide"] = 1
    at.run()
    if LAB.cached(TrainConfig()) is None:
        assert slides.NOT_YET in _text(at)
    assert not at.error


@pytest.mark.parametrize(
    ("query", "notice"),
    [
        ({"layers": "99"}, "layers"),
        ({"lr": "7"}, "lr"),
        ({"pad": "33"}, "pad"),
        ({"warmup": "maybe"}, "warmup"),
        ({"var": "x" * 50}, "var"),
    ],
)
def test_bad_links_open_the_default_with_a_notice(query: dict, notice: str) -> None:
    at = _open(query)
    assert any(notice in w.value for w in at.warning)
    assert at.number_input(key="tr_layers").value == TrainConfig().layers


def test_unknown_variants_in_a_link_are_refused() -> None:
    at = _open({"var": "post,<script>"})
    assert any("unknown variants" in e.value for e in at.error)
    assert at.pills(key="tr_variants").value == ["post", "pre", "bn", "mbn"]


def test_a_second_tab_of_the_same_browser_gets_no_second_place(monkeypatch) -> None:
    """One browser (one cookie) whose first tab holds the front of the heavy-work line: its
    second tab pressing Train is told why it gets no place, and trains nothing."""
    browser = "fedcba9876543210fedcba9876543210"
    cookies = {claims.BROWSER_COOKIE: browser}
    monkeypatch.setattr(line.st.context.__class__, "cookies", cookies, raising=False)
    at = _open(TINY_LINK)
    started = LAB.runs_started
    with front_of_line_held(browser):  # the first tab's run
        # what Train asks for (AppTest reruns the page once more after a click inside the
        # lesson, which a browser does not, and that run would clear the message)
        at.session_state["tr_train"] = True
        at.run()
    assert not at.exception
    assert any("another tab of this browser" in w.value for w in at.warning)
    assert LAB.runs_started == started


def test_over_the_cap_says_so_and_offers_no_button() -> None:
    at = _open()
    at.pills(key="tr_variants").set_value(["none", "post", "pre", "rms", "bn"]).run()
    at.number_input(key="tr_layers").set_value(8).run()
    at.number_input(key="tr_steps").set_value(300).run()
    assert any("cap" in e.value for e in at.error)
    assert not [b for b in at.button if b.key == "tr_run"]
    assert not at.exception


def test_every_setting_goes_into_the_link() -> None:
    at = _open()
    at.pills(key="tr_variants").set_value(["pre", "rms"]).run()
    at.number_input(key="tr_layers").set_value(2).run()
    at.radio(key="tr_lr").set_value(1e-2).run()
    at.radio(key="tr_padding").set_value(0.25).run()
    at.toggle(key="tr_warmup").set_value(True).run()
    at.number_input(key="tr_steps").set_value(40).run()
    at.number_input(key="tr_seed").set_value(5).run()
    at.toggle(key="tr_quiz").set_value(True).run()
    assert not at.exception
    link = {k: str(at.query_params[k]) for k in at.query_params}
    assert link | {"s": "1"} == {
        "v": "1",
        "var": "pre,rms",
        "layers": "2",
        "lr": "0.01",
        "pad": "25",
        "warmup": "1",
        "steps": "40",
        "seed": "5",
        "s": "1",
        "q": "1",
    }


@pytest.mark.usefixtures("classes")
def test_train_then_every_slide_states_its_numbers(monkeypatch) -> None:
    files = record_downloads(monkeypatch)
    at = _open(TINY_LINK)
    try:
        at.button(key="tr_run").click().run()
    finally:
        LAB.worker.stop()  # the rest of the suite does not need its process
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    config = TrainConfig(variants=("pre", "bn"), layers=1, steps=20, seed=7)
    result = LAB.cached(config)
    assert result is not None
    assert at.button(key="tr_run").label == "Trained (cached)"
    seen = []
    for k in range(7):
        at.session_state["tr_slide"] = k
        at.run()
        assert not at.exception
        seen.append(_text(at))
    assert "naive Batch Norm" in seen[1] and "pre-LN" in seen[1]
    depth = result.depth_grads
    assert f"**{depth['post'][0][-1] / depth['pre'][0][-1]:.2f}x** with one block" in seen[3]
    assert f"{result.warmup_on.losses[-1]:.3f}" not in seen[4]  # the mean of the last 10
    naive = result.run("bn")
    assert f"{100 * slides.fluctuation(naive.bn_var):.1f}% from step to step" in seen[5]
    assert "Largest gap" in seen[6]
    assert "def train_variant" in downloaded(at, "tr_script", files)

    at.toggle(key="tr_quiz").set_value(True).run()
    assert str(at.query_params["q"]) == "1"
    lesson = slides.slides(config, result)
    for k, misconception, finding in (
        (3, "depth_irrelevant", "x** with one block"),
        (6, "running_is_batch", "Largest gap"),
    ):
        at.session_state["tr_slide"] = k
        at.run()
        _predict(at, lesson.sections[k].question, misconception, finding)

    # the teacher of a live class asks the slide's question; the result waits for Reveal
    new = store.default_store().open_class()
    state.of(ClassSession, at.session_state).teacher = TeacherLink(new.code, new.teacher_secret)
    at.run()
    question = lesson.sections[6].question
    at.button(key=f"live_ask_{question.qid}").click().run()
    posed = store.default_store().current(new.code)
    assert posed is not None and posed.question.qid == question.qid
    assert posed.question.page == "training"
    assert [o.text for o in posed.question.options] == list(options(question))
    assert "lnlab-live-prompt" in _text(at) and "Largest gap" not in _text(at)


def _predict(at: AppTest, question: Question, misconception: str, finding: str) -> None:
    """Locked until checked; the misconception's option is named; the right one is marked
    right and the slide's finding shows."""
    assert LOCKED in _text(at) and finding not in _text(at)
    group = {diagnose(question, o).group: o for o in options(question)}
    for option, kind, start in (
        (group[misconception], "warning", plain(MISCONCEPTIONS[misconception].name)),
        (group[RIGHT], "success", "Right"),
    ):
        at.radio(key=f"q_{question.qid}").set_value(option)
        at.button(key=f"check_{question.qid}").click().run()
        assert not at.exception
        assert getattr(at, kind)[-1].value.startswith(start)
    assert LOCKED not in _text(at) and finding in _text(at)
    assert at.session_state["quiz_marks"][question.qid] is False  # the first try counts
