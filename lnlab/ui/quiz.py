"""Predict, then reveal: a question to answer before a section shows its result."""

from __future__ import annotations

import streamlit as st

from lnlab.errors import InputError
from lnlab.markdown import plain
from lnlab.quiz import Question, diagnose, score
from lnlab.ui.inputs import show_error
from lnlab.ui.rerun import rerun_app

QUIZ_KEY = "quiz_marks"  # {question id: right at the first try}; survives page switches


def _mark(question: Question) -> None:
    """The Check button's callback: it runs before the rerun, so the sidebar score is current."""
    try:
        verdict = diagnose(question, st.session_state.get(f"q_{question.qid}") or "")
    except InputError as err:
        st.session_state[f"_q_problem_{question.qid}"] = err
        return
    st.session_state.setdefault(QUIZ_KEY, {}).setdefault(question.qid, verdict.correct)
    st.session_state.setdefault("quiz_verdicts", {})[question.qid] = verdict
    rerun_app()  # the sidebar's score, outside the lesson's fragment, shows the new mark


def ask(question: Question) -> bool:
    """A question to answer before the page reveals it; the first try counts for the score.

    Returns True once the question has been checked (the page may then reveal the answer).
    """
    with st.container(border=True):
        st.markdown(f"**Predict:** {plain(question.prompt)}")
        key = f"q_{question.qid}"
        if question.choices:
            st.radio("Your answer", question.choices, index=None, key=key)
        else:
            st.text_input("Your answer", key=key, placeholder="a number")
        st.button("Check", key=f"check_{question.qid}", on_click=_mark, args=(question,))
        if problem := st.session_state.pop(f"_q_problem_{question.qid}", None):
            show_error(problem)
        shown = st.session_state.get("quiz_verdicts", {}).get(question.qid)
        if shown is not None and shown.correct:
            st.success(plain(shown.message), icon=":material/check:")
        elif shown is not None:
            st.warning(plain(shown.message), icon=":material/lightbulb:")
    return shown is not None


def sidebar_score() -> None:
    """The session's score in the sidebar, once a question has been answered."""
    right, answered = score(st.session_state.get(QUIZ_KEY, {}))
    if answered:
        st.sidebar.metric("Predictions right (first try)", f"{right} / {answered}")
