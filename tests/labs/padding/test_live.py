"""lnlab.labs.padding.live: what the padding page sends the browser, and what it takes back.

The statistics it sends are checked against torch (Batch Norm's biased batch variance, naive and
masked, and Layer Norm's per-row moments) and by hand on the seed tutorial's batch; a pick the
browser sends comes over the websocket, so wrong names, types and indices are refused.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from lnlab.core.errors import InputError
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import live, state
from lnlab.labs.padding.lesson import View, slides
from lnlab.teach.figures import contrast

HI = pad.parse_sentences("Hi Nitish\nHow are you today")


def _data(lab: pad.PaddingLab, view: View | None = None, token: int = 0, feature: int = 0):
    view = view or View()
    data = live.browser_data(lab, view, slides(lab, view), token, feature)
    json.dumps(data, allow_nan=False)  # what Streamlit sends must be JSON a browser reads
    return data


def test_the_seed_batch_statistics_by_hand():
    lab = pad.padding_lab(HI, "hi-nitish")
    stats = _data(lab)["stats"]
    # f1 down the column: 5, 3, 0, 0, 4, 1, 7, 2 -> 22 / 8 = 2.75; real rows only: 22 / 6
    assert stats["naive"][0]["mean"] == 2.75 and stats["naive"][0]["n"] == 8
    assert stats["masked"][0]["mean"] == pytest.approx(22 / 6) and stats["masked"][0]["n"] == 6
    # token 2, "Nitish": (3, 7, 2) -> mean 4, variance (1 + 9 + 4) / 3
    assert stats["token"][1] == {"n": 3, "mean": 4.0, "var": pytest.approx(14 / 3)}
    # a PAD row: all zeros
    assert stats["token"][2] == {"n": 3, "mean": 0.0, "var": 0.0}


@pytest.mark.parametrize("seed", range(6))
def test_every_statistic_matches_torch(seed: int):
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(12)]
    sentences = tuple(
        tuple(rng.choice(words, size=int(rng.integers(1, 9))).tolist())
        for _ in range(int(rng.integers(1, 6)))
    )
    lab = pad.padding_lab(sentences, "hi-nitish")
    stats = _data(lab)["stats"]
    rows = torch.tensor(lab.tokens)
    real = torch.tensor(lab.real)
    for pick, x in (("naive", rows), ("masked", rows[real])):
        mean = x.mean(dim=0)
        var = x.var(dim=0, unbiased=False)  # what F.batch_norm normalizes with in training
        for j in range(pad.DIM):
            assert stats[pick][j]["mean"] == pytest.approx(float(mean[j]), rel=1e-12, abs=1e-12)
            assert stats[pick][j]["var"] == pytest.approx(float(var[j]), rel=1e-12, abs=1e-12)
            assert stats[pick][j]["n"] == x.shape[0]
    var, mean = torch.var_mean(rows, dim=1, unbiased=False)  # F.layer_norm's moments
    for i, s in enumerate(stats["token"]):
        assert s["mean"] == pytest.approx(float(mean[i]), rel=1e-12, abs=1e-12)
        assert s["var"] == pytest.approx(float(var[i]), rel=1e-12, abs=1e-12)


def test_the_browser_gets_the_batch_as_drawn_and_the_sections_words():
    lab = pad.padding_lab(HI, "hi-nitish")
    data = _data(lab, View(pick=pad.PICK_TOKEN, index=4), token=4, feature=2)
    assert [r["label"] for r in data["rows"]] == list(lab.labels)
    assert [r["pad"] for r in data["rows"]] == (~lab.real).tolist()
    assert data["values"] == lab.tokens.tolist()
    assert (data["pick"], data["token"], data["feature"]) == ("token", 4, 2)
    assert [s["key"] for s in data["steps"]] == ["batch", "cells"]
    for row in data["cells"]:
        for cell in row:
            assert re.fullmatch(r"#[0-9a-f]{6}", cell["fill"])
            assert contrast(cell["fill"], cell["ink"]) >= 4.5  # each number readable
    assert [c["text"] for c in data["cells"][1]] == ["3", "7", "2"]
    assert data["cells"][2][0]["fill"] != data["cells"][0][0]["fill"]  # PAD rows washed grey
    template = data["texts"]["cells"]["summary"]
    assert template.format(count=3, picked="x", mean="4", var="4.6667")  # its one home's fields


def _page_state() -> dict:
    s: dict = {}
    state.set_defaults(s)
    s["pad_page_inputs"] = state.PageInputs(HI, (), 1e-5, 0.0)
    return s


def test_a_pick_from_the_browser_lands_in_the_pages_state():
    s = _page_state()
    assert live.apply_changes(s, {"pick": "token", "token": 7}) is False  # no box to redraw
    assert (s["pad_pick"], s["pad_token"]) == ("token", 7)
    live.apply_changes(s, {"pick": "masked", "feature": 2})
    assert (s["pad_pick"], s["pad_feature"], s["pad_token"]) == ("masked", 2, 7)
    _inputs, view = state.lab_and_view(s)
    assert (view.pick, view.index) == ("masked", 2)
    # the row kept while a column is picked: a switch back to rows comes back to it
    assert state.token_and_feature(s) == (7, 2)
    s["pad_token"] = 8  # beyond the batch's 8 rows (a shorter batch since): the first
    assert state.token_and_feature(s) == (0, 2)


@pytest.mark.parametrize(
    "changes",
    [
        {"pick": "median"},
        {"pick": ["token"]},
        {"token": 8},  # 2 sentences x 4 words: rows 0..7
        {"token": -1},
        {"token": 1.0},
        {"token": True},
        {"feature": 3},
        {"feature": "1"},
        {"step": 1},  # navigation is lnlab.ui.live's, never a value
        {"x": [1, 2, 3]},
    ],
)
def test_a_bad_pick_is_refused_and_changes_nothing(changes: dict):
    s = _page_state()
    before = dict(s)
    with pytest.raises(InputError):
        live.apply_changes(s, {"pick": "token", **changes} if "pick" not in changes else changes)
    assert s == before
