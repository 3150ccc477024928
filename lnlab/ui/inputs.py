"""Widgets that survive bad input: the last good value, text boxes whose size the server
checks, numbers kept in range, editable grids that refuse crafted edits, and the preset chooser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from lnlab.core.errors import InputError
from lnlab.core.parse import MAX_CHARS
from lnlab.teach.markdown import plain
from lnlab.ui import state

T = TypeVar("T")
_MARKDOWN = re.compile(r"[\\`*_{}\[\]<>$~|#]|:\w+:|^\s*([-+>]|\d+\.)\s")  # what Markdown reads
KEEP = "session"  # a widget keeps its value while hidden (presenter mode, other sections)
MAX_CELL_CHARS = 64  # one grid cell: a number takes at most 24 characters, a word 40


@dataclass
class TextBoxes:
    """A session's text boxes whose size the server checks (text_box; lnlab.ui.state): by box
    key, its (label, max_chars) for every box drawn so far, its last value under its limit, and
    why its value was refused, until shown."""

    limits: dict[str, tuple[str, int]] = field(default_factory=dict)
    fitting: dict[str, Any] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)


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


def text_box(widget: Callable[..., T], label: str, key: str, max_chars: int, **kwargs: Any) -> T:
    """st.text_area or st.text_input (`widget`) whose size the server checks, not only the
    browser; `kwargs` go to the widget.

    Streamlit cuts a longer value (from a crafted message; a browser stops at `max_chars`) to
    `max_chars` without a word, so a value that reaches the limit may have been cut: it is
    refused, with a message, and the box keeps its last value under the limit. The page's
    `on_change` runs only for a value that fits. check_text_sizes repeats the check at the
    start of every run, before a page reads its boxes.
    """
    boxes = state.of(TextBoxes)
    boxes.limits[key] = (label, max_chars)
    _refuse_oversized(key)
    if message := boxes.refused.pop(key, None):
        show_error(InputError(message))  # refused in a fragment's run, or before its box
    if on_change := kwargs.pop("on_change", None):
        kwargs["on_change"] = _fitting_change
        kwargs["args"] = (key, on_change, kwargs.get("args", ()))
    return widget(label, key=key, max_chars=max_chars, **kwargs)


def check_text_sizes() -> None:
    """Refuse every text box's value that reached its limit and show why (see text_box)."""
    boxes = state.of(TextBoxes)
    for key in boxes.limits:
        _refuse_oversized(key)
    refused, boxes.refused = boxes.refused, {}
    for message in refused.values():
        show_error(InputError(message))


def _refuse_oversized(key: str) -> bool:
    """Put back box `key`'s last value under its limit if its value reached the limit (the
    box's default if it has none); record why. True if the value was refused."""
    boxes = state.of(TextBoxes)
    label, limit = boxes.limits[key]
    fitting = boxes.fitting
    value = st.session_state.get(key)
    if not isinstance(value, str) or len(value) < limit:
        fitting[key] = value
        return False
    if key in fitting:
        st.session_state[key] = fitting[key]
    else:
        del st.session_state[key]
    boxes.refused[key] = (
        f"{label.split(':')[0]}: the text reached the limit of {limit:,} characters, "
        "where longer text is cut off"
    )
    return True


def _fitting_change(key: str, on_change: Callable[..., None], args: Sequence[Any]) -> None:
    """The callback of every text box: the page's own, for a value under the limit."""
    if not _refuse_oversized(key):
        on_change(*args)


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


def keep_in_range(key: str, lo: float, hi: float, default: float, what: str) -> None:
    """Put session value `key` back to its last good value (else `default`) unless it is a
    number in lo..hi, and keep the reason for `number_box` to show under the box. Call
    before anything reads the value."""
    kept = st.session_state.get(f"_{key}_kept", default)
    value = st.session_state.get(key, default)
    try:
        ok = lo <= float(value) <= hi
    except (TypeError, ValueError):
        ok = False
    if ok:
        st.session_state[f"_{key}_kept"] = float(value)
        return
    st.session_state[key] = kept
    st.session_state[f"_{key}_problem"] = (
        f'{what} must be between {lo:g} and {hi:g}: "{str(value)[:20]}" is not, so the page '
        f"keeps {kept:g}."
    )


def number_box(where: DeltaGenerator, label: str, key: str, **kwargs: Any) -> None:
    """st.number_input without the browser's own range check, which turns an out-of-range
    number red and gives the reason only on hovering an icon (ε = 100 on the step-through
    kept the old ε without a visible word): `keep_in_range` checks it on the server, and
    its reason shows here, under the box."""
    where.number_input(label, key=key, **kwargs)
    if problem := st.session_state.pop(f"_{key}_problem", None):
        where.error(problem, icon=":material/error:")


def data_editor(
    data: pd.DataFrame,
    key: str,
    max_rows: int,
    on_change: Callable[[], None] | None = None,
    **kwargs: object,
) -> pd.DataFrame:
    """st.data_editor that survives an edit no browser would send (a crafted message), and
    does not keep every run of the page alive.

    Streamlit itself fails to apply an edit to a row or column the grid does not have, and
    would apply an edit of a million added rows one row at a time; an edit that fails, leaves
    more than `max_rows` rows or puts more than MAX_CELL_CHARS characters in a cell is
    dropped, the grid shows its data again and a message says why.

    A grid whose data is part of its identity (num_rows="dynamic") gets a new widget id with
    every change, and Streamlit 1.67 keeps each old id's metadata, callback included, for the
    whole session. A callback defined in a page holds that run's whole namespace (its lesson,
    figures, ...): 25 KB per edit, for ever. So the grid's callback is `_grid_changed` here,
    which calls the page's latest `on_change`, the only one kept.
    """
    st.session_state[f"_{key}_rows"] = (len(data), max_rows)
    if problem := _edit_problem(st.session_state.get(key), len(data), max_rows):
        del st.session_state[key]
        st.session_state[f"_{key}_problem"] = problem
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


def _edit_problem(edits: object, rows: int, max_rows: int) -> str | None:
    """What is wrong with a grid's edits (Streamlit's {edited_rows, added_rows, deleted_rows})
    in size, or None; their values are checked where they are applied."""
    if not isinstance(edits, dict):
        return None
    added = edits.get("added_rows") or []
    edited = edits.get("edited_rows") or {}
    if rows + len(added) > max_rows or len(edited) > rows + len(added):
        return f"the table holds at most {max_rows} rows"
    cells = [*edited.values(), *added]
    values = (v for cell in cells if isinstance(cell, dict) for v in cell.values())
    if any(len(str(v)) > MAX_CELL_CHARS for v in values):
        return f"a table cell holds at most {MAX_CELL_CHARS} characters"
    return None


def _grid_changed(key: str) -> None:
    """The callback of every grid: the page's own, from its latest run, for an edit of a size
    the grid takes (the run that follows says what is wrong with any other)."""
    size = st.session_state.get(f"_{key}_rows", (0, 0))
    if _edit_problem(st.session_state.get(key), *size):
        return
    if on_change := st.session_state.get(f"_{key}_on_change"):
        on_change()


def menu(
    where: DeltaGenerator,
    label: str,
    options: Sequence[Any],
    key: str,
    format_func: Callable[[Any], str] = str,
    *,
    disabled: bool = False,
    icon: str = ":material/list:",
    width: int | str = "content",
    **kwargs: Any,
) -> Any:
    """A choice of one of `options` as a button that reads "label: the chosen one" and opens
    the list (radio buttons) under it: a select box's job without its code (35 KiB of
    JavaScript on a page's first load), and the list is drawn only when opened. Returns the
    chosen option; `kwargs` go to st.radio (on_change, args, ...)."""
    chosen = st.session_state.get(key)
    if chosen not in options and len(options):
        chosen = options[0]  # what the radio falls back to in this run
    shown = format_func(chosen) if len(options) else ""
    kwargs.setdefault("persist_state", KEEP)
    name = _as_typed(f"{label}: {shown}")
    with where.popover(name, icon=icon, disabled=disabled, width=width, wrap=True):
        return st.radio(
            label, options, format_func=lambda o: _as_typed(format_func(o)), key=key, **kwargs
        )


def _as_typed(text: str) -> str:
    """`text` shown as typed by a button's or a radio's label, which are Markdown: escaped
    only where Markdown would change it (escaping everything would have screen readers read
    the backslashes of "Section\\: 1\\. Mean", the popover's name)."""
    return plain(text) if _MARKDOWN.search(text) else text


def preset_choice(label: str, presets: Sequence[Any], key: str, **kwargs: Any) -> str:
    """A menu of `presets` (anything with key, title, source) shown by title, the chosen
    one's source as its caption. Returns the chosen key; `kwargs` go to st.radio."""
    by_key = {p.key: p for p in presets}
    chosen = menu(st, label, list(by_key), key, lambda k: by_key[k].title, **kwargs)
    st.caption(plain(by_key[chosen].source))
    return chosen


def embeddings_box(key: str, height: int, **kwargs: Any) -> None:
    """The text box of token embeddings, as every page that takes them words it; `kwargs` go
    to st.text_area (on_change, args, ...)."""
    text_box(
        st.text_area,
        "Token embeddings: one token per line, numbers separated by commas or spaces",
        key,
        MAX_CHARS,
        height=height,
        help="You can also paste a Python list, np.array(...) or tensor(...) printout.",
        persist_state=KEEP,
        **kwargs,
    )


def token_choice(where: DeltaGenerator, label: str, key: str, labels: Sequence[str]) -> None:
    """A menu of the tokens, "1: Hello", "2: ,", ..., holding the 0-based index."""
    menu(where, label, range(len(labels)), key, lambda i: f"{i + 1}: {labels[i]}")
