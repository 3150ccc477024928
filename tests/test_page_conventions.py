"""AppTest of pages/conventions.py: the numbers shown, how they follow the inputs, the ready-made
cases' verdicts (recomputed here with numpy), errors instead of exceptions, links, presenter
mode and the exports (bad links: test_links_pages_b.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import downloaded, page_test, record_downloads
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).parents[1] / "pages" / "conventions.py")
HELLO = np.array([0.1, 0.3, -0.2, 0.8])


def _open() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    return at


def _table(at: AppTest, column: str) -> pd.DataFrame:
    """The first table on the page with a column called `column`."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


def _ln(x: np.ndarray, eps: float) -> np.ndarray:
    return (x - x.mean()) / np.sqrt(x.var() + eps)


def _outputs(x: np.ndarray) -> dict[str, np.ndarray]:
    """Every convention's output for one token, written out with numpy."""
    centred = x - x.mean()
    return {
        "PyTorch nn.LayerNorm": _ln(x, 1e-5),
        "Keras LayerNormalization": _ln(x, 1e-3),
        "BERT (TensorFlow)": _ln(x, 1e-12),
        "Annotated Transformer": centred / (x.std(ddof=1) + 1e-6),
        "NumPy tutorial (seed 004)": centred / (x.std() + 1e-6),
        "RMSNorm (LLaMA, T5)": x / np.sqrt(np.mean(x**2) + 1e-6),
    }


def _row(table: pd.DataFrame, convention: str, token: str) -> np.ndarray:
    row = table[(table.convention == convention) & (table.token == token)]
    return row[[c for c in table.columns if c.startswith("y")]].to_numpy(dtype=float)[0]


def test_opens_on_the_hello_token_with_every_convention():
    at = _open()
    table = _table(at, "y1")
    assert len(table) == 6
    for name, y in _outputs(HELLO).items():
        np.testing.assert_allclose(_row(table, name, "token 1"), y, rtol=1e-9)
    metrics = {m.label: float(m.value) for m in at.metric}
    keras = np.max(np.abs(_ln(HELLO, 1e-3) - _ln(HELLO, 1e-5)))
    assert metrics["Keras LayerNormalization"] == pytest.approx(keras, rel=1e-2)
    assert len(at.get("plotly_chart")) >= 2
    assert not at.error


def test_editing_the_vector_updates_the_table_and_the_chart():
    at = _open()
    at.text_area(key="cv_text").input("2, 4, 6, 8\n1, 1, 2, 9").run()
    assert not at.exception
    table = _table(at, "y1")
    assert len(table) == 12
    for x, token in ((np.array([2.0, 4, 6, 8]), "token 1"), (np.array([1.0, 1, 2, 9]), "token 2")):
        for name, y in _outputs(x).items():
            np.testing.assert_allclose(_row(table, name, token), y, rtol=1e-9)
    at.selectbox(key="cv_token").select(1).run()
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    for name, y in _outputs(np.array([1.0, 1, 2, 9])).items():  # the chosen token's bars
        np.testing.assert_allclose(next(b["y"] for b in bars if b["name"] == name), y)
    metrics = {m.label: float(m.value) for m in at.metric}
    annotated = max(
        np.max(np.abs(_outputs(x)["Annotated Transformer"] - _ln(x, 1e-5)))
        for x in (np.array([2.0, 4, 6, 8]), np.array([1.0, 1, 2, 9]))
    )
    assert metrics["Annotated Transformer"] == pytest.approx(annotated, rel=1e-2)


def test_axes_section_shows_per_token_and_one_group():
    at = _open()
    x = np.array([[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]])
    table = _table(at, "grouping")
    one_group = table[table.grouping.str.startswith("no reshape")]
    np.testing.assert_allclose(one_group["mean"], x.mean())
    np.testing.assert_allclose(one_group["divided by"], np.sqrt(x.var() + 1e-5))
    notebook = table[table.grouping.str.startswith("notebook")]
    np.testing.assert_allclose(notebook["y2"], [_ln(x[0], 1e-5)[1], _ln(x[1], 1e-5)[1]])
    metrics = {m.label: float(m.value) for m in at.metric}
    assert metrics["Notebook vs per token: max |Δ|"] == pytest.approx(0, abs=1e-12)
    whole = (x - x.mean()) / np.sqrt(x.var() + 1e-5)
    per_token = np.array([_ln(row, 1e-5) for row in x])
    assert metrics["No reshape vs per token: max |Δ|"] == pytest.approx(
        np.max(np.abs(whole - per_token)), rel=1e-2
    )


# ---------------------------------------------------------------- the checker


def _tol(written: str) -> float:
    return 0.5 * 10.0 ** -len(written.partition(".")[2])


def _stds(x: np.ndarray) -> list[float]:
    var, var_u = x.var(), x.var(ddof=1)
    return [
        np.sqrt(var),
        np.sqrt(var_u),
        *(np.sqrt(var + eps) for eps in (1e-5, 1e-3, 1e-12)),
        np.sqrt(var) + 1e-6,
        np.sqrt(var_u) + 1e-6,
        np.sqrt(np.mean(x**2) + 1e-6),
    ]


def _truths(quantity: str, x: np.ndarray, feature: int = 0) -> list[float]:
    """Every value a convention computes for `quantity` of the token x."""
    if quantity == "mean":
        return [x.mean()]
    if quantity == "variance":
        return [x.var(), x.var(ddof=1), np.mean(x**2)]
    if quantity == "std":
        return _stds(x)
    return [y[feature] for y in _outputs(x).values()]


# case -> (claim name on the page, token values, quantity, feature)
CASE_CLAIMS = {
    "seed000-2468": [("output 1", [2, 4, 6, 8], "output", 0), ("std", [2, 4, 6, 8], "std", 0)],
    "seed002-hello": [("variance", HELLO, "variance", 0), ("output 3", HELLO, "output", 2)],
    "seed002-prompt": [
        ("mean, Hello", HELLO, "mean", 0),
        ("std, ,", [0.0, 0.1, 0.4, -0.1], "std", 0),
        ("output 1, how", [0.5, -0.3, 0.2, 0.6], "output", 0),
    ],
    "seed001-notebook": [("std, row 1", [0.2, 0.1, 0.3], "std", 0)],
    "seed004-numpy": [("output 1, row 1", [0.2, 0.8, 1.0, 1.2], "output", 0)],
    "seed003-ln-rows": [("std, sample 5", [3, 3, 4], "std", 0)],
    "seed003-ln-sample1": [
        ("output 1", [7, 5, 4], "output", 0),
        ("output 2", [7, 5, 4], "output", 1),
    ],
    "seed003-bn-columns": [
        ("mean, z3", [4, 4, 3, 6, 4], "mean", 0),
        ("std, z1", [7, 2, 1, 7, 3], "std", 0),
    ],
    "seed003-contextual": [
        ("mean, Hi", [6.5, 2.1, 8.3], "mean", 0),
        ("std, Hi", [6.5, 2.1, 8.3], "std", 0),
    ],
}


@pytest.mark.parametrize("key", list(CASE_CLAIMS))
def test_each_ready_made_case_gets_verdicts_that_numpy_agrees_with(key):
    at = _open()
    at.selectbox(key="ck_case").select(key).run()
    assert not at.exception and not at.error
    table = _table(at, "verdict")
    assert len(table) > 0
    expected_verdicts = []
    for claim, values, quantity, feature in CASE_CLAIMS[key]:
        row = table[table.claim == claim].iloc[0]
        written = row["written"]
        truths = _truths(quantity, np.asarray(values, dtype=float), feature)
        holds = any(abs(t - float(written)) <= _tol(written) + 1e-9 for t in truths)
        assert row["verdict"] == ("holds" if holds else "wrong"), claim
        expected_verdicts.append(holds)
    assert True in expected_verdicts  # at least one claim of each case is known to hold
    if key in ("seed002-prompt", "seed003-ln-sample1", "seed003-bn-columns", "seed003-contextual"):
        assert False in expected_verdicts  # ...and these cases contain a known-wrong one
        assert at.warning


def test_std_claim_of_pytorch_notebook_holds_only_with_eps_inside():
    at = _open()
    at.selectbox(key="ck_case").select("seed001-notebook").run()
    row = _table(at, "verdict").set_index("claim").loc["std, row 1"]
    x = np.array([0.2, 0.1, 0.3])
    w, tol = float(row["written"]), _tol(row["written"])
    assert abs(np.sqrt(x.var() + 1e-5) - w) <= tol < abs(x.std() - w)
    assert "PyTorch" in row["holds under"].split(", ")
    assert "Keras" not in row["holds under"]


def test_own_claims_and_blank_claims():
    at = _open()
    x = np.array([0.0, 0.1, 0.4, -0.1])
    at.text_area(key="ck_x").input("0.0, 0.1, 0.4, -0.1")
    for key in ("ck_mean", "ck_var"):
        at.text_input(key=key).input("")
    at.text_area(key="ck_out").input("")
    at.text_input(key="ck_std").input(f"{x.std(ddof=1):.4f}").run()
    row = _table(at, "verdict").iloc[0]
    assert row["verdict"] == "holds" and row["holds under"] == "Annotated"
    assert row["Layer Norm value"] == pytest.approx(x.std())
    at.text_input(key="ck_std").input("").run()
    assert not at.exception and at.info


@pytest.mark.parametrize(
    ("kind", "key", "text"),
    [
        ("text_area", "cv_text", "1, 2, abc"),
        ("text_area", "cv_axes_text", ""),
        ("text_input", "ck_std", "1, 2, 3"),
        ("text_area", "ck_x", "[1, 2"),
    ],
)
def test_bad_input_shows_an_error_and_keeps_the_last_result(kind, key, text):
    at = _open()
    before = [df.value for df in at.dataframe]
    getattr(at, kind)(key=key).input(text).run()
    assert not at.exception
    assert len(at.error) == 1
    after = [df.value for df in at.dataframe]
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        pd.testing.assert_frame_equal(old, new)


# ---------------------------------------------------------------- links, presenter mode, exports

TWO_TOKENS = np.array([[2.0, 4, 6, 8], [1.0, 1, 2, 9]])
CHECK_LINK = {  # the checker's boxes as a teacher typed them, with a newline in the vector
    "case": "seed003-contextual",
    "cx": "6.5, 2.1, 8.3\n5.7, 9.2, 1.8",
    "cmean": "5.63, 5.57",
    "cstd": "2.51, 3.05",
    "cvar": "",
    "cout": "",
}


def _link(query: dict[str, str]) -> AppTest:
    at = page_test("pages/conventions.py", query).run()
    assert not at.exception
    return at


def test_the_url_holds_the_example_on_screen():
    at = _link({})
    assert dict(at.query_params) == {}  # a page just opened leaves the URL (and Back) alone
    at.text_input(key="ck_std").input("2.2").run()
    assert at.query_params["x"] == "0.1,0.3,-0.2,0.8"
    assert at.query_params["axes"] == "0.2,0.1,0.3;0.5,0.1,0.1"
    assert at.query_params["case"] == "seed000-2468"
    assert at.query_params["cstd"] == "2.2"


def test_link_round_trip_shows_the_same_numbers():
    first = _link({"x": "2,4,6,8;1,1,2,9", "tok": "2", "axes": "1,2,3;4,5,7"} | CHECK_LINK)
    assert not [w for w in first.warning if "default example" in w.value]
    table = _table(first, "y1")
    for t, x in enumerate(TWO_TOKENS):
        for name, y in _outputs(x).items():
            np.testing.assert_allclose(_row(table, name, f"token {t + 1}"), y, rtol=1e-9)
    assert first.selectbox(key="cv_token").value == 1
    assert first.text_area(key="ck_x").value == CHECK_LINK["cx"]
    verdicts = _table(first, "verdict").set_index("claim")["verdict"]
    hi = np.array([6.5, 2.1, 8.3])  # mean 5.6333 rounds to 5.63; no std is near 2.51
    assert min(abs(hi.std() - 2.51), abs(hi.std(ddof=1) - 2.51)) > 0.09
    assert verdicts["mean, Hi"] == "holds" and verdicts["std, Hi"] == "wrong"
    second = _link(dict(first.query_params))
    assert second.query_params == first.query_params
    assert second.selectbox(key="cv_token").value == 1
    for old, new in zip(first.dataframe, second.dataframe, strict=True):
        pd.testing.assert_frame_equal(old.value, new.value)
    assert [m.value for m in second.metric] == [m.value for m in first.metric]


def test_a_token_the_input_lacks_shows_token_1_with_a_notice():
    at = _link({"x": "2,4,6,8;1,1,2,9", "tok": "5"})
    assert "Token 5 is not in the input" in at.warning[0].value
    assert at.selectbox(key="cv_token").value == 0


def test_presenter_mode_hides_the_boxes_and_the_extra_tables():
    at = _link({"present": "1", "x": "2,4,6,8;1,1,2,9"} | CHECK_LINK)
    assert not at.text_area and not at.text_input  # the inputs show read-only
    assert "2, 4, 6, 8\n1, 1, 2, 9" in [c.value for c in at.code]
    assert CHECK_LINK["cx"] in [c.value for c in at.code]
    assert not at.get("download_button")
    assert not any(
        "y1" in d.value.columns and "convention" in d.value.columns for d in at.dataframe
    )
    assert not any("claims that hold" in d.value.columns for d in at.dataframe)
    assert (
        len(_table(at, "verdict")) == 4
    )  # two means, two stds: the checker's verdicts are the slide
    metrics = {m.label: float(m.value) for m in at.metric}
    annotated = max(
        np.max(np.abs(_outputs(x)["Annotated Transformer"] - _ln(x, 1e-5))) for x in TWO_TOKENS
    )
    assert metrics["Annotated Transformer"] == pytest.approx(annotated, rel=1e-2)
    at.button(key="present_exit").click().run()
    assert at.text_area(key="ck_x").value == CHECK_LINK["cx"]  # kept while hidden
    assert at.text_area(key="cv_text").value == "2, 4, 6, 8\n1, 1, 2, 9"
    assert at.get("download_button")


def test_exports_and_the_pytorch_script_reproduce_the_table(monkeypatch, tmp_path):
    files = record_downloads(monkeypatch)
    at = _link({"x": "2,4,6,8;1,1,2,9"})
    shown = _table(at, "y1")
    ys = [f"y{i}" for i in range(1, 5)]
    csv = pd.read_csv(io.StringIO(downloaded(at, "cv_dl_csv", files)))
    assert len(csv) == 12  # 6 conventions x 2 tokens
    np.testing.assert_array_equal(csv[ys], shown[ys])
    assert csv.set_index("key").loc["keras", "eps"].tolist() == [1e-3, 1e-3]
    data = json.loads(downloaded(at, "cv_dl_json", files))
    assert data["x"] == TWO_TOKENS.tolist()
    by_key = {c["key"]: c for c in data["conventions"]}
    assert by_key["rmsnorm"]["mean"] is None
    np.testing.assert_array_equal(by_key["annotated"]["y"], shown.iloc[6:8][ys])

    script = downloaded(at, "cv_dl_script", files)
    assert script.strip() in [
        c.value.strip() for c in at.code
    ]  # the expander shows the same script
    path = tmp_path / "conventions.py"
    path.write_text(script)
    run = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    printed = json.loads(run.stdout)
    names = {c["key"]: c["name"] for c in data["conventions"]}
    for key, y in printed.items():
        for t in range(2):
            page = _row(shown, names[key], f"token {t + 1}")
            np.testing.assert_allclose(y[t], page, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(y[t], _outputs(TWO_TOKENS[t])[names[key]], rtol=1e-12)
