"""lnlab.labs.padding.batch: sentences -> padded batch -> Batch Norm (naive, masked) and Layer Norm.

Expected values are worked out by hand in the comments, or come from torch.nn.functional.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lnlab import batch_norm_trace
from lnlab.core.errors import InputError
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import export as pex
from lnlab.labs.padding import lesson, links
from lnlab.labs.padding import questions as pq
from lnlab.teach.quiz import options

HI = pad.parse_sentences("Hi Nitish\nHow are you today")
# The stacked rows: Hi, Nitish, PAD, PAD, How, are, you, today (preset "hi-nitish").
ROWS = np.array(
    [[5, 1, 8], [3, 7, 2], [0, 0, 0], [0, 0, 0], [4, 2, 6], [1, 8, 3], [7, 5, 9], [2, 4, 1]],
    dtype=np.float64,
)
REAL = np.array([1, 1, 0, 0, 1, 1, 1, 1], dtype=bool)


@pytest.fixture(scope="module")
def lab() -> pad.PaddingLab:
    return pad.padding_lab(HI, "hi-nitish")


def torch_bn(rows: np.ndarray, eps: float = 1e-5, training: bool = True, stats=None):
    """F.batch_norm on (N, D) rows; returns (y, running_mean, running_var)."""
    d = rows.shape[1]
    rm, rv = (torch.zeros(d), torch.ones(d)) if stats is None else stats
    rm, rv = rm.double().clone(), rv.double().clone()
    y = F.batch_norm(torch.tensor(rows), rm, rv, training=training, momentum=0.1, eps=eps)
    return y.numpy(), rm.numpy(), rv.numpy()


# ---------------------------------------------------------------- sentences


def test_sentences_split_on_whitespace_and_skip_blank_lines():
    assert pad.parse_sentences("  Hi   Nitish \n\n\tHow are you today\n") == (
        ("Hi", "Nitish"),
        ("How", "are", "you", "today"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one sentence"),
        ("  \n \n", "at least one sentence"),
        ("\n".join(["a b"] * 9), "9 sentences: at most 8"),
        (" ".join(["w"] * 17), "sentence 1 has 17 words: at most 16"),
        ("ok\nfine " + "x" * 41, "sentence 2, word 2"),
        ("zero\u200bwidth", r"U\+200B"),
        ("x" * (pad.MAX_TEXT_CHARS + 1), "characters"),
    ],
)
def test_bad_sentences_raise_input_error(text, message):
    with pytest.raises(InputError, match=message):
        pad.parse_sentences(text)


def test_limits_are_inclusive():
    text = "\n".join([" ".join(["w" * 40] * 16)] * 8)
    assert len(pad.parse_sentences(text)) == 8


@pytest.mark.parametrize("text", ["", "   ", "two\nlines", " ".join(["w"] * 17)])
def test_bad_edited_sentence(text):
    with pytest.raises(InputError):
        pad.parse_sentence(text)


def test_vocabulary_keeps_first_appearance_order():
    assert pad.vocabulary((("b", "a", "b"), ("c", "a"))) == ("b", "a", "c")


# ---------------------------------------------------------------- embeddings


def test_hashed_embedding_is_deterministic_readable_and_word_specific():
    v = pad.word_embedding("today's")
    assert v == pad.word_embedding("today's")
    assert len(v) == pad.DIM
    assert all(0 <= x < 10 and round(x, 1) == x for x in v)
    assert pad.word_embedding("cat") != pad.word_embedding("Cat")


def test_embedding_table_sources():
    rows = pad.embedding_table(("Hi", "zebra", "you"), "hi-nitish", {"you": (1.0, 2.0, 3.0)})
    assert [(r.word, r.source) for r in rows] == [
        ("Hi", "preset"),
        ("zebra", "hash of the word"),
        ("you", "edited"),
    ]
    assert rows[0].vector == (5.0, 1.0, 8.0)
    assert rows[1].vector == pad.word_embedding("zebra")
    assert rows[2].vector == (1.0, 2.0, 3.0)


def test_read_overrides_keeps_only_real_edits_and_absent_words():
    words = ("Hi", "zebra")
    values = [[9.0, 1.0, 8.0], list(pad.word_embedding("zebra"))]
    edits = pad.read_overrides(words, values, "hi-nitish", {"gone": (1.0, 1.0, 1.0)})
    assert edits == {"gone": (1.0, 1.0, 1.0), "Hi": (9.0, 1.0, 8.0)}
    # setting a word back to its default removes the edit
    assert pad.read_overrides(("Hi",), [[5.0, 1.0, 8.0]], "hi-nitish", {"Hi": (9, 1, 8)}) == {}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([[None, 1.0, 8.0]], "empty"),
        ([[float("nan"), 1.0, 8.0]], "empty"),
        ([["abc", 1.0, 8.0]], "not a number"),
        ([[1e4, 1.0, 8.0]], "between"),
        ([[float("inf"), 1.0, 8.0]], "between"),
        ([[1.0, 8.0]], "needs 3"),
        ([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], "2 rows"),
    ],
)
def test_bad_grid_values(values, message):
    with pytest.raises(InputError, match=message):
        pad.read_overrides(("Hi",), values, "hi-nitish", {})


def test_overrides_are_bounded():
    previous = {f"w{i}": (1.0, 1.0, 1.0) for i in range(300)}
    assert len(pad.read_overrides((), [], "hi-nitish", previous)) == pad.MAX_OVERRIDES


# ---------------------------------------------------------------- the padded batch


def test_padded_batch_and_labels(lab):
    assert lab.x.shape == (2, 4, 3)
    np.testing.assert_array_equal(lab.tokens, ROWS)
    np.testing.assert_array_equal(lab.real, REAL)
    assert lab.pad_count == 2
    assert lab.labels[1] == "1.2 Nitish" and lab.labels[2] == "1.3 [PAD]"


def test_naive_and_masked_column_means_by_hand(lab):
    # feature 1 column: 5 + 3 + 0 + 0 + 4 + 1 + 7 + 2 = 22
    np.testing.assert_allclose(lab.norms.naive_bn.mean, [22 / 8, 27 / 8, 29 / 8])
    np.testing.assert_allclose(lab.norms.masked_bn.mean, [22 / 6, 27 / 6, 29 / 6])
    # squared deviations from 2.75: 5.0625 + 0.0625 + 2 * 7.5625 + 1.5625 + 3.0625
    # + 18.0625 + 0.5625 = 43.5, over 8 rows
    assert lab.norms.naive_bn.var[0] == pytest.approx(43.5 / 8)
    assert lab.norms.naive_bn.count == 8 and lab.norms.masked_bn.count == 6


def test_naive_bn_matches_torch_and_turns_pads_non_zero(lab):
    y, running_mean, running_var = torch_bn(ROWS)
    naive = lab.norms.naive_bn
    np.testing.assert_allclose(naive.y.reshape(-1, 3), y, atol=1e-12)
    pad_row = (0 - ROWS.mean(axis=0)) / np.sqrt(ROWS.var(axis=0) + 1e-5)
    np.testing.assert_allclose(naive.y[0, 2], pad_row, atol=1e-12)
    assert np.all(np.abs(naive.y[0, 2]) > 1)
    np.testing.assert_allclose(naive.running_mean, running_mean, atol=1e-12)
    np.testing.assert_allclose(naive.running_var, running_var, atol=1e-12)


def test_masked_bn_matches_torch_on_real_rows_only(lab):
    y, _, _ = torch_bn(ROWS[REAL])
    masked = lab.norms.masked_bn.y.reshape(-1, 3)
    np.testing.assert_allclose(masked[REAL], y, atol=1e-12)
    np.testing.assert_array_equal(masked[~REAL], 0.0)


def test_masked_bn_ignores_what_the_pads_hold():
    rng = np.random.default_rng(3)
    x = np.array(ROWS).reshape(2, 4, 3)
    junk = x.copy()
    junk[~REAL.reshape(2, 4)] = rng.normal(0, 100, (2, 3))
    mask = REAL.reshape(2, 4)
    a, b = batch_norm_trace(x, mask=mask), batch_norm_trace(junk, mask=mask)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.y, b.y)


def test_layer_norm_matches_torch_and_pads_stay_at_beta():
    lab = pad.padding_lab(HI, "hi-nitish", beta=0.5)
    expected = F.layer_norm(torch.tensor(ROWS), (3,), eps=1e-5).numpy() + 0.5
    np.testing.assert_allclose(lab.norms.ln.y.reshape(-1, 3), expected, atol=1e-12)
    np.testing.assert_array_equal(lab.norms.ln.y[0, 2:], 0.5)


def test_eps_zero_makes_layer_norm_pads_nan_and_nothing_else():
    lab = pad.padding_lab(HI, "hi-nitish", eps=0.0)
    ln = lab.norms.ln.y.reshape(-1, 3)
    assert np.isnan(ln[~REAL]).all()
    assert np.isfinite(ln[REAL]).all()
    assert np.isfinite(lab.norms.naive_bn.y).all()


def test_edited_embedding_feeds_the_batch():
    lab = pad.padding_lab(HI, "hi-nitish", (("Hi", (9.0, 1.0, 8.0)),))
    # (9 + 3 + 0 + 0 + 4 + 1 + 7 + 2) / 8 = 26 / 8
    assert lab.norms.naive_bn.mean[0] == pytest.approx(26 / 8)


@pytest.mark.parametrize(
    ("steps", "eps", "beta"), [(1, 1e-5, 0.0), (20, 1e-5, 0.0), (200, 0.5, 2.0)]
)
def test_running_statistics_are_torch_batchnorm1d_s_after_n_steps(steps, eps, beta):
    """nn.BatchNorm1d trained `steps` times on the padded batch (PAD rows included), then
    put in eval mode: its running statistics and outputs are the lab's."""
    lab = pad.padding_lab(HI, "hi-nitish", eps=eps, beta=beta)
    running = pad.running_statistics(lab, steps)
    layer = torch.nn.BatchNorm1d(3, eps=eps, momentum=pad.MOMENTUM, dtype=torch.float64)
    torch.nn.init.constant_(layer.bias, beta)
    rows = torch.tensor(ROWS)
    for k in range(1, steps + 1):
        train_y = layer(rows)
        np.testing.assert_allclose(running.mean[k], layer.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(running.var[k], layer.running_var.numpy(), rtol=1e-12)
    np.testing.assert_allclose(running.train_y.reshape(-1, 3), train_y.detach(), atol=1e-12)
    layer.eval()
    eval_y = layer(rows).detach().numpy()
    np.testing.assert_allclose(running.eval_y.reshape(-1, 3), eval_y, atol=1e-12)
    assert running.gap == pytest.approx(np.abs(eval_y - train_y.detach().numpy()).max())


def test_running_statistics_close_the_gap_only_partly(lab):
    # after k steps from 0 the running mean is (1 - 0.9^k) of the batch mean
    one, many = pad.running_statistics(lab, 1), pad.running_statistics(lab, 200)
    np.testing.assert_allclose(one.mean[1], 0.1 * ROWS.mean(axis=0))
    np.testing.assert_allclose(many.mean[-1], (1 - 0.9**200) * ROWS.mean(axis=0))
    np.testing.assert_allclose(many.var[-1], ROWS.var(axis=0, ddof=1), rtol=1e-8)
    assert one.gap > 4 and 0.1 < many.gap < 0.12  # the unbiased variance leaves a gap:
    # in the limit eval y = train y * sqrt((σ² + ε) / (n/(n-1) σ² + ε)), with n = 8
    var = ROWS.var(axis=0)
    limit = lab.norms.naive_bn.y * np.sqrt((var + 1e-5) / (var * 8 / 7 + 1e-5))
    np.testing.assert_allclose(many.eval_y, limit, atol=1e-8)
    settled = np.abs(limit - lab.norms.naive_bn.y).max()
    assert many.settled_gap == pytest.approx(settled) == one.settled_gap
    # the gap after each step is that step's eval output against training's
    for k in (1, 37, 200):
        assert many.gaps[k - 1] == pad.running_statistics(lab, k).gap
    with pytest.raises(InputError, match="steps"):
        pad.running_statistics(lab, 0)


# ---------------------------------------------------------------- closed form


def test_closed_form_matches_this_batch(lab):
    cf = lab.closed_form
    assert cf.share == 0.25
    np.testing.assert_allclose(cf.predicted_mean, [22 / 8, 27 / 8, 29 / 8])
    assert np.max(np.abs(cf.mean_error)) < 1e-12
    assert np.max(np.abs(cf.var_error)) < 1e-12


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=5),
    seed=st.integers(0, 2**32 - 1),
    offset=st.floats(-50, 50),
)
def test_closed_form_equals_padded_statistics(lengths, seed, offset):
    rng = np.random.default_rng(seed)
    longest = max(lengths)
    x = np.zeros((len(lengths), longest, 2))
    mask = np.zeros((len(lengths), longest), dtype=bool)
    for b, n in enumerate(lengths):
        x[b, :n] = offset + rng.normal(0, 3, (n, 2))
        mask[b, :n] = True
    real = x[mask]
    p = 1 - mask.sum() / mask.size
    mean, var = pad.padded_moments(p, real.mean(axis=0), real.var(axis=0))
    naive = batch_norm_trace(x)
    np.testing.assert_allclose(mean, naive.mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(var, naive.var, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- who else is in the batch


def test_editing_another_sentence_moves_batch_norm_not_layer_norm(lab):
    who = lab.who_else
    assert who.words == ("Hi", "Nitish") and who.after == ("How", "are", "we", "today")
    assert who.max_change(who.ln) == 0.0
    assert who.max_change(who.masked_bn) > 0.1
    assert who.max_change(who.naive_bn) > 0.1
    # the "after" batch, by torch: "you" replaced by "we"
    rows = ROWS.copy()
    rows[6] = pad.word_embedding("we")
    y, _, _ = torch_bn(rows[REAL])
    np.testing.assert_allclose(who.masked_bn[1], y[:2], atol=1e-12)


def test_unchanged_replacement_changes_nothing():
    lab = pad.padding_lab(HI, "hi-nitish", focus=1, other=0, replacement=("Hi", "Nitish"))
    who = lab.who_else
    assert who.words == HI[1]
    assert who.max_change(who.naive_bn) == who.max_change(who.ln) == 0.0


def test_who_else_needs_two_sentences_and_two_different_ones():
    assert pad.padding_lab((("one",),), "hi-nitish").who_else is None
    with pytest.raises(InputError):
        pad.padding_lab(HI, "hi-nitish", focus=1, other=1)


# ---------------------------------------------------------------- which cells feed what


def test_highlight_masks(lab):
    naive = pad.highlight_mask(lab, pad.PICK_NAIVE, 1)
    assert naive.sum() == 8 and naive[:, 1].all()
    masked = pad.highlight_mask(lab, pad.PICK_MASKED, 1)
    np.testing.assert_array_equal(masked[:, 1], REAL)
    assert masked.sum() == 6
    token = pad.highlight_mask(lab, pad.PICK_TOKEN, 5)
    assert token.sum() == 3 and token[5].all()
    with pytest.raises(InputError):
        pad.highlight_mask(lab, "median", 0)


def test_statistic_latex_shows_the_cells_and_the_result(lab):
    mean, var, written = lesson.statistic_latex(lab, pad.PICK_NAIVE, 0)
    assert r"\tfrac{1}{8}\big(5 + 3 + 0 + 0 + 4 + 1 + 7 + 2\big) = 2.75" in mean
    assert var.endswith(r"(x - 2.75)^2 = 5.4375")
    assert r"(5 - 2.75)^2 + (3 - 2.75)^2" in written and written.endswith(r"\big) = 5.4375")
    mean, _, _ = lesson.statistic_latex(lab, pad.PICK_MASKED, 0)
    assert r"\tfrac{1}{6}\big(5 + 3 + 4 + 1 + 7 + 2\big) = 3.6667" in mean
    mean, _, _ = lesson.statistic_latex(lab, pad.PICK_TOKEN, 2)
    assert r"\tfrac{1}{3}\big(0 + 0 + 0\big) = 0" in mean


# ---------------------------------------------------------------- the padding calculator


def test_calculator_tutorial_numbers():
    count = pad.padding_share(32, 100, 30)
    assert count.share == 0.7
    assert (count.slots, count.real, count.zeros) == (3200, 960, 2240)


@pytest.mark.parametrize(
    ("batch", "longest", "average", "message"),
    [
        (0, 100, 30, "batch size"),
        (2.5, 100, 30, "batch size"),
        (32, 0, 1, "longest"),
        (32, 100, 120, "cannot exceed"),
        (32, 100, 0.5, "at least 1"),
        (32, 100, float("nan"), "at least 1"),
        (2, 100, 10, "at least 50.5"),
        (pad.MAX_CALC_BATCH + 1, 100, 30, "batch size"),
    ],
)
def test_calculator_rejects(batch, longest, average, message):
    with pytest.raises(InputError, match=message):
        pad.padding_share(batch, longest, average)


# ---------------------------------------------------------------- the 5 x 3 table


def test_preactivations_down_columns_and_across_rows():
    table = pad.preactivation_norms()
    # z1 = 7, 2, 1, 7, 3: mean 4, squared deviations 9 + 4 + 9 + 9 + 1 = 32, var 32 / 5
    assert table.bn.mean[0] == pytest.approx(4.0)
    assert table.bn.var[0] == pytest.approx(6.4)
    # sample 1 = 7, 5, 4: mean 16 / 3
    assert table.ln.mean[0, 0] == pytest.approx(16 / 3)
    x = torch.tensor(table.x)
    np.testing.assert_allclose(table.ln.y, F.layer_norm(x, (3,), eps=1e-5).numpy(), atol=1e-12)
    np.testing.assert_allclose(table.bn.y, torch_bn(table.x)[0], atol=1e-12)
    assert table.columns == ("z1", "z2", "z3")


# ---------------------------------------------------------------- links


def test_sentences_text_is_canonical():
    assert links.format_sentences(pad.parse_sentences(" Hi   Nitish\n\n How are ")) == (
        "Hi Nitish\nHow are"
    )


def test_overrides_text_round_trip_is_exact_and_compact():
    edits = {"Hi": (9.0, 1.0, 8.0), "a:b;c": (0.1, -2e-05, 1000.0), "ünï": (-0.5, 0.0, 3.25)}
    text = links.format_overrides(edits)
    assert text == "Hi:9,1,8 a:b;c:0.1,-2e-05,1000 ünï:-0.5,0,3.25"
    assert links.parse_overrides(text) == edits
    assert links.parse_overrides("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Hi:1,2", "needs 3"),
        ("Hi:1,2,3,4", "has 4 numbers"),
        ("Hi", "not word:number"),
        (":1,2,3", "not word:number"),
        ("Hi:1,x,3", "not a number"),
        ("Hi:1,nan,3", "not finite"),
        ("Hi:1,1e309,3", "not finite"),
        ("Hi:1,1e-400,3", "too small to represent"),
        ("Hi:1,\u0663,3", "type the digits 0-9"),
        ("Hi:1,1_0,3", 'without "_"'),
        ("Hi:1,,3", "a number is missing"),
        ("Hi:1,1001,3", "between"),
        ("Hi:1,2,3 Hi:4,5,6", "edited twice"),
        ("x" * 41 + ":1,2,3", "41 characters"),
        ("a\u200bb:1,2,3", "invisible"),
        (" ".join(f"w{i}:1,2,3" for i in range(pad.MAX_OVERRIDES + 1)), "129 edited words"),
        ("w" * (links.MAX_OVERRIDES_CHARS + 1), "characters: at most"),
    ],
)
def test_bad_overrides_text(text, message):
    with pytest.raises(InputError, match=message):
        links.parse_overrides(text)


def test_checked_text_param_refuses_what_its_parser_refuses():
    param = links.CheckedText("s", "text", max_chars=100, max_lines=2, check=pad.parse_sentences)
    assert param.decode("a b\nc") == "a b\nc"
    with pytest.raises(InputError, match=r"^s: sentence 1 has 17 words"):
        param.decode(" ".join(["w"] * 17))
    with pytest.raises(InputError, match="more than 2 lines"):
        param.decode("a\nb\nc")
    with pytest.raises(InputError, match="over the 100 limit"):
        param.decode("a" * 101)
    assert param.encode("a b") == "a b"


# ---------------------------------------------------------------- exports


def test_statistics_rows_by_hand(lab):
    rows = pex.statistics_rows(lab)
    assert len(rows) == 8 * 3
    pad_f1 = rows[2 * 3]  # row 3 (the first PAD), feature f1
    assert (pad_f1["token"], pad_f1["pad"], pad_f1["feature"], pad_f1["x"]) == (
        "1.3 [PAD]",
        True,
        "f1",
        0.0,
    )
    # f1 = 5, 3, 0, 0, 4, 1, 7, 2: naive mean 22 / 8; real tokens only 22 / 6
    column = ROWS[:, 0]
    assert pad_f1["naive_bn_mean"] == pytest.approx(22 / 8)
    assert pad_f1["naive_bn_var"] == pytest.approx(column.var())
    assert pad_f1["naive_bn_y"] == pytest.approx(-2.75 / np.sqrt(column.var() + 1e-5))
    assert pad_f1["masked_bn_mean"] == pytest.approx(22 / 6)
    assert pad_f1["masked_bn_y"] == 0.0
    assert (pad_f1["ln_mean"], pad_f1["ln_var"], pad_f1["ln_y"]) == (0.0, 0.0, 0.0)
    hi_f2 = rows[1]  # Hi = (5, 1, 8): mean 14 / 3, feature 2 = 1
    assert hi_f2["ln_mean"] == pytest.approx(14 / 3)
    ln_y = F.layer_norm(torch.tensor(ROWS[0]), (3,), eps=1e-5)[1].item()
    assert hi_f2["ln_y"] == pytest.approx(ln_y)
    assert hi_f2["masked_bn_mean"] == pytest.approx(27 / 6)  # f2 = 1 + 7 + 2 + 8 + 5 + 4


def test_statistics_json_holds_all_three_and_the_settings():
    lab = pad.padding_lab(HI, "hi-nitish", eps=0.0)  # Layer Norm's PAD rows: 0 / 0
    data = json.loads(pex.statistics_json(lab, "hi-nitish"))
    assert data["settings"]["sentences"] == ["Hi Nitish", "How are you today"]
    assert data["settings"]["embeddings"]["today"] == [2.0, 4.0, 1.0]
    assert data["settings"]["mask"] == [[True, True, False, False], [True] * 4]
    assert data["naive_bn"]["mean"] == pytest.approx([22 / 8, 27 / 8, 29 / 8])
    assert data["masked_bn"]["count"] == 6
    assert data["ln"]["y"][0][2] == ["nan", "nan", "nan"]
    assert data["ln"]["mean"][0][0] == [pytest.approx(14 / 3)]


# ---------------------------------------------------------------- questions


def test_page_questions_ask_for_the_pad_output_with_beta():
    plain_lab = pad.padding_lab(HI, "hi-nitish")
    shifted = pad.padding_lab(HI, "hi-nitish", beta=2.0)
    column = ROWS[:, 0]
    x_hat = -column.mean() / np.sqrt(column.var() + 1e-5)
    questions = pq.page_questions(shifted)
    assert questions.outputs.answer == pytest.approx(x_hat + 2.0)
    assert pq.page_questions(plain_lab).outputs.answer == pytest.approx(x_hat)
    # a new beta is a new question; the same example keeps its ids
    assert questions.outputs.qid != pq.page_questions(plain_lab).outputs.qid
    assert questions.statistics.qid == pq.page_questions(plain_lab).statistics.qid
    # f1's variance over all 8 rows: (1 - p) σ² + p (1 - p) μ² with the real tokens' μ, σ²
    variance = questions.closed_form
    assert variance.answer == pytest.approx(ROWS[:, 0].var())
    real = ROWS[REAL, 0]
    assert variance.answer == pytest.approx(0.75 * real.var() + 0.25 * 0.75 * real.mean() ** 2)
    wrong = {w.misconception: w.answer for w in variance.wrong}
    assert wrong == {
        "bn_ignores_padding": pytest.approx(real.var()),  # the PAD zeros not counted
        "d_minus_1": pytest.approx(ROWS[:, 0].var(ddof=1)),  # torch.var's n - 1
    }


def test_page_questions_without_pads_or_with_a_zero_mean():
    even = pad.padding_lab(pad.parse_sentences("Hi Nitish\nHow are"), "hi-nitish")
    assert pq.page_questions(even).outputs is None
    assert pq.page_questions(even).closed_form is None  # no PAD share to ask about
    # f1 of the real tokens: Hi 1, Nitish 3, How -4, are 1, you 2, today -3: mean 0
    edits = (("Hi", (1.0, 1.0, 8.0)), ("How", (-4.0, 2.0, 6.0)), ("you", (2.0, 5.0, 9.0)))
    zero = pad.padding_lab(HI, "hi-nitish", (*edits, ("today", (-3.0, 4.0, 1.0))))
    assert zero.norms.masked_bn.mean[0] == 0
    # the padded variance is (1 - p) σ²: the real variance is still a different answer
    variance = pq.page_questions(zero).closed_form
    assert variance.answer == pytest.approx(0.75 * zero.closed_form.real_var[0])
    assert len(options(variance)) == 3


@pytest.mark.parametrize(
    ("eps", "beta", "message"),
    [
        (float("nan"), 0.0, "epsilon"),
        (-1e-9, 0.0, "epsilon"),
        (1.5, 0.0, "epsilon"),
        (1e-5, float("inf"), "β"),
        (1e-5, float("nan"), "β"),
        (1e-5, -100.5, "β"),
    ],
)
def test_checked_settings_refuses_what_the_number_boxes_would(eps, beta, message):
    with pytest.raises(InputError, match=message):
        pad.checked_settings(eps, beta)


def test_checked_settings_accepts_the_bounds():
    assert pad.checked_settings(0, -100) == (0.0, -100.0)
    assert pad.checked_settings(1, 100) == (1.0, 100.0)
