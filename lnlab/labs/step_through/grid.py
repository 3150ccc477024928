"""The embeddings grid and the labels box: moving numbers between text, grid and tables.

The step-through page's text box is the source of the embeddings; its grid shows them one row
per token (columns f1..fD), and an edit in the grid is applied here and written back as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from lnlab.core.errors import InputError
from lnlab.core.parse import MAX_TOKENS, default_labels


def labels_text(labels: Sequence[str]) -> str:
    """Labels as text for the labels box: one label a line, as lnlab.core.parse.parse_labels reads
    text of several lines (so a label may be the comma of "Hello, how are you?").

    A single label with a comma gets a trailing line break, or the parser would split it.
    """
    text = "\n".join(label.strip() for label in labels)
    return text + "\n" if len(labels) == 1 and "," in text else text


def feature_names(d: int) -> list[str]:
    """Column names of the features: f1..fD."""
    return [f"f{j}" for j in range(1, d + 1)]


def grid_frame(x: np.ndarray) -> pd.DataFrame:
    """The embeddings as the editable grid shows them: one row per token, columns f1..fD."""
    x = np.asarray(x, dtype=np.float64)
    return pd.DataFrame(x, columns=feature_names(x.shape[1]))


def apply_grid_edits(
    x: np.ndarray, labels: Sequence[str], edits: Mapping[str, Any]
) -> tuple[np.ndarray, list[str]]:
    """Apply st.data_editor's edits (edited, added and deleted rows) to the embeddings.

    `edits` is the editor's state: {"edited_rows": {row: {column: value}}, "added_rows":
    [{column: value}], "deleted_rows": [row]}, rows counted in the shown grid (0-based).
    A new row starts as zeros and gets the label t<k>. Returns the new (x, labels).
    """
    x = np.asarray(x, dtype=np.float64)
    columns = feature_names(x.shape[1])
    rows = [list(map(float, row)) for row in x]
    names = list(labels)
    for r, changes in edits.get("edited_rows", {}).items():
        if not 0 <= int(r) < len(rows):
            raise InputError(f"the grid has no row {int(r) + 1}")
        for column, value in changes.items():
            if column not in columns:
                raise InputError(f'the grid has no column "{str(column)[:20]}"')
            rows[int(r)][columns.index(column)] = _cell(value, int(r) + 1, column)
    for added in edits.get("added_rows", []):
        rows.append([_cell(added.get(c, 0.0), len(rows) + 1, c) for c in columns])
        names.append(default_labels(len(rows))[-1])
    deleted = {int(r) for r in edits.get("deleted_rows", [])}
    kept = [i for i in range(len(rows)) if i not in deleted]
    if not kept:
        raise InputError("the grid needs at least one token: add a row before deleting the last")
    if len(kept) > MAX_TOKENS:
        raise InputError(f"too many tokens: {len(kept)} rows, but the limit is {MAX_TOKENS}")
    return np.array([rows[i] for i in kept]), [names[i] for i in kept]


def _cell(value: Any, row: int, column: str) -> float:
    """One grid cell as a finite float; a cleared cell or text is an InputError."""
    if value is None:
        raise InputError(f"row {row}, {column} is empty: type a number")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"row {row}, {column}: {str(value)[:20]!r} is not a number") from None
    if not np.isfinite(v):
        raise InputError(f"row {row}, {column}: NaN and infinite values are not allowed")
    return v
