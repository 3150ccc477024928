"""The training lab's run in a page: a progress bar with the time left, the fair queue's
place while waiting, and a message (never a traceback) when the run cannot be had."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from lnlab.errors import InputError
from lnlab.markdown import plain
from lnlab.training.config import TrainConfig
from lnlab.training.run import LabResult
from lnlab.training.worker import LAB, time_left


def session_id() -> str:
    """This visitor's Streamlit session: their place in the server's fair queue."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def train(config: TrainConfig) -> LabResult | None:
    """`config`'s result, run now (or followed, or cached) with a progress bar; None, with a
    message on the page, when it could not be had."""
    bar = st.progress(0.0, text="Starting the training process...")

    def progress(done: int, total: int, seconds: float) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=time_left(done, total, seconds))

    def waiting(place: int) -> None:
        bar.progress(0.0, text=f"Waiting for the server: {place} ahead of you or next (1)")

    try:
        result = LAB.train(config, session_id(), progress, waiting)
    except InputError as err:
        bar.empty()
        st.warning(plain(str(err)), icon=":material/hourglass:")
        return None
    bar.empty()
    return result
