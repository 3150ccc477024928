"""The padding lesson's first two sections as the browser draws them (lnlab.ui.live, with
static/lnlab/padding.mjs): the padded batch, and which of its cells feed a statistic. Plain
functions, tested without Streamlit.

Picking a statistic (a Batch Norm column with or without the PAD rows, or a Layer Norm row) is
answered in the page: Python sends the batch's cells as drawn (colour, ink, number), every
statistic the user can pick with Python's own mean and variance, and the sections' words from
their one home (lnlab.labs.padding.lesson); the browser outlines the cells and writes the
formulas with their numbers. It sends back the pick once made, checked here like any other
value sent over the websocket.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from lnlab.core.errors import InputError
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import plots
from lnlab.labs.padding.lesson import (
    CELLS_CAPTION,
    CELLS_LABEL,
    CELLS_SUMMARY,
    FEATURES,
    PICKED,
    View,
)
from lnlab.labs.padding.state import rows as state_rows
from lnlab.teach.figures import HIGHLIGHT
from lnlab.teach.lesson import Lesson

SECTIONS = 2  # the lesson's sections 0 (the batch) and 1 (which cells feed a statistic)
CHOICES = ("pick", "token", "feature")  # what the browser may send back


def browser_data(
    lab: pad.PaddingLab, view: View, lesson: Lesson, token: int, feature: int
) -> dict[str, Any]:
    """What the browser needs to draw sections 0 and 1 of `lesson` (built from `lab`, `view`)
    and to answer a new pick without Python; `token` and `feature` are the row and the column
    the picker keeps (state.token_and_feature), the one of `view.pick` being `view.index`."""
    batch, cells = lesson.sections[:SECTIONS]
    return {
        "context": lesson.context,
        "steps": [
            {"key": s.key, "title": s.title, "explanation": s.explanation} for s in (batch, cells)
        ],
        "rows": [
            {"label": label, "pad": not real}
            for label, real in zip(lab.labels, lab.real.tolist(), strict=True)
        ],
        "features": list(FEATURES),
        "cells": plots.batch_cells(lab),
        "values": lab.tokens.tolist(),
        "stats": statistics(lab),
        "pick": view.pick,
        "token": token,
        "feature": feature,
        "picks": [{"key": k, "label": label} for k, label in pad.PICKS.items()],
        "texts": {
            "batch": {
                "caption": batch.figure.caption,
                "label": batch.figure.label,
                "summary": batch.figure.summary,
            },
            "cells": {"caption": CELLS_CAPTION, "label": CELLS_LABEL, "summary": CELLS_SUMMARY},
            "picked": PICKED,
            "detail": "Written out",
            "table": "The numbers as a table",
        },
        "highlight": HIGHLIGHT,
    }


def statistics(lab: pad.PaddingLab) -> dict[str, list[dict[str, float | int]]]:
    """Every statistic a user can pick, with its cells' count, mean and variance (population,
    as Batch Norm and Layer Norm use): naive and masked for each feature, one per token row."""
    out: dict[str, list[dict[str, float | int]]] = {}
    for pick in pad.PICKS:
        count = lab.tokens.shape[0] if pick == pad.PICK_TOKEN else pad.DIM
        out[pick] = []
        for index in range(count):
            cells, mean, var = pad.picked_moments(lab, pick, index)
            out[pick].append({"n": int(cells.size), "mean": mean, "var": var})
    return out


def apply_changes(state: MutableMapping[str, Any], changes: Mapping[str, Any]) -> bool:
    """Put the pick the browser sent into the page's state (pad_pick, pad_token, pad_feature).
    Raises InputError for anything unknown or out of range, and then changes nothing. Returns
    False: no box above the lesson shows the pick, so the lesson's own rerun is enough."""
    unknown = sorted(set(changes) - set(CHOICES))
    if unknown:
        raise InputError(f"unknown value {unknown[0]!r}")
    new: dict[str, Any] = {}
    if "pick" in changes:
        if not isinstance(changes["pick"], str) or changes["pick"] not in pad.PICKS:
            raise InputError(f"there is no statistic {str(changes['pick'])[:20]!r}")
        new["pad_pick"] = changes["pick"]
    counts = (("token", state_rows(state), "token row"), ("feature", pad.DIM, "feature"))
    for name, count, what in counts:
        if name in changes:
            index = changes[name]
            if type(index) is not int or not 0 <= index < count:
                raise InputError(f"there is no {what} {str(index)[:20]!r}")
            new[f"pad_{name}"] = index
    state.update(new)
    return False
