"""Widgets that survive bad input: the last good value, numbers kept in range, editable grids
that refuse crafted edits, and the preset chooser."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from lnlab.errors import InputError
from lnlab.markdown import plain
from lnlab.parse import MAX_CHARS

T = TypeVar("T")
KEEP = "session"  # a widget keeps its value while hidden (presenter mode, other sections)


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


def within(key: str, lo: float, hi: float, default: float, what: str) -> None:
    """Reset session value `key` to `default`, with a message, unless it is a number in lo..hi.

    Streamlit would silently clamp an out-of-range value (from a crafted message or stale
    state) to the widget's minimum; this says so instead. Call before creating the widget.
    """
    value = st.session_state.get(key, default)
    try:
        ok = lo <= float(value) <= hi
    except (TypeError, ValueError):
        ok = False
    if not ok:
        show_error(InputError(f'{what} must be between {lo:g} and {hi:g}, not "{str(value)[:20]}"'))
        st.session_state[key] = default


def data_editor(
    data: pd.DataFrame, key: str, on_change: Callable[[], None] | None = None, **kwargs: object
) -> pd.DataFrame:
    """st.data_editor that survives an edit no browser would send (a crafted message), and
    does not keep every run of the page alive.

    Streamlit itself fails to apply an edit to a row or column the grid does not have; the
    edit is dropped, the grid shows its data again and a message says why.

    A grid whose data is part of its identity (num_rows="dynamic") gets a new widget id with
    every change, and Streamlit 1.67 keeps each old id's metadata, callback included, for the
    whole session. A callback defined in a page holds that run's whole namespace (its lesson,
    figures, ...): 25 KB per edit, for ever. So the grid's callback is `_grid_changed` here,
    which calls the page's latest `on_change`, the only one kept.
    """
    if problem := st.session_state.pop(f"_{key}_problem", None):
        show_error(InputError(problem))
    st.session_state[f"_{key}_on_change"] = on_change
    callback = {"on_change": _grid_changed, "args": (key,)} if on_change else {}
    try:
        return st.data_editor(data, key=key, **callback, **kwargs)
    except (KeyError, IndexError, TypeError, ValueError) as err:
        del st.session_state[key]
        st.session_state[f"_{key}_problem"] = f"the table edit could not be applied ({err!s:.40})"
        st.rerun()


def _grid_changed(key: str) -> None:
    """The callback of every grid: the page's own, from its latest run."""
    if on_change := st.session_state.get(f"_{key}_on_change"):
        on_change()


def preset_choice(label: str, presets: Sequence[Any], key: str, **kwargs: Any) -> str:
    """A selectbox of `presets` (anything with key, title, source) shown by title, the chosen
    one's source as its caption. Returns the chosen key; `kwargs` go to st.selectbox."""
    by_key = {p.key: p for p in presets}
    chosen = st.selectbox(
        label, list(by_key), format_func=lambda k: by_key[k].title, key=key, **kwargs
    )
    st.caption(plain(by_key[chosen].source))
    return chosen


def embeddings_box(key: str, height: int, **kwargs: Any) -> None:
    """The text box of token embeddings, as every page that takes them words it; `kwargs` go
    to st.text_area (on_change, args, ...)."""
    st.text_area(
        "Token embeddings: one token per line, numbers separated by commas or spaces",
        key=key,
        height=height,
        max_chars=MAX_CHARS,
        help="You can also paste a Python list, np.array(...) or tensor(...) printout.",
        persist_state=KEEP,
        **kwargs,
    )


def token_choice(where: DeltaGenerator, label: str, key: str, labels: Sequence[str]) -> None:
    """A selectbox of the tokens, "1: Hello", "2: ,", ..., holding the 0-based index."""
    where.selectbox(
        label,
        range(len(labels)),
        format_func=lambda i: f"{i + 1}: {labels[i]}",
        key=key,
        persist_state=KEEP,
    )
