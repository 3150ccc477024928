"""Predict, then reveal: a question to answer before a section shows its result.

A question with wrong answers (lnlab.teach.quiz.Question.wrong) offers them beside the truth as a
radio, easy to tap on a phone; a numeric one may also be typed. The feedback names the
misconception a wrong answer matches (lnlab.teach.quiz.diagnose), with the example's numbers.
"""

from __future__ import annotations

import streamlit as st

from lnlab.core.errors import InputError
from lnlab.teach.markdown import plain
from lnlab.teach.quiz import RIGHT, Diagnosis, Question, diagnose, options, score
from lnlab.ui.assist import land
from lnlab.ui.inputs import KEEP, show_error, text_box
from lnlab.ui.rerun import rerun_app

MAX_ANSWER_CHARS = 40  # a number, written out
QUIZ_KEY = "quiz_marks"  # {question id: right at the first try}; survives page switches
DIAGNOSES_KEY = "quiz_verdicts"  # {question id: the latest Diagnosis}, shown under the question
TOGGLE_LABEL = "Predict before you see"
TOGGLE_HELP = (
    "Some sections first ask you to predict what they show; a wrong answer tells you which "
    "common mistake it matches. Your first tries are scored in the sidebar."
)


def predict_toggle(key: str) -> None:
    """The page's switch that turns its questions on (lesson_view's `quiz_key`)."""
    st.toggle(TOGGLE_LABEL, key=key, persist_state=KEEP, help=TOGGLE_HELP)


def _given(question: Question) -> tuple[str, bool]:
    """The answer to mark, and whether it is a picked option: a typed number wins over it."""
    typed = str(st.session_state.get(f"q_{question.qid}_typed") or "").strip()
    picked = st.session_state.get(f"q_{question.qid}")
    if typed:
        return typed, False
    if picked is None or str(picked).strip() == "":
        raise InputError("pick an answer first" if _offers(question) else "type a number first")
    return str(picked), _offers(question)


def _offers(question: Question) -> bool:
    return bool(question.choices or question.wrong)


def _mark(question: Question, typed: bool) -> None:
    """The Check button's callback: it runs before the rerun, so the sidebar score is current.
    On a slide (not `typed`) the question gives way to its verdict, which takes the focus."""
    try:
        given, picked = _given(question)
        diagnosis = diagnose(question, given, picked=picked)
    except InputError as err:
        st.session_state[f"_q_problem_{question.qid}"] = err
        return
    st.session_state.setdefault(QUIZ_KEY, {}).setdefault(question.qid, diagnosis.correct)
    st.session_state.setdefault(DIAGNOSES_KEY, {})[question.qid] = diagnosis
    if not typed:
        land(f"verdict_{question.qid}", itself=True)
    rerun_app()  # the sidebar's score, outside the lesson's fragment, shows the new mark


def verdict(question: Question) -> str:
    """The checked question's verdict in a line ("Dividing by D − 1. The answer is 5."), or ""."""
    shown: Diagnosis | None = st.session_state.get(DIAGNOSES_KEY, {}).get(question.qid)
    return plain(shown.headline) if shown is not None else ""


def ask(question: Question, *, typed: bool = True) -> bool:
    """A question to answer before the page reveals it; the first try counts for the score.

    Questions with options show them as a radio; numeric ones also take a typed number when
    `typed`. `typed` is off on slides, where space is short: there a checked question gives
    way to its verdict alone (Diagnosis.headline). Returns True once the question has been
    checked (the page may then reveal the answer).
    """
    shown: Diagnosis | None = st.session_state.get(DIAGNOSES_KEY, {}).get(question.qid)
    if shown is not None and not typed:  # on a slide, once checked: the verdict alone
        with st.container(key=f"verdict_{question.qid}"):
            _feedback(shown, shown.headline)
        return True
    with st.container(border=True, key=f"question_{question.qid}"):
        st.markdown(f"**Predict:** {plain(question.prompt)}")
        key = f"q_{question.qid}"
        if _offers(question):
            st.radio("Your answer", options(question), index=None, key=key, horizontal=True)
            if typed and not question.choices:
                text_box(
                    st.text_input,
                    "Or type a number",
                    f"{key}_typed",
                    MAX_ANSWER_CHARS,
                    placeholder="a number",
                )
        else:
            text_box(st.text_input, "Your answer", key, MAX_ANSWER_CHARS, placeholder="a number")
        st.button("Check", key=f"check_{question.qid}", on_click=_mark, args=(question, typed))
        if problem := st.session_state.pop(f"_q_problem_{question.qid}", None):
            show_error(problem)
        if shown is not None:
            _feedback(shown, shown.message)
    return shown is not None


def _feedback(diagnosis: Diagnosis, text: str) -> None:
    """Right in green; a wrong answer in amber, led by the misconception it matches."""
    if diagnosis.group == RIGHT:
        st.success(plain(text), icon=":material/check:")
    else:
        st.warning(plain(text), icon=":material/lightbulb:")


def sidebar_score() -> None:
    """The session's score in the sidebar, once a question has been answered."""
    right, answered = score(st.session_state.get(QUIZ_KEY, {}))
    if answered:
        st.sidebar.metric("Predictions right (first try)", f"{right} / {answered}")
