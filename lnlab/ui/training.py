"""The training lab's run in a page: the place in line while waiting (ui.line), a progress
bar with the time left while training, and a message (never a traceback) when the run cannot
be had."""

from __future__ import annotations

import streamlit as st

from lnlab.core.errors import InputError
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.run import LabResult
from lnlab.labs.training.worker import LAB, Progress
from lnlab.ui.line import Line, visitor
from lnlab.ui.runtime.turns import turn_aside


def train(config: TrainConfig) -> LabResult | None:
    """`config`'s result, run now (or followed, or cached) with a progress bar; None, with a
    message on the page, when it could not be had."""
    line = Line()
    bar = st.progress(0.0, text="Starting the training process...")

    def progress(p: Progress) -> None:
        if not p.place and line.first is not None:
            line.clear()  # training again after a wait in line
        bar.progress(p.share, text=p.text())

    try:
        with turn_aside():  # the run waits for the worker process
            result = LAB.train(config, visitor(), progress, line.on_wait)
    except InputError as err:  # BusyError too: the line is full or too long
        bar.empty()
        line.refused(str(err))
        return None
    bar.empty()
    if waited := line.done():
        st.caption(waited)
    return result
