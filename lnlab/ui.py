"""The one module with Streamlit in it: what every page shares.

Importing this module first (app.py does) loads the heavy libraries once, under Python's
module lock, before any page can race another session to import them half-way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np  # noqa: F401 - imported up front on purpose, see the module docstring
import pandas as pd  # noqa: F401
import plotly.graph_objects as go  # noqa: F401
import streamlit as st

from lnlab.errors import InputError
from lnlab.markdown import plain

T = TypeVar("T")


@dataclass(frozen=True)
class PageInfo:
    """A page of the app: its file, its title in the navigation, and one line about it."""

    path: str
    title: str
    icon: str
    blurb: str


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "pages/step_through.py",
        "Step through one token",
        ":material/stairs:",
        "Mean, variance, std with epsilon, normalize, scale and shift: one token at a time.",
    ),
    PageInfo(
        "pages/padding.py",
        "Batch Norm vs Layer Norm",
        ":material/table_rows:",
        "How padding zeros corrupt Batch Norm's statistics, and why Layer Norm does not care.",
    ),
    PageInfo(
        "pages/transformer.py",
        "In the Transformer",
        ":material/account_tree:",
        "Add & Norm, post-norm versus pre-norm, and what depth does without normalization.",
    ),
    PageInfo(
        "pages/conventions.py",
        "Conventions and checker",
        ":material/rule:",
        "PyTorch, Keras, BERT, the Annotated Transformer, RMSNorm; check a tutorial's numbers.",
    ),
    PageInfo(
        "pages/gpu.py",
        "Run it on the GPU",
        ":material/memory:",
        "The same steps in torch on CUDA, MPS or the CPU: parity with float64 and timings.",
    ),
)


def last_good(key: str, compute: Callable[[], T], fallback: T) -> T:
    """Run `compute`; on bad input show its message inline and return the last good result.

    The last good result lives in session state under `key`, so a typo never blanks a page.
    """
    try:
        value = compute()
    except InputError as err:
        show_error(err)
        return st.session_state.get(key, fallback)
    st.session_state[key] = value
    return value


def show_error(err: InputError) -> None:
    """Show an input error inline, as plain text, saying that the last good input stays."""
    st.error(f"{plain(str(err))}. The page keeps the last valid input.", icon=":material/error:")
