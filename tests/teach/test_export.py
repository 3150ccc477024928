"""Exports: CSV/JSON carry the page's numbers; the generated PyTorch scripts reproduce them."""

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT, read_csv_exact
from hypothesis import given
from hypothesis import strategies as st

import lnlab
from lnlab.teach.export import (
    batch_json,
    batch_norm_script,
    layer_norm_script,
    to_csv,
    trace_json,
    trace_rows,
)
from lnlab.teach.steps import written_steps

HELLO = np.array([[0.1, 0.3, -0.2, 0.8], [0.0, 0.1, 0.4, -0.1]])


def run_script(source: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"unbiased": True},
        {"eps_outside": True, "unbiased": True},
        {"eps_outside": True},
    ],
)
def test_layer_norm_script_reproduces_the_numbers(options):
    gamma, beta = np.array([1.5, 1.0, 0.5, 2.0]), np.array([0.1, 0.0, -0.2, 0.3])
    trace = lnlab.layer_norm_trace(HELLO, gamma, beta, 1e-5, **options)
    out = run_script(layer_norm_script(HELLO, gamma, beta, 1e-5, **options))
    np.testing.assert_allclose(out["mean"], trace.mean.ravel(), rtol=1e-13)
    np.testing.assert_allclose(out["var"], trace.var.ravel(), rtol=1e-12)
    np.testing.assert_allclose(out["y"], trace.y, rtol=1e-12, atol=1e-14)


def test_layer_norm_script_over_two_axes():
    x = np.array([[[0.2, 0.1, 0.3]], [[0.5, 0.1, 0.1]]])
    ones, zeros = np.ones((1, 3)), np.zeros((1, 3))
    trace = lnlab.layer_norm_trace(x, dims=2)
    out = run_script(layer_norm_script(x, ones, zeros, 1e-5, dims=2))
    np.testing.assert_allclose(out["y"], trace.y, rtol=1e-12, atol=1e-14)


def test_batch_norm_script_reproduces_naive_and_masked():
    x = np.array(
        [
            [[5, 1, 8], [3, 7, 2], [0, 0, 0], [0, 0, 0]],
            [[4, 2, 6], [1, 8, 3], [7, 5, 9], [2, 4, 1]],
        ],
        dtype=float,
    )
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    beta = 0.75
    out = run_script(batch_norm_script(x, mask, 1e-5, beta))
    naive = lnlab.batch_norm_trace(x, beta=beta)
    masked = lnlab.batch_norm_trace(x, beta=beta, mask=mask)
    layer = np.array(out["layer"])
    np.testing.assert_allclose(out["naive_mean"], naive.mean, rtol=1e-13)
    np.testing.assert_allclose(out["masked_mean"], masked.mean, rtol=1e-13)
    np.testing.assert_allclose(out["naive"], naive.y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(out["masked"], masked.y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(layer, lnlab.layer_norm(x, beta=beta), rtol=1e-12, atol=1e-13)
    assert (layer[~mask] == beta).all()  # a PAD row's Layer Norm is exactly beta
    assert (np.array(out["masked"])[~mask] == 0).all()  # masked Batch Norm leaves PAD rows at 0


def test_csv_has_one_row_per_token_and_feature():
    trace = lnlab.layer_norm_trace(HELLO)
    rows = list(csv.DictReader(io.StringIO(to_csv(trace_rows(trace, ["Hello", ","])))))
    assert len(rows) == 8
    assert rows[0]["token"] == "Hello"
    assert float(rows[0]["mean"]) == pytest.approx(0.25, abs=1e-15)  # (0.1 + 0.3 - 0.2 + 0.8) / 4
    assert float(rows[5]["x"]) == 0.1  # token 2, feature 2


@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=20))
def test_csv_numbers_read_back_to_the_same_bits(values):
    """Any float, numpy's float64 and float32 too: Python's float reads the text back to the
    value (float32 to its exact float64 value, as a table of it shows)."""
    with np.errstate(over="ignore"):  # past float32's range: inf, written and read as such
        singles = [np.float32(v) for v in values]
    rows = [{"x": v, "x64": np.float64(v), "x32": s} for v, s in zip(values, singles, strict=True)]
    back = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [float(r["x"]) for r in back] == values
    assert [float(r["x64"]) for r in back] == values
    assert [float(r["x32"]) for r in back] == [float(s) for s in singles]


def test_csv_writes_the_issues_number_and_the_odd_ones_exactly():
    """The GPU machine's CSV read 0.0001318359374999 for 0.00013183593749999112; float32's
    0.1 is 0.10000000149011612 in the table beside it (numpy prints it as "0.1")."""
    rows = [
        {"v": 0.00013183593749999112, "w": np.float32(0.1), "n": np.int64(3), "ok": np.True_},
        {"v": float("nan"), "w": np.float16(0.1), "n": 7, "ok": False},
        {"v": float("-inf"), "w": 1e-320, "n": -1, "ok": True},
    ]
    assert to_csv(rows).splitlines() == [
        "v,w,n,ok",
        "0.00013183593749999112,0.10000000149011612,3,True",
        "nan,0.0999755859375,7,False",
        "-inf,1e-320,-1,True",
    ]
    table = read_csv_exact(to_csv(rows))
    assert table["v"][0] == 0.00013183593749999112 and np.isnan(table["v"][1])
    assert table["n"].tolist() == [3, 7, -1] and table["ok"].tolist() == ["True", "False", "True"]


def test_what_the_downloads_depend_on_is_pinned():
    """The tables' and files' numbers pass through these: the same versions everywhere."""
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    assert {"numpy", "pandas", "pyarrow", "streamlit", "plotly"} <= set(pins)


def test_json_keeps_nan_as_text_and_steps():
    trace = lnlab.layer_norm_trace(np.array([[1.0, 1.0, 1.0]]), eps=0.0)
    data = json.loads(trace_json(trace, ["t1"], {"eps": 0.0}))
    assert data["y"] == [["nan", "nan", "nan"]]
    assert [s["title"] for s in data["steps"]] == [s.title for s in written_steps(trace)]
    assert data["steps"][0]["title"] == "Mean"
    masked = lnlab.batch_norm_trace(HELLO)
    stats = json.loads(batch_json({"naive": masked}, {"eps": 1e-5}))
    assert stats["naive"]["count"] == 2
