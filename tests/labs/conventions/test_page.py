"""AppTest of pages/conventions.py: the numbers shown, how they follow the inputs, the ready-made
cases' verdicts (recomputed here with numpy), errors instead of exceptions, links, presenter
mode and the exports (bad links: tests/pages/test_bad_links.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT, downloaded, html_tables, page_test, read_csv_exact, record_downloads
from streamlit.testing.v1 import AppTest

PAGE = str(ROOT / "pages" / "conventions.py")
HELLO = np.array([0.1, 0.3, -0.2, 0.8])


SECTIONS = ("six", "eps_size", "eps_place", "bessel", "rmsnorm", "axes", "check", "tally")


def _open(query: dict[str, str] | None = None) -> AppTest:
    at = page_test("pages/conventions.py", query).run()
    assert not at.exception
    return at


def _go(at: AppTest, section: str) -> AppTest:
    """The page showing `section` (one of SECTIONS), as the section chooser does."""
    at.radio(key="cv_slide").set_value(SECTIONS.index(section)).run()
    assert not at.exception
    return at


def _table(at: AppTest, column: str) -> pd.DataFrame:
    """The first table on the page with a column called `column`."""
    return next(t for t in html_tables(at) if column in t.columns)


def _metrics(at: AppTest) -> dict[str, float]:
    return {m.label: float(m.value) for m in at.metric}


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
        "NumPy tutorial (Lecture 5)": centred / (x.std() + 1e-6),
        "RMSNorm (LLaMA)": x / np.sqrt(np.mean(x**2) + 1e-5),
    }


def _row(table: pd.DataFrame, convention: str, token: str) -> np.ndarray:
    row = table[(table.convention == convention) & (table.token == token)]
    return row[[c for c in table.columns if c.startswith("y")]].to_numpy(dtype=float)[0]


def test_opens_on_the_hello_token_with_every_convention():
    at = _open()
    assert at.header[0].value == "1. One vector, six conventions"
    table = _table(at, "y1")
    assert len(table) == 6
    for name, y in _outputs(HELLO).items():
        np.testing.assert_allclose(_row(table, name, "token 1"), y, rtol=1e-9)
    settings = _table(at, "eps goes").set_index("convention")
    assert settings.loc["BERT", "eps"] == "1e-12" and settings.loc["Keras", "eps"] == "0.001"
    assert len(at.get("plotly_chart")) == 1
    assert not at.error
    _go(at, "eps_size")
    keras = np.max(np.abs(_ln(HELLO, 1e-3) - _ln(HELLO, 1e-5)))
    assert _metrics(at)["Keras LayerNormalization"] == pytest.approx(keras, rel=1e-2)


def test_editing_the_vector_updates_the_table_and_the_chart():
    at = _open()
    at.text_area(key="cv_text").input("2, 4, 6, 8\n1, 1, 2, 9").run()
    assert not at.exception
    table = _table(at, "y1")
    assert len(table) == 12
    for x, token in ((np.array([2.0, 4, 6, 8]), "token 1"), (np.array([1.0, 1, 2, 9]), "token 2")):
        for name, y in _outputs(x).items():
            np.testing.assert_allclose(_row(table, name, token), y, rtol=1e-9)
    at.radio(key="cv_token").set_value(1).run()
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    for name, y in _outputs(np.array([1.0, 1, 2, 9])).items():  # the chosen token's bars
        np.testing.assert_allclose(next(b["y"] for b in bars if b["name"] == name), y)
    _go(at, "bessel")
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert [b["name"] for b in bars] == ["PyTorch nn.LayerNorm", "Annotated Transformer"]
    metrics = _metrics(at)
    annotated = max(
        np.max(np.abs(_outputs(x)["Annotated Transformer"] - _ln(x, 1e-5)))
        for x in (np.array([2.0, 4, 6, 8]), np.array([1.0, 1, 2, 9]))
    )
    assert metrics["Annotated Transformer"] == pytest.approx(annotated, rel=1e-2)


def test_axes_section_shows_per_token_and_one_group():
    at = _go(_open(), "axes")
    x = np.array([[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]])
    table = _table(at, "grouping")
    one_group = table[table.grouping.str.startswith("no reshape")]
    np.testing.assert_allclose(one_group["mean"], x.mean())
    np.testing.assert_allclose(one_group["divided by"], np.sqrt(x.var() + 1e-5))
    notebook = table[table.grouping.str.startswith("notebook")]
    np.testing.assert_allclose(notebook["y2"], [_ln(x[0], 1e-5)[1], _ln(x[1], 1e-5)[1]])
    metrics = _metrics(at)
    assert metrics["Notebook: max |Δ|"] == pytest.approx(0, abs=1e-12)
    whole = (x - x.mean()) / np.sqrt(x.var() + 1e-5)
    per_token = np.array([_ln(row, 1e-5) for row in x])
    assert metrics["No reshape: max |Δ|"] == pytest.approx(
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
    "action-2468": [("output 1", [2, 4, 6, 8], "output", 0), ("std", [2, 4, 6, 8], "std", 0)],
    "explained-hello": [("variance", HELLO, "variance", 0), ("output 3", HELLO, "output", 2)],
    "explained-prompt": [
        ("mean, Hello", HELLO, "mean", 0),
        ("std, ,", [0.0, 0.1, 0.4, -0.1], "std", 0),
        ("output 1, how", [0.5, -0.3, 0.2, 0.6], "output", 0),
    ],
    "add-norm-notebook": [("std, row 1", [0.2, 0.1, 0.3], "std", 0)],
    "lecture5-numpy": [("output 1, row 1", [0.2, 0.8, 1.0, 1.2], "output", 0)],
    "why-not-bn-rows": [("std, sample 5", [3, 3, 4], "std", 0)],
    "why-not-bn-sample1": [
        ("output 1", [7, 5, 4], "output", 0),
        ("output 2", [7, 5, 4], "output", 1),
    ],
    "why-not-bn-columns": [
        ("mean, z3", [4, 4, 3, 6, 4], "mean", 0),
        ("std, z1", [7, 2, 1, 7, 3], "std", 0),
    ],
    "why-not-bn-contextual": [
        ("mean, Hi", [6.5, 2.1, 8.3], "mean", 0),
        ("std, Hi", [6.5, 2.1, 8.3], "std", 0),
    ],
}


@pytest.mark.parametrize("key", list(CASE_CLAIMS))
def test_each_ready_made_case_gets_verdicts_that_numpy_agrees_with(key):
    at = _go(_open(), "check")
    at.radio(key="ck_case").set_value(key).run()
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
    if key in (
        "explained-prompt",
        "why-not-bn-sample1",
        "why-not-bn-columns",
        "why-not-bn-contextual",
    ):
        assert False in expected_verdicts  # ...and these cases contain a known-wrong one
        assert at.warning


def test_std_claim_of_pytorch_notebook_holds_only_with_eps_inside():
    at = _go(_open(), "check")
    at.radio(key="ck_case").set_value("add-norm-notebook").run()
    row = _table(at, "verdict").set_index("claim").loc["std, row 1"]
    x = np.array([0.2, 0.1, 0.3])
    w, tol = float(row["written"]), _tol(row["written"])
    assert abs(np.sqrt(x.var() + 1e-5) - w) <= tol < abs(x.std() - w)
    assert "PyTorch" in row["holds under"].split(", ")
    assert "Keras" not in row["holds under"]


def test_own_claims_and_blank_claims():
    at = _go(_open(), "check")
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


SECTION_OF = {"cv_text": "six", "cv_axes_text": "axes", "ck_std": "check", "ck_x": "check"}


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
    at = _go(_open(), SECTION_OF[key])
    before = html_tables(at)
    getattr(at, kind)(key=key).input(text).run()
    assert not at.exception
    assert len(at.error) == 1
    after = html_tables(at)
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        pd.testing.assert_frame_equal(old, new)


# ---------------------------------------------------------------- links, presenter mode, exports

TWO_TOKENS = np.array([[2.0, 4, 6, 8], [1.0, 1, 2, 9]])
CHECK_LINK = {  # the checker's boxes as a teacher typed them, with a newline in the vector
    "case": "why-not-bn-contextual",
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
    _go(at, "check").text_input(key="ck_std").input("2.2").run()
    assert at.query_params["x"] == "0.1,0.3,-0.2,0.8"
    assert at.query_params["axes"] == "0.2,0.1,0.3;0.5,0.1,0.1"
    assert at.query_params["case"] == "action-2468"
    assert at.query_params["cstd"] == "2.2"
    assert at.query_params["s"] == str(SECTIONS.index("check") + 1)


def test_link_round_trip_shows_the_same_numbers():
    first = _link({"x": "2,4,6,8;1,1,2,9", "tok": "2", "axes": "1,2,3;4,5,7"} | CHECK_LINK)
    assert not [w for w in first.warning if "default example" in w.value]
    table = _table(first, "y1")
    for t, x in enumerate(TWO_TOKENS):
        for name, y in _outputs(x).items():
            np.testing.assert_allclose(_row(table, name, f"token {t + 1}"), y, rtol=1e-9)
    assert first.radio(key="cv_token").value == 1
    _go(first, "check")
    assert first.text_area(key="ck_x").value == CHECK_LINK["cx"]
    verdicts = _table(first, "verdict").set_index("claim")["verdict"]
    hi = np.array([6.5, 2.1, 8.3])  # mean 5.6333 rounds to 5.63; no std is near 2.51
    assert min(abs(hi.std() - 2.51), abs(hi.std(ddof=1) - 2.51)) > 0.09
    assert verdicts["mean, Hi"] == "holds" and verdicts["std, Hi"] == "wrong"
    second = _link(dict(first.query_params))
    assert second.query_params == first.query_params
    assert second.header[0].value == "7. Check a tutorial's printed numbers"
    for old, new in zip(html_tables(first), html_tables(second), strict=True):
        pd.testing.assert_frame_equal(old, new)
    assert _go(second, "six").radio(key="cv_token").value == 1


def test_a_token_the_input_lacks_shows_token_1_with_a_notice():
    at = _link({"x": "2,4,6,8;1,1,2,9", "tok": "5"})
    assert "Token 5 is not in the input" in at.warning[0].value
    assert at.radio(key="cv_token").value == 0


def test_presenter_mode_hides_the_boxes_and_the_extra_tables():
    at = _link({"present": "1", "x": "2,4,6,8;1,1,2,9"} | CHECK_LINK)
    assert not at.text_area and not at.text_input  # the inputs show read-only
    assert any("2, 4, 6, 8; 1, 1, 2, 9" in m.value for m in at.markdown)
    assert not at.get("download_button")
    assert not [t for t in html_tables(at) if "y1" in t.columns]  # the exports are off-slide
    at.button(key="conventions_next").click().run()
    assert at.header[0].value == "2. How big is ε: PyTorch, Keras, BERT"
    at.session_state["cv_slide"] = SECTIONS.index("bessel")
    at.run()
    annotated = max(
        np.max(np.abs(_outputs(x)["Annotated Transformer"] - _ln(x, 1e-5))) for x in TWO_TOKENS
    )
    assert _metrics(at)["Annotated Transformer"] == pytest.approx(annotated, rel=1e-2)
    at.session_state["cv_slide"] = SECTIONS.index("check")
    at.run()
    assert not at.text_area and not at.text_input  # the claim boxes are off-slide
    assert at.radio(key="ck_case").value == "why-not-bn-contextual"
    brief = _table(at, "claims that hold")  # the verdicts in brief: two means, two stds
    assert list(brief["claims that hold"]) == ["2 of 2 means", "0 of 2 stds"]
    assert not [t for t in html_tables(at) if "verdict" in t.columns]
    at.button(key="present_exit").click().run()
    assert at.text_area(key="ck_x").value == CHECK_LINK["cx"]  # kept while hidden
    assert len(_table(at, "verdict")) == 4
    assert at.get("download_button")
    assert _go(at, "six").text_area(key="cv_text").value == "2, 4, 6, 8\n1, 1, 2, 9"


def test_exports_and_the_pytorch_script_reproduce_the_table(monkeypatch, tmp_path):
    files = record_downloads(monkeypatch)
    at = _link({"x": "2,4,6,8;1,1,2,9"})
    shown = _table(at, "y1")
    ys = [f"y{i}" for i in range(1, 5)]
    csv = read_csv_exact(downloaded(at, "cv_dl_csv", files))
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


# ---------------------------------------------------------------- the lesson's navigation


def test_next_previous_and_the_section_chooser_walk_the_lesson():
    at = _open()
    titles = []
    assert at.button(key="conventions_prev").disabled
    for _ in SECTIONS[1:]:
        titles.append(at.header[0].value)
        at.button(key="conventions_next").click().run()
        assert not at.exception
    titles.append(at.header[0].value)
    assert titles[0].startswith("1. ") and titles[-1].startswith("8. ")
    assert len(set(titles)) == len(SECTIONS)
    assert at.button(key="conventions_next").disabled
    at.button(key="conventions_prev").click().run()
    assert at.header[0].value == titles[-2]
    assert at.query_params["s"] == str(len(SECTIONS) - 1)
    _go(at, "axes")
    assert at.header[0].value == "6. Which axes: the last one, or the last two"


def test_the_slide_in_the_link_opens_that_section_and_old_links_open_the_first():
    at = _link({"s": "7", "case": "seed001-notebook"})  # an old case key still opens its case
    assert at.header[0].value == "7. Check a tutorial's printed numbers"
    assert at.radio(key="ck_case").value == "add-norm-notebook"
    assert at.text_input(key="ck_std").value == "tensor([[[0.0817]],\n\n        [[0.1886]]])"
    old = _link({"x": "2,4,6,8", "case": "seed003-contextual", "cmean": "5.63, 5.57"})
    assert old.header[0].value == "1. One vector, six conventions"
    assert _go(old, "check").text_input(key="ck_mean").value == "5.63, 5.57"
    assert old.radio(key="ck_case").value == "why-not-bn-contextual"


def test_show_every_section_draws_the_whole_lesson():
    at = _link({"all": "1"})
    titles = [h.value for h in at.header]
    assert [t.split(". ")[0] for t in titles[: len(SECTIONS)]] == [
        str(k) for k in range(1, len(SECTIONS) + 1)
    ]
    for key in ("cv_text", "cv_axes_text", "ck_x", "ck_out"):
        assert at.text_area(key=key)
