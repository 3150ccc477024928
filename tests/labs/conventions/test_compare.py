"""Tests for lnlab.labs.conventions.compare and its figures: every convention against torch or a
formula, the tolerance rule, and the checker's verdicts recomputed independently with numpy."""

from __future__ import annotations

import math
import re
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import validated

import lnlab
from lnlab.core.errors import InputError
from lnlab.core.numbers import fmt
from lnlab.labs.conventions.cases import CHECK_CASES, OLD_KEYS, TITLES, case_key, check_case
from lnlab.labs.conventions.checker import (
    check_claims,
    half_unit,
    quantity_table,
    readings_table,
    tally_table,
    verdict_table,
    written_numbers,
)
from lnlab.labs.conventions.compare import (
    CONVENTIONS,
    REFERENCE,
    compare_axes,
    compare_conventions,
    comparison_table,
    convention,
    conventions_table,
    unbiased_ratio,
)
from lnlab.labs.conventions.lesson import slides as conventions_slides
from lnlab.labs.conventions.plots import claim_errors, groupings_heatmap, outputs_by_convention
from lnlab.teach.figures import HIGHLIGHT

RNG = np.random.default_rng(7)
TOKENS = RNG.normal(size=(5, 8)) * np.array([[0.01], [0.1], [1.0], [10.0], [100.0]])
SMALL = np.array([[2.0, 4.0, 6.0, 8.0]])  # mean 5, biased var 5, unbiased var 20/3
CENTRED = np.array([-3.0, -1.0, 1.0, 3.0])


def _torch(x: np.ndarray) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64)


def _ln(x: np.ndarray, eps: float) -> np.ndarray:
    return F.layer_norm(_torch(x), (x.shape[-1],), eps=eps).numpy()


def _eps_outside(x: np.ndarray, eps: float, ddof: int) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / (x.std(axis=-1, ddof=ddof, keepdims=True) + eps)


REFERENCE_OUTPUTS = {
    "pytorch": lambda x: _ln(x, 1e-5),
    "keras": lambda x: _ln(x, 1e-3),
    "bert": lambda x: _ln(x, 1e-12),
    "annotated": lambda x: _eps_outside(x, 1e-6, ddof=1),
    "numpy": lambda x: _eps_outside(x, 1e-6, ddof=0),
    "rmsnorm": lambda x: F.rms_norm(_torch(x), (x.shape[-1],), eps=1e-5).numpy(),
}


# ---------------------------------------------------------------- conventions


@pytest.mark.parametrize("key", list(REFERENCE_OUTPUTS))
def test_each_convention_matches_torch_or_its_formula(key):
    run = compare_conventions(TOKENS).run(key)
    np.testing.assert_allclose(run.y, REFERENCE_OUTPUTS[key](TOKENS), rtol=1e-12, atol=1e-12)


def test_the_six_conventions_are_the_ones_people_meet():
    assert [c.key for c in CONVENTIONS] == list(REFERENCE_OUTPUTS)
    assert REFERENCE == "pytorch"


def test_hand_derived_outputs_for_2_4_6_8():
    comparison = compare_conventions(SMALL)
    expected = {
        "pytorch": CENTRED / np.sqrt(5 + 1e-5),
        "keras": CENTRED / np.sqrt(5 + 1e-3),
        "bert": CENTRED / np.sqrt(5 + 1e-12),
        "annotated": CENTRED / (np.sqrt(20 / 3) + 1e-6),
        "numpy": CENTRED / (np.sqrt(5) + 1e-6),
        "rmsnorm": SMALL[0] / np.sqrt(30 + 1e-5),  # mean of squares (4 + 16 + 36 + 64) / 4
    }
    for key, y in expected.items():
        run = comparison.run(key)
        np.testing.assert_allclose(run.y[0], y, rtol=1e-14)
        assert run.max_abs_diff == pytest.approx(np.max(np.abs(y - expected["pytorch"])))
    assert comparison.run("pytorch").mean[0] == 5.0
    assert np.isnan(comparison.run("rmsnorm").mean[0])
    assert comparison.run("annotated").denominator[0] == pytest.approx(np.sqrt(20 / 3) + 1e-6)


def test_max_abs_diff_is_zero_only_for_pytorch():
    comparison = compare_conventions(TOKENS)
    reference = REFERENCE_OUTPUTS["pytorch"](TOKENS)
    for run in comparison.runs:
        expected = np.max(np.abs(REFERENCE_OUTPUTS[run.convention.key](TOKENS) - reference))
        assert run.max_abs_diff == pytest.approx(expected, rel=1e-9, abs=1e-15)
        assert (run.max_abs_diff == 0) == (run.convention.key == "pytorch")


def test_eps_matters_only_when_the_variance_is_small():
    comparison = compare_conventions(TOKENS)
    keras = comparison.run("keras").y - comparison.run("pytorch").y
    per_token = np.max(np.abs(keras), axis=1)
    assert per_token[0] > 0.1  # std 0.01: eps = 1e-3 is large next to var = 1e-4
    assert per_token[-1] < 1e-6  # std 100


def test_unbiased_ratio_is_the_annotated_over_pytorch_ratio_when_eps_is_tiny():
    x = np.array([[100.0, 200.0, 300.0, 400.0]])
    comparison = compare_conventions(x)
    ratio = comparison.run("annotated").y / comparison.run("pytorch").y
    np.testing.assert_allclose(ratio, np.sqrt(3 / 4), rtol=1e-6)
    assert unbiased_ratio(4) == pytest.approx(np.sqrt(0.75))


def test_formulas_say_what_each_convention_does():
    pytorch = convention("pytorch")
    assert "D-1" in convention("annotated").formula and "D-1" not in pytorch.formula
    assert r"\mu" not in convention("rmsnorm").formula
    assert "10^{-3}" in convention("keras").formula


def test_the_settings_table_says_how_each_convention_differs():
    table = conventions_table(compare_conventions(SMALL)).set_index("convention")
    assert list(table.loc["PyTorch"]) == ["1e-05", "÷ D", "in the root", "yes"]
    assert table.loc["Keras", "eps"] == "0.001" and table.loc["BERT", "eps"] == "1e-12"
    assert table.loc["Annotated", "variance"] == "÷ (D − 1)"
    assert table.loc["Annotated", "eps goes"] == table.loc["NumPy tutorial", "eps goes"]
    assert table.loc["NumPy tutorial", "eps goes"] == "on the std"
    assert table.loc["RMSNorm", "minus mean"] == "no"


def test_comparison_table_has_a_row_per_convention_and_token():
    table = comparison_table(compare_conventions(TOKENS[:2]), ["a", "b"])
    assert len(table) == 2 * len(CONVENTIONS)
    row = table[(table.convention == "Keras LayerNormalization") & (table.token == "b")].iloc[0]
    assert row["y3"] == pytest.approx(_ln(TOKENS[1:2], 1e-3)[0, 2])


# ---------------------------------------------------------------- axes


def test_notebook_layout_is_per_token_and_one_group_is_not():
    x = np.array([[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]])
    axes = compare_axes(x)
    np.testing.assert_allclose(axes.per_token.y, _ln(x, 1e-5), rtol=1e-12, atol=1e-15)
    assert axes.notebook_vs_per_token < 1e-15
    whole = (x - x.mean()) / np.sqrt(x.var() + 1e-5)  # one mean and std for all 6 numbers
    np.testing.assert_allclose(axes.one_group.y[0], whole, rtol=1e-12)
    assert axes.one_group_vs_per_token == pytest.approx(np.max(np.abs(whole - _ln(x, 1e-5))))
    assert axes.one_group.mean.ravel()[0] == pytest.approx(1.3 / 6)


# ---------------------------------------------------------------- tolerance


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("0.364", 5e-4),
        ("5", 0.5),
        ("5.0", 0.05),
        ("2.23607", 5e-6),
        ("-0.0000", 5e-5),
        ("0.", 0.5),
        ("+.5", 0.05),
        ("1.5e-3", 5e-5),
        ("-1.4901e-08", 5e-13),
        ("1e-" + "0" * 5000 + "1", 0.05),  # more exponent digits than int() reads
        ("0." + "0" * 5000 + "1e-0" + "9" * 20, 0.0),
        ("0e400", sys.float_info.max),  # half a unit of 1e400 is beyond float64
    ],
)
def test_half_unit_comes_from_the_written_decimals(written, expected):
    assert half_unit(written) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("claim", ["0e400", "1e-" + "0" * 5000 + "1"])
def test_claims_with_extreme_exponents_are_judged_not_crashed_on(claim):
    (verdict,) = check_claims("0, 1", mean_text=claim).verdicts
    assert verdict.tolerance > 0


@pytest.mark.parametrize(
    ("claim", "holds"),
    [
        ("0.50", True),
        ("0.5", True),
        ("1", True),
        ("0.5045", True),
        ("0.51", False),
        ("0.5044", False),
        ("0.4", False),
    ],
)
def test_a_claim_holds_when_the_truth_rounds_to_it(claim, holds):
    (verdict,) = check_claims("0, 1.009", mean_text=claim).verdicts  # true mean 0.5045
    assert verdict.holds is holds
    assert verdict.tolerance == pytest.approx(half_unit(claim), abs=1e-5)


def test_written_numbers_keep_the_digits_and_skip_names():
    text = "tensor([0.2500, 0.1000, -1e-3], dtype=torch.float32, device='cuda:0')"
    assert written_numbers(text) == ["0.2500", "0.1000", "-1e-3"]
    assert written_numbers("1.5 −2.0") == ["1.5", "-2.0"]


# ---------------------------------------------------------------- verdicts


def test_unbiased_std_claim_matches_unbiased_not_biased():
    x = np.array([0.0, 0.1, 0.4, -0.1])
    unbiased, biased = np.std(x, ddof=1), np.std(x, ddof=0)
    claim = f"{unbiased:.4f}"
    assert abs(float(claim) - biased) > half_unit(claim)  # the two readings are distinguishable
    (verdict,) = check_claims("0.0, 0.1, 0.4, -0.1", std_text=claim).verdicts
    assert "unbiased" in verdict.matches and "biased" not in verdict.matches
    assert verdict.conventions == ("annotated",)
    (verdict,) = check_claims("0.0, 0.1, 0.4, -0.1", std_text=f"{biased:.4f}").verdicts
    assert "biased" in verdict.matches and "unbiased" not in verdict.matches
    assert "annotated" not in verdict.conventions and "pytorch" in verdict.conventions


def test_explained_std_of_the_comma_token_is_wrong_under_both_readings():
    x = np.array([0.0, 0.1, 0.4, -0.1])
    case = check_case("explained-prompt")
    result = check_claims(case.x, std_text=case.std, labels=case.labels)
    verdict = result.verdicts[1]  # the "," token
    truths = [np.std(x, ddof=0), np.std(x, ddof=1)]
    assert all(abs(t - verdict.claim.value) > half_unit(verdict.claim.written) for t in truths)
    assert not verdict.holds and verdict.conventions == ()
    assert verdict.usual_value == pytest.approx(truths[0])


def _std_readings(row: np.ndarray) -> list[float]:
    """Every std a convention computes, written out independently."""
    var, var_u = row.var(), row.var(ddof=1)
    return [
        np.sqrt(var),
        np.sqrt(var_u),
        *(np.sqrt(var + eps) for eps in (1e-5, 1e-3, 1e-12)),
        np.sqrt(var_u) + 1e-6,
        np.sqrt(var) + 1e-6,
        np.sqrt(np.mean(row**2) + 1e-6),
    ]


@pytest.mark.parametrize(
    "key", ["why-not-bn-rows", "why-not-bn-columns", "why-not-bn-contextual", "why-not-bn-sample1"]
)
def test_why_not_bn_mean_and_std_verdicts_agree_with_numpy(key):
    case = check_case(key)
    rows = np.array([[float(v) for v in line.split(",")] for line in case.x.split("\n")])
    means, stds = case.mean.split(", "), case.std.split(", ")
    result = check_claims(case.x, case.mean, case.std, labels=case.labels)
    verdicts = {(v.claim.quantity, v.claim.token): v for v in result.verdicts}
    for t, row in enumerate(rows):
        tol = half_unit(means[t])
        assert verdicts["mean", t].holds == (abs(row.mean() - float(means[t])) <= tol)
        tol = half_unit(stds[t])
        expected = any(abs(s - float(stds[t])) <= tol + 1e-9 for s in _std_readings(row))
        assert verdicts["std", t].holds == expected


def test_why_not_bn_batch_norm_claims():
    z1 = np.array([7.0, 2, 1, 7, 3])
    case = check_case("why-not-bn-columns")
    result = check_claims(case.x, case.mean, case.std, labels=case.labels)
    std_z1 = next(v for v in result.verdicts if v.claim.quantity == "std" and v.claim.token == 0)
    assert not std_z1.holds  # 2.65 is neither np.std nor np.std(ddof=1) of z1
    assert min(abs(s - 2.65) for s in _std_readings(z1)) > 0.005
    mean_z1 = result.verdicts[0]
    assert mean_z1.holds and mean_z1.usual_value == pytest.approx(z1.mean())


def test_lecture_5_outputs_hold_only_for_the_numpy_convention():
    case = check_case("lecture5-numpy")
    result = check_claims(case.x, out_text=case.out)
    x = np.array([[0.2, 0.8, 1.0, 1.2], [1.0, 0.0, 0.5, 1.5]])
    truth = _eps_outside(x, 1e-6, ddof=0)
    pytorch = _ln(x, 1e-5)
    for v in result.verdicts:
        t, f = v.claim.token, v.claim.feature
        tol = half_unit(v.claim.written)
        assert v.holds == (abs(truth[t, f] - v.claim.value) <= tol + 1e-9)
        assert ("pytorch" in v.conventions) == (abs(pytorch[t, f] - v.claim.value) <= tol + 1e-9)
    assert result.consistent == ("numpy",)


def test_add_norm_notebook_std_holds_with_eps_inside_and_not_as_the_plain_std():
    x = np.array([0.2, 0.1, 0.3])
    case = check_case("add-norm-notebook")
    result = check_claims(case.x, std_text=case.std)
    first = result.verdicts[0]
    tol = half_unit(first.claim.written)
    assert abs(np.sqrt(x.var() + 1e-5) - first.claim.value) <= tol
    assert abs(x.std() - first.claim.value) > tol
    assert "pytorch" in first.matches and "biased" not in first.matches


def test_every_case_parses_and_the_tables_agree():
    for case in CHECK_CASES:
        result = check_claims(case.x, case.mean, case.std, case.var, case.out, case.labels)
        assert result.verdicts, case.key
        table = verdict_table(result)
        assert list(table.verdict) == ["holds" if v.holds else "wrong" for v in result.verdicts]
        tally = tally_table(result)
        for c, held in zip(CONVENTIONS, tally["claims that hold"], strict=True):
            assert held == sum(c.key in v.conventions for v in result.verdicts)
        assert set(result.consistent) == {
            c.key
            for c, held in zip(CONVENTIONS, tally["claims that hold"], strict=True)
            if held == len(result.verdicts)
        }


def test_readings_table_holds_the_true_statistics():
    x = np.array([[7.0, 5, 4], [2, 3, 4]])
    table = readings_table(check_claims("7, 5, 4\n2, 3, 4"))
    np.testing.assert_allclose(table.loc["mean"], x.mean(axis=1))
    np.testing.assert_allclose(table.loc["unbiased std (÷(D−1))"], x.std(axis=1, ddof=1))
    np.testing.assert_allclose(table.loc["mean of squares"], np.mean(x**2, axis=1))


def test_no_claims_gives_no_verdicts():
    result = check_claims("1, 2, 3")
    assert result.verdicts == () and result.consistent == ()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("1, 2, 3\n4, 5, 6", "1"), "claimed mean: 1 numbers, but the vector needs 2"),
        (("1, 2, 3", "", "abc"), "claimed std: row 1, column 1"),
        (("1, 2, 3", "", "", "", "1, 2"), "needs 3 (one per feature"),
        (("", "1"), "vector: Enter at least one number"),
        (("1, 2, x",), "vector: row 1, column 3"),
        (("1, 2", "[1] foo 2"), "claimed mean"),
    ],
)
def test_bad_claims_raise_input_error_with_a_clear_message(fields, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        check_claims(*fields)


# ---------------------------------------------------------------- figures


def test_outputs_chart_has_one_bar_series_per_convention():
    comparison = compare_conventions(TOKENS[:2])
    fig = outputs_by_convention(comparison, 1, "token 2")
    assert [t.name for t in fig.data] == [c.name for c in CONVENTIONS]
    for trace, run in zip(fig.data, comparison.runs, strict=True):
        np.testing.assert_allclose(trace.y, run.y[1])
    assert len({t.marker.color for t in fig.data}) == len(CONVENTIONS)


def test_groupings_heatmap_stacks_per_token_over_one_group():
    axes = compare_axes(np.array([[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]]))
    z = np.array(groupings_heatmap(axes, ["a", "b"]).data[0].z, dtype=float)
    np.testing.assert_allclose(z[:2], axes.per_token.y, atol=1e-12)
    np.testing.assert_allclose(z[2:], axes.one_group.y[0], atol=1e-12)
    assert z[0, 0] == 0.0  # 0.2 - mean(0.2, 0.1, 0.3) is 0 up to rounding, shown as 0


def test_claim_errors_mark_wrong_claims_above_the_line():
    case = check_case("why-not-bn-sample1")
    result = check_claims(case.x, case.mean, case.std, out_text=case.out)
    bar = claim_errors(result).data[0]
    assert len(bar.y) == len(result.verdicts)
    for height, colour, v in zip(bar.y, bar.marker.color, result.verdicts, strict=True):
        assert (bar.base + height <= 1) == v.holds  # the bar's top: its ratio
        assert (colour == HIGHLIGHT) == (not v.holds)


def test_every_conventions_figure_is_valid():
    case = check_case("why-not-bn-sample1")
    figures = (
        outputs_by_convention(compare_conventions(TOKENS[:2]), 1, "token 2"),
        groupings_heatmap(compare_axes(np.array([[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]])), ["a", "b"]),
        claim_errors(check_claims(case.x, case.mean, case.std, out_text=case.out)),
    )

    checked = [validated(fig) for fig in figures]

    assert checked[1].layout.title.y == 0.97
    assert [(s.y0, s.y1) for s in checked[2].layout.shapes] == [(1, 1)]  # the "rounds" line
    assert checked[2].layout.annotations[0].y == 0  # its label: log10(1) on the log axis
    assert checked[2].layout.yaxis.type == "log"


def test_cases_name_their_tutorials_by_title_and_old_keys_still_open_them():
    keys = {c.key for c in CHECK_CASES}
    for case in CHECK_CASES:
        assert "seed" not in (case.key + case.title + case.source).lower()
        assert any(f'"{title}"' in case.source for title in TITLES.values()), case.key
    assert set(OLD_KEYS.values()) == keys and len(OLD_KEYS) == len(keys)
    assert case_key("seed003-contextual") == "why-not-bn-contextual"
    assert case_key("action-2468") == "action-2468"
    assert check_case(case_key("seed001-notebook")).x.startswith("torch.Tensor")


def test_quantity_table_sums_up_the_verdicts_per_quantity():
    case = check_case("why-not-bn-sample1")
    result = check_claims(case.x, case.mean, case.std, out_text=case.out)
    table = quantity_table(result).set_index("claims that hold")
    outputs = [v for v in result.verdicts if v.claim.quantity == "out"]
    held = sum(v.holds for v in outputs)
    assert f"{held} of 3 outputs" in table.index
    assert table.index[0] == "1 of 1 mean"


def test_root_mean_square_has_one_home_in_norms():
    import lnlab.labs.conventions.compare as conventions
    from lnlab.core.norms import root_mean_square

    x = np.array([[0.1, 0.3, -0.2, 0.8], [1e200, -2e200, 0, 0]])
    np.testing.assert_allclose(
        root_mean_square(x, 1e-6)[:1], np.sqrt(np.mean(x[:1] ** 2) + 1e-6), rtol=1e-15
    )
    assert np.isfinite(root_mean_square(x)).all()
    assert conventions.root_mean_square is root_mean_square
    run = compare_conventions(x[:1]).run("rmsnorm")
    assert run.denominator[0] == root_mean_square(x[:1], 1e-5)[0]


def test_llama_s_epsilon_is_the_reference_code_s():
    """Meta's reference LLaMA code sets RMSNorm's eps (norm_eps) to 1e-5; Hugging Face's
    LlamaConfig defaults to 1e-6 and T5 uses 1e-6, so the name says LLaMA alone."""
    c = convention("rmsnorm")
    assert c.eps == 1e-5
    assert "LLaMA" in c.name and "T5" not in c.name
    assert "eps = 1e-5" in c.source and "Hugging Face" in c.source and "1e-6" in c.source
    assert "10^{-5}" in c.formula
    table = conventions_table(compare_conventions(SMALL)).set_index("convention")
    assert table.loc["RMSNorm", "eps"] == "1e-05"
    x = np.array([[2.0, 4.0, 6.0, 8.0]])
    expected = [float(v) / math.sqrt(30 + 1e-5) for v in x[0]]  # mean of squares 120 / 4
    np.testing.assert_allclose(compare_conventions(x).run("rmsnorm").y[0], expected, rtol=1e-15)


def test_the_annotated_transformer_needs_both_options():
    """Its `a_2 * (x - mean) / (x.std() + eps) + b_2` (torch's x.std() divides by D - 1) is
    `unbiased=True, eps_outside=True`; eps_outside alone, the NumPy class's convention, is
    off by 0.17 on this 5 x 6 example (measured), so neither README nor docstring may call
    it the Annotated Transformer's."""
    x = np.random.default_rng(0).standard_normal((5, 6))
    t = torch.tensor(x)
    annotated = ((t - t.mean(-1, keepdim=True)) / (t.std(-1, keepdim=True) + 1e-6)).numpy()
    both = lnlab.layer_norm(x, eps=1e-6, unbiased=True, eps_outside=True)
    np.testing.assert_allclose(both, annotated, atol=1e-14)
    assert np.abs(lnlab.layer_norm(x, eps=1e-6, eps_outside=True) - annotated).max() > 0.1
    c = convention("annotated")
    assert c.unbiased and c.eps_outside and c.eps == 1e-6


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_the_eps_slide_says_how_much_eps_moves_this_token(scale):
    """ε "moved the outputs not at all when the variance is large": with σ² = 1.25, y1 is
    -1.3416 with ε = 1e-5 and -1.3411 with 1e-3. The slide now gives each library's factor
    √(σ² / (σ² + ε)) on the token shown, which is its outputs over ε = 0's (checked here
    against that division), and never says "not at all"."""
    x = scale * np.array([[1.0, 2.0, 3.0, 4.0], [2.0, -1.0, 0.5, 3.0]])
    comparison = compare_conventions(x)
    for token in range(2):
        lesson = conventions_slides(comparison, token, compare_axes(x), check_claims("1, 2"))
        said = lesson.sections[lesson.index("eps_size")].finding
        assert "not at all" not in said
        centred = x[token] - x[token].mean()
        bare = centred / np.sqrt(np.mean(centred**2))
        for key in ("pytorch", "keras", "bert"):
            run = comparison.run(key)
            factor = float(np.median(run.y[token] / bare))
            shown = fmt(factor)
            if shown == "1":  # under 1 by less than 4 decimals show: said as 1 − its gap
                gap = rf"{convention(key).short} 1 − ([\d.]+(?:e[+-]\d+)?)"
                assert float(re.search(gap, said)[1]) == pytest.approx(1 - factor, 1e-3, 1e-15)
            else:
                assert f"{convention(key).short} {shown}" in said
    ones = conventions_slides(compare_conventions(X1234), 0, compare_axes(X1234), check_claims("1"))
    assert "Keras 0.9996" in ones.sections[ones.index("eps_size")].finding  # σ² = 1.25


X1234 = np.array([[1.0, 2.0, 3.0, 4.0]])
