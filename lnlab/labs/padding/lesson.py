"""The "Batch Norm vs Layer Norm" lesson as slides, built from a PaddingLab
(lnlab.labs.padding.batch).

One idea per section: the padded batch, which cells feed a statistic, Batch Norm's and Layer
Norm's statistics, the three outputs, the closed form and the padding calculator, who else is
in the batch, the 5 x 3 table read both ways, and the running statistics that make Batch Norm
differ between training and inference. Pure Python: the page draws it (lnlab.ui.lesson_view).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from lnlab.core.numbers import ROUNDING, fmt
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import plots
from lnlab.labs.padding.questions import page_questions
from lnlab.teach.claims import claim
from lnlab.teach.figures import spread
from lnlab.teach.latex import joined, num, power, term, vector
from lnlab.teach.lesson import Callout, Figure, Lesson, Metric, Section, Table
from lnlab.teach.markdown import plain
from lnlab.teach.presets import PADDING_COUNT
from lnlab.teach.quiz import Question

TITLE = "Batch Norm vs Layer Norm on a padded batch"
INTRO = (  # the setting only: which statistics the PAD rows reach is the lesson's question
    "Sentences in a batch have different lengths, so the short ones are **padded with zero "
    "PAD rows** up to the longest. Follow one padded batch through Batch Norm, naive and "
    "masked, and through Layer Norm, and see which of their statistics and outputs the "
    "padding reaches."
)
FEATURES = list(pad.FEATURES)
DEFAULT_COUNT = pad.padding_share(PADDING_COUNT.batch, PADDING_COUNT.longest, PADDING_COUNT.average)
SLIDE_ROWS = 10  # a table with more rows than this stays off the slides

# Sections whose widgets the page draws (ui.lesson_view's `controls`).
CELLS, CLOSED_FORM, CALCULATOR, WHO_ELSE, RUNNING = (
    "cells",
    "closed_form",
    "calculator",
    "who_else",
    "running",
)
SECTION_KEYS = (
    "batch",
    CELLS,
    "bn_stats",
    "ln_stats",
    "naive_out",
    "masked_out",
    "ln_out",
    CLOSED_FORM,
    CALCULATOR,
    WHO_ELSE,
    "columns",
    "rows",
    RUNNING,
    "gap",
)
# The page's eight sections before it became a lesson, in order: old links' `slide=k` opens
# the section that now holds the content of old section k.
OLD_SLIDES = tuple(
    SECTION_KEYS.index(k)
    for k in ("batch", CELLS, "bn_stats", "naive_out", CLOSED_FORM, WHO_ELSE, "columns", RUNNING)
)


@dataclass(frozen=True)
class View:
    """The choices a section's own widgets make: the statistic outlined (pick, index), the
    closed form's feature, the calculator's batch and the running statistics' steps."""

    pick: str = pad.PICK_NAIVE
    index: int = 0
    cf_feature: int = 0
    count: pad.PaddingShare = DEFAULT_COUNT
    steps: int = pad.DEFAULT_STEPS


def slides(lab: pad.PaddingLab, view: View) -> Lesson:
    """The page's lesson, every section in SECTION_KEYS order."""
    questions = page_questions(lab)
    sections = (
        _batch(lab),
        _cells(lab, view),
        _bn_stats(lab, questions.statistics),
        _ln_stats(lab, questions.ln_mean),
        *_outputs(lab, questions.outputs, questions.masked),
        _closed_form(lab, view, questions.closed_form),
        _calculator(lab, view),
        _who_else(lab),
        *_table_both_ways(lab),
        _running(lab, view),
        _gap(lab, view),
    )
    assert tuple(s.key for s in sections) == SECTION_KEYS
    return Lesson(key="padding", title=TITLE, intro=INTRO, context=summary(lab), sections=sections)


def summary(lab: pad.PaddingLab) -> str:
    """The batch in one line: its shape and how much of it is padding."""
    b, s, d = lab.x.shape
    return (
        f"**{b}** sentences, the longest **{s}** words: (B, S, D) = ({b}, {s}, {d}); "
        f"**{lab.pad_count}** of {lab.tokens.shape[0]} rows are PAD (p = "
        f"{fmt(lab.closed_form.share)})."
    )


# ---------------------------------------------------------------- tables


def rows_frame(lab: pad.PaddingLab, values: np.ndarray) -> pd.DataFrame:
    """A (B, S, D) array as a table: one row per token of the stacked batch."""
    frame = pd.DataFrame(values.reshape(-1, pad.DIM), columns=FEATURES)
    frame.insert(0, "token", lab.labels)
    return frame


def stats_frame(names: list[str], name: str, trace: object) -> pd.DataFrame:
    """Mean, variance and σ_ε per group (a feature, a token, a node or a sample)."""
    frame = pd.DataFrame(
        {
            "mean μ": np.ravel(trace.mean),  # type: ignore[attr-defined]
            "variance σ²": np.ravel(trace.var),  # type: ignore[attr-defined]
            "σ_ε": np.ravel(trace.std),  # type: ignore[attr-defined]
        }
    )
    frame.insert(0, name, names)
    return frame


def bn_stats_frame(lab: pad.PaddingLab) -> pd.DataFrame:
    """Each feature's Batch Norm statistics, PAD rows included and masked, side by side."""
    naive, masked = lab.norms.naive_bn, lab.norms.masked_bn
    return pd.DataFrame(
        {
            "feature": FEATURES,
            "μ, PAD included": naive.mean,
            "μ, masked": masked.mean,
            "σ², PAD included": naive.var,
            "σ², masked": masked.var,
            "σ_ε, PAD included": naive.std,
            "σ_ε, masked": masked.std,
        }
    )


def check_frame(lab: pad.PaddingLab) -> pd.DataFrame:
    """The closed form against what naive Batch Norm computed, feature by feature."""
    cf = lab.closed_form
    return pd.DataFrame(
        {
            "feature": FEATURES,
            "μ (real)": cf.real_mean,
            "σ² (real)": cf.real_var,
            "(1−p)μ": cf.predicted_mean,
            "mean computed": cf.computed_mean,
            "mean diff": cf.mean_error,
            "(1−p)σ² + p(1−p)μ²": cf.predicted_var,
            "variance computed": cf.computed_var,
            "variance diff": cf.var_error,
        }
    )


def who_frame(who: pad.WhoElse) -> pd.DataFrame:
    """The focus sentence's outputs before and after the other sentence changed."""
    return pd.DataFrame(
        {
            "token": [w for w in who.words for _ in FEATURES],
            "feature": FEATURES * len(who.words),
            "BN masked, before": who.masked_bn[0].ravel(),
            "BN masked, after": who.masked_bn[1].ravel(),
            "BN change": (who.masked_bn[1] - who.masked_bn[0]).ravel(),
            "LN before": who.ln[0].ravel(),
            "LN after": who.ln[1].ravel(),
            "LN change": (who.ln[1] - who.ln[0]).ravel(),
        }
    )


def running_frame(running: pad.Running) -> pd.DataFrame:
    """What each update moves towards, and where the running statistics are after N steps."""
    return pd.DataFrame(
        {
            "feature": FEATURES,
            "batch μ": running.batch_mean,
            "running μ": running.mean[-1],
            "batch σ² (unbiased)": running.batch_var,
            "running σ²": running.var[-1],
        }
    )


def gap_frame(lab: pad.PaddingLab, running: pad.Running, sentence: int) -> pd.DataFrame:
    """One sentence's real tokens through the same layer in training and in eval mode."""
    n = len(lab.sentences[sentence])
    train, evaluate = running.train_y[sentence, :n], running.eval_y[sentence, :n]
    return pd.DataFrame(
        {
            "token": [w for w in lab.sentences[sentence] for _ in FEATURES],
            "feature": FEATURES * n,
            "training": train.ravel(),
            "inference": evaluate.ravel(),
            "difference": (evaluate - train).ravel(),
        }
    )


def _table(frame: pd.DataFrame, caption: str = "") -> Table:
    """A table, kept off the slides when it is long."""
    return Table(frame, caption, on_slide=len(frame) <= SLIDE_ROWS)


# ---------------------------------------------------------------- the batch and its cells


def _batch(lab: pad.PaddingLab) -> Section:
    return Section(
        key="batch",
        title="The batch",
        explanation=(
            "Every token of every sentence, stacked into one (B·S) × D table. The short "
            "sentences are filled up with zero **PAD rows** (greyed) to the longest one."
        ),
        numbers=(Table(rows_frame(lab, lab.x), "The embeddings, one row per token.", False),),
        figure=Figure(
            lambda: plots.batch_figure(lab, np.zeros(lab.tokens.shape, bool), "The padded batch"),
            "pad-batch-plain",
            "Tokens × features; PAD rows greyed.",
            label="The padded batch",
            summary=f"{lab.tokens.shape[0]} rows × {pad.DIM} features, {lab.pad_count} of "
            f"them PAD rows of zeros; the real tokens' values run {spread(lab.tokens[lab.real])}.",
        ),
    )


def statistic_latex(lab: pad.PaddingLab, pick: str, index: int) -> tuple[str, str, str]:
    """The mean of the picked cells written out with their numbers, their variance in short,
    and the variance written out (too long for a slide)."""
    cells, mean, var = pad.picked_moments(lab, pick, index)
    if pick == pad.PICK_TOKEN:
        symbol = rf"\text{{token {index + 1}}}"
    else:
        symbol = rf"\text{{{FEATURES[index]}}}"
    n = cells.size
    m = term(mean)
    return (
        rf"\mu_{{{symbol}}} = \tfrac{{1}}{{{n}}}\big({joined([term(v) for v in cells])}\big)"
        rf" = {num(mean)}",
        rf"\sigma^2_{{{symbol}}} = \tfrac{{1}}{{{n}}}\textstyle\sum (x - {m})^2 = {num(var)}",
        rf"\sigma^2_{{{symbol}}} = \tfrac{{1}}{{{n}}}\big("
        rf"{joined([f'({term(v)} - {m})^2' for v in cells])}\big) = {num(var)}",
    )


# The picked statistic's cells in words ("column f2, PAD rows included"), filled with the
# token's number or the feature's name; the browser's lesson fills the same (live.py).
PICKED = {
    pad.PICK_TOKEN: "the row of token {token}",
    pad.PICK_NAIVE: "column {feature}, PAD rows included",
    pad.PICK_MASKED: "column {feature}, real tokens only",
}
CELLS_LABEL = "The cells that feed the statistic"
CELLS_CAPTION = "The {count} outlined cells feed the picked statistic; PAD rows greyed."
CELLS_SUMMARY = (
    "{count} cells are outlined ({picked}): their mean is {mean} and their variance {var}."
)


def _picked(view: View) -> str:
    """The picked statistic's cells in words."""
    if view.pick == pad.PICK_TOKEN:
        return PICKED[view.pick].format(token=view.index + 1)
    return PICKED[view.pick].format(feature=FEATURES[view.index])


def _output_figure(
    lab: pad.PaddingLab, plot: go.Figure, y: np.ndarray, norm: str, name: str, caption: str
) -> Figure:
    """A norm's output heatmap, summed up in words: its real rows' values and its PAD rows'."""
    rows = y.reshape(-1, pad.DIM)
    real = _values_run(rows[lab.real], norm, "real")
    pads = claim(
        "padding.has_pad_rows",
        lab.pad_count > 0,
        f"; the PAD rows' values {_values_run(rows[~lab.real], norm, 'pad')}"
        if lab.pad_count
        else "",
        "; the batch has no PAD rows",
    )
    summary = f"{norm}: the real tokens' values {real}{pads}."
    return Figure(plot, name, caption, label=f"{norm}'s output", summary=summary)


def _values_run(values: np.ndarray, norm: str, rows: str) -> str:
    """Where `values` (a norm's output on some rows) run, and how many are NaN if any are."""
    verb = "run" if np.isfinite(values).any() else "are"  # "are all NaN"
    return claim(
        "padding.outputs_finite",
        bool(np.isfinite(values).all()),
        f"run {spread(values)}",
        f"{verb} {spread(values)}",
        norm=norm,
        rows=rows,
    )


def _cells(lab: pad.PaddingLab, view: View) -> Section:
    cells = pad.highlight_mask(lab, view.pick, view.index)
    _picked_cells, mean_value, var_value = pad.picked_moments(lab, view.pick, view.index)
    mean, variance, written_out = statistic_latex(lab, view.pick, view.index)
    return Section(
        key=CELLS,
        title="Which cells feed a statistic",
        explanation=(
            "Pick a statistic: the outlined cells are exactly the numbers it averages. A Batch "
            "Norm column runs through every sentence; a Layer Norm row is one token."
        ),
        formulas=(mean, variance),
        definitions=(("Written out:", written_out),),
        figure=Figure(
            lambda: plots.batch_figure(lab, cells, "The stacked batch: tokens x features"),
            "pad-batch",
            CELLS_CAPTION.format(count=int(cells.sum())),
            label=CELLS_LABEL,
            summary=CELLS_SUMMARY.format(
                count=int(cells.sum()),
                picked=_picked(view),
                mean=fmt(mean_value),
                var=fmt(var_value),
            ),
        ),
    )


# ---------------------------------------------------------------- statistics


def _bn_stats(lab: pad.PaddingLab, question: Question) -> Section:
    naive, masked = lab.norms.naive_bn, lab.norms.masked_bn
    return Section(
        key="bn_stats",
        title="Batch Norm's statistics",
        explanation="Each feature's mean, variance and σ_ε under Batch Norm, two ways: naive "
        "and masked.",
        finding=(  # after the question: which rows enter is its answer
            f"Batch Norm averages each feature **down its column**: naively over all "
            f"{naive.count} rows, PAD zeros included; masked, over the {masked.count} real "
            "tokens only. "
            + _pull(lab)
            + " Layer Norm's statistics of a real token come from its own features, so PAD "
            "rows never enter them."
        ),
        worked=(
            r"\mu_j = \tfrac{1}{n}\textstyle\sum_i x_{ij}, \quad "
            r"\sigma^2_j = \tfrac{1}{n}\textstyle\sum_i (x_{ij} - \mu_j)^2",
        ),
        numbers=(Table(bn_stats_frame(lab)),),
        question=question,
    )


def _pull(lab: pad.PaddingLab) -> str:
    """What the PAD zeros did to feature 1's mean, in words its numbers bear out: they pull it
    towards 0 where there are PAD rows and the real tokens' mean is not 0."""
    naive, masked = lab.norms.naive_bn.mean[0], lab.norms.masked_bn.mean[0]
    if not lab.pad_count:
        unmoved = f"With no PAD rows f1's mean is {fmt(masked)} both ways."
    else:
        unmoved = f"f1's real mean is 0, so the PAD zeros leave it at {fmt(naive)}."
    return claim(
        "padding.zeros_pull_f1",
        lab.pad_count > 0 and masked != 0,
        f"The PAD zeros pull f1's mean towards 0: {fmt(naive)} with them, {fmt(masked)} without.",
        unmoved,
    )


def _ln_stats(lab: pad.PaddingLab, question: Question) -> Section:
    return Section(
        key="ln_stats",
        title="Layer Norm's statistics",
        explanation="Each token's mean, variance and σ_ε under Layer Norm.",
        finding=(  # after the question: which numbers enter is its answer
            f"Layer Norm averages each token **across its row**, over its own {pad.DIM} "
            "features. No other row enters: a PAD row is all zeros, so its mean and its "
            "variance are 0, and the real tokens' statistics are the same padded or not."
        ),
        worked=(
            r"\mu_t = \tfrac{1}{D}\textstyle\sum_j x_{tj}, \quad "
            r"\sigma^2_t = \tfrac{1}{D}\textstyle\sum_j (x_{tj} - \mu_t)^2",
        ),
        numbers=(_table(stats_frame(list(lab.labels), "token", lab.norms.ln)),),
        question=question,
    )


# ---------------------------------------------------------------- outputs


def _outputs(
    lab: pad.PaddingLab, question: Question | None, masked_question: Question | None
) -> tuple[Section, ...]:
    """Naive Batch Norm, masked Batch Norm and Layer Norm: one section each."""
    naive, masked, ln = lab.norms.naive_bn, lab.norms.masked_bn, lab.norms.ln
    figures = plots.output_figures(lab)
    pads = np.flatnonzero(~lab.real)
    no_pads = claim(
        "padding.no_pad_rows",
        not pads.size,
        "No PAD rows: every sentence has the same length. Shorten one.",
    )
    rule = r"y = \gamma\,\frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta, \quad \gamma = 1"
    pad_row = (
        (
            r"y_{\text{PAD}} = \frac{0 - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta = "
            + vector(naive.y.reshape(-1, pad.DIM)[pads[0]]),
        )
        if pads.size
        else ()
    )
    moved = pad_rows_move(lab)
    return (
        Section(
            key="naive_out",
            title="Naive Batch Norm's output",
            explanation="Every row, PAD rows too, through naive Batch Norm (γ = 1).",
            finding="Every row is normalized with its column's statistics over all rows: "
            + claim(
                "padding.pad_rows_move",
                moved,
                "PAD rows are no longer zero.",
                "here (0 − μ)/σ_ε + β is 0 in every column, so the PAD rows stay 0."
                if pads.size
                else "this batch has no PAD rows, so masked Batch Norm gives the same.",
            ),
            worked=(rule, *pad_row),
            numbers=(Table(rows_frame(lab, naive.y), on_slide=False),),
            figure=_output_figure(
                lab,
                figures[0],
                naive.y,
                "Naive Batch Norm",
                "pad-naive-bn",
                "Each PAD row becomes (0 − μ)/σ_ε + β"
                + claim(
                    "padding.pad_rows_move",
                    moved,
                    ": not zero.",
                    ", here 0." if pads.size else "; this batch has none.",
                ),
            ),
            question=question,
            callouts=(Callout("info", no_pads),) if no_pads else (),
        ),
        Section(
            key="masked_out",
            title="Masked Batch Norm's output",
            explanation="Every row through masked Batch Norm (γ = 1).",
            finding=(  # after the question: which rows count is its answer
                "Masked, the statistics come from the real tokens only, and the PAD positions "
                "are left at 0: the real tokens come out as if there were no padding."
            ),
            worked=(rule,),
            numbers=(Table(rows_frame(lab, masked.y), on_slide=False),),
            figure=_output_figure(
                lab,
                figures[1],
                masked.y,
                "Masked Batch Norm",
                "pad-masked-bn",
                "PAD positions ignored and left at 0.",
            ),
            question=masked_question,
        ),
        Section(
            key="ln_out",
            title="Layer Norm's output: each row on its own",
            explanation="Each token is normalized with its own mean and σ_ε.",
            formulas=(r"y_t = \gamma\,\frac{x_t - \mu_t}{\sqrt{\sigma_t^2 + \epsilon}} + \beta",),
            numbers=(Table(rows_frame(lab, ln.y), on_slide=False),),
            figure=_output_figure(
                lab,
                figures[2],
                ln.y,
                "Layer Norm",
                "pad-ln",
                "A PAD row comes out as β (NaN with ε = 0).",
            ),
            callouts=(_ln_pad_note(lab),) if pads.size else (),
        ),
    )


def pad_rows_move(lab: pad.PaddingLab) -> bool:
    """Whether naive Batch Norm moves the PAD rows off 0: (0 − μ)/σ_ε + β is not 0 (NaN
    included) in some column. It is 0 in every column where the real means are 0 and β = 0."""
    y = lab.norms.naive_bn.y.reshape(-1, pad.DIM)[~lab.real]
    return bool(y.size) and bool(np.any(y != 0))


def _ln_pad_note(lab: pad.PaddingLab) -> Callout:
    """What Layer Norm makes of a PAD row: β, or NaN (0/0) with ε = 0."""
    nan = bool(np.isnan(lab.norms.ln.y.reshape(-1, pad.DIM)[~lab.real]).any())
    text = claim(
        "padding.ln_pad_rows_nan",
        nan,
        f"With ε = {fmt(lab.eps)} Layer Norm's PAD rows are NaN. A PAD row is constant "
        "(all zeros), so its mean is 0 and its variance is 0, and x̂ = (0 − 0) / √(0 + 0) "
        "= 0/0, which is undefined: NaN. Any ε > 0 gives 0 / √ε = 0, and the row comes "
        "out as β.",
        f"Layer Norm leaves every PAD row at β = {fmt(lab.beta)}: the row is constant, so "
        f"x − μ = 0 and 0 / √(0 + ε) = 0 with ε = {fmt(lab.eps)} > 0. (Set ε to 0 to see "
        "the 0/0.)",
    )
    return Callout("warning" if nan else "success", text)


# ---------------------------------------------------------------- how much padding


def _closed_form(lab: pad.PaddingLab, view: View, question: Question | None) -> Section:
    cf, j = lab.closed_form, view.cf_feature
    p, mu, var = cf.share, cf.real_mean[j], cf.real_var[j]
    name = FEATURES[j]
    return Section(
        key=CLOSED_FORM,
        title="What padding does to the statistics",
        explanation=(
            "A share p of a column's rows are PAD zeros, and the real tokens have mean μ and "
            "variance σ². What does naive Batch Norm compute?"
        ),
        finding="Naive Batch Norm computes:",
        worked=(
            r"\mu_{\text{padded}} = (1 - p)\,\mu, \quad "
            r"\sigma^2_{\text{padded}} = (1 - p)\,\sigma^2 + p\,(1 - p)\,\mu^2",
            rf"p = \tfrac{{{lab.pad_count}}}{{{lab.tokens.shape[0]}}} = {num(p)}",
            rf"\mu_{{\text{{padded}}, {name}}} = (1 - {num(p)}) \times {term(mu)} = "
            rf"{num(cf.predicted_mean[j])}",
            rf"\sigma^2_{{\text{{padded}}, {name}}} = (1 - {num(p)}) \times {num(var)} + "
            rf"{num(p)} \times (1 - {num(p)}) \times {power(mu, 2)} = {num(cf.predicted_var[j])}",
        ),
        numbers=(
            Table(
                check_frame(lab),
                "The closed form against what naive Batch Norm computed"
                + claim(
                    "padding.closed_form_is_rounding",
                    closed_form_agrees(cf),
                    ": the differences are float64 rounding.",
                    ".",
                ),
                on_slide=False,
            ),
        ),
        figure=Figure(
            lambda: plots.closed_form_figure(lab, j, view.count.share),
            "pad-closed-form",
            "Lines: the closed form as p goes from 0 to 1. Dots: what naive Batch Norm "
            "computed on this batch. Diamonds: the calculator's share.",
            label=f"Padded mean and variance of {name} as the PAD share grows",
            summary=f"With no padding they are {fmt(mu)} and {fmt(var)}; at this batch's "
            f"share p = {fmt(p)} the closed form gives {fmt(cf.predicted_mean[j])} and "
            f"{fmt(cf.predicted_var[j])} (the dots: what naive Batch Norm computed); at p = 1 "
            "both are 0.",
            data=lambda: closed_form_frame(lab, j),
        ),
        question=question,
    )


def closed_form_agrees(cf: pad.ClosedForm) -> bool:
    """Whether the closed form and naive Batch Norm's own statistics differ by no more than
    float64 rounding: ROUNDING of the column's scale (its largest |μ| + σ, squared for the
    variance)."""
    size = np.abs(cf.real_mean) + np.sqrt(cf.real_var)
    return bool(
        np.all(np.abs(cf.mean_error) <= ROUNDING * size)
        and np.all(np.abs(cf.var_error) <= ROUNDING * size**2)
    )


def closed_form_frame(lab: pad.PaddingLab, feature: int, steps: int = 10) -> pd.DataFrame:
    """The closed form's curves at p = 0, 0.1, ..., 1 and at this batch's share: the chart's
    numbers without its 101 points per line."""
    cf = lab.closed_form
    p = np.unique(np.append(np.linspace(0.0, 1.0, steps + 1), cf.share))
    mean, var = pad.padded_moments(p, cf.real_mean[feature], cf.real_var[feature])
    return pd.DataFrame({"share of PAD rows p": p, "padded mean": mean, "padded variance": var})


def _calculator(lab: pad.PaddingLab, view: View) -> Section:
    c, cf, j = view.count, lab.closed_form, view.cf_feature
    mean, var = pad.padded_moments(c.share, cf.real_mean[j], cf.real_var[j])
    return Section(
        key=CALCULATOR,
        title="How much padding a real batch has",
        explanation="A batch is padded to its longest sentence: every position a shorter "
        "sentence leaves empty holds a PAD zero. "
        + claim(
            "padding.mostly_zeros",
            c.share > 0.5,
            f"Here that is most of them: p = {fmt(c.share)}.",
            f"Here that is p = {fmt(c.share)} of them, not most.",
        ),
        formulas=(
            r"p = \frac{\text{longest} - \text{average}}{\text{longest}} = "
            rf"\frac{{{c.longest} - {num(c.average)}}}{{{c.longest}}} = {num(c.share)}",
        ),
        worked=(
            rf"\mu_{{\text{{padded}}, {FEATURES[j]}}} = (1 - {num(c.share)}) \times "
            rf"{term(cf.real_mean[j])} = {num(mean)}, \quad \sigma^2_{{\text{{padded}}}} = "
            rf"{num(var)}",
        ),
        numbers=(
            Metric("Positions in the padded tensor", c.slots),
            Metric("Real tokens", c.real),
            Metric("Share of PAD zeros p", c.share),
        ),
        detail=(
            f"The padded mean and variance above use this batch's real tokens "
            f"({FEATURES[j]}: μ = {fmt(cf.real_mean[j])}, σ² = {fmt(cf.real_var[j])})."
        ),
    )


# ---------------------------------------------------------------- who else


WHOLE_BATCH = (
    "Batch Norm's statistics come from the whole batch, masked or not; Layer Norm's from the "
    "token alone."
)


def _who_else(lab: pad.PaddingLab) -> Section:
    who = lab.who_else
    title = "Who else is in the batch?"
    explanation = f"{_edit(lab)} {WHOLE_BATCH}"
    if who is None:
        return Section(
            key=WHO_ELSE,
            title=title,
            explanation=explanation,
            callouts=(Callout("info", "The batch has one sentence. Add a second line above."),),
        )
    return Section(
        key=WHO_ELSE,
        title=title,
        explanation=explanation,
        numbers=(
            Metric("Batch Norm, naive: max |change|", who.max_change(who.naive_bn)),
            Metric("Batch Norm, masked: max |change|", who.max_change(who.masked_bn)),
            Metric("Layer Norm: max |change|", who.max_change(who.ln)),
            Table(who_frame(who), "The same words, before and after.", on_slide=False),
        ),
    )


def _edit(lab: pad.PaddingLab) -> str:
    """The edit of another sentence in words: what changes, or why nothing does."""
    who = lab.who_else
    if who is None:
        return claim(
            "padding.other_sentence_changes",
            False,
            "",
            "The batch has one sentence, so there is no other sentence to change.",
        )
    kept = f"Sentence {who.focus + 1}, **{plain(' '.join(who.words))}**, stays as it is"
    return claim(
        "padding.other_sentence_changes",
        who.before != who.after,
        f"{kept}. Sentence {who.other + 1} changes from **{plain(' '.join(who.before))}** to "
        f"**{plain(' '.join(who.after))}**.",
        f"{kept}, and so does sentence {who.other + 1}: the edit, "
        f"**{plain(' '.join(who.after))}**, is the sentence it replaces.",
    )


# ---------------------------------------------------------------- the 5 x 3 table


def _table_both_ways(lab: pad.PaddingLab) -> tuple[Section, Section]:
    """The pre-activations z1, z2, z3 of five samples: down the columns, across the rows."""
    t = pad.preactivation_norms(lab.eps, lab.beta)
    columns = list(t.columns)
    bn_input = pd.DataFrame(t.x, columns=columns)
    bn_input.insert(0, "sample", list(t.rows))
    stats = pd.DataFrame([t.bn.mean, t.bn.var, t.bn.std], columns=columns)
    stats.insert(0, "sample", ["mean μ", "variance σ²", "σ_ε"])
    ln_input = pd.concat([bn_input, stats_frame(list(t.rows), "sample", t.ln).iloc[:, 1:]], axis=1)
    return (
        Section(
            key="columns",
            title="Down the columns: Batch Norm",
            explanation=(
                "The pre-activations of three nodes for five samples. **Batch Norm** normalizes "
                "each node **down its column**, over the samples: one μ and σ² per node."
            ),
            numbers=(
                Table(pd.concat([bn_input, stats], ignore_index=True)),
                Table(_grid(t, t.bn.y), "Batch Norm's output.", on_slide=False),
            ),
            figure=Figure(
                lambda: plots.table_heatmap(t.bn.y, t.rows, t.columns, "Batch Norm: by column"),
                "pad-table-bn",
                _normalized(t.bn.y, 0, lab.beta),
                label="Batch Norm's output, by column",
                summary=f"{len(t.rows)} samples × {len(t.columns)} nodes, values "
                f"{spread(t.bn.y)}. {_normalized(t.bn.y, 0, lab.beta)}",
            ),
        ),
        Section(
            key="rows",
            title="Across the rows: Layer Norm",
            explanation=(
                "The same table. **Layer Norm** normalizes each sample **across its row**, over "
                "its three nodes: one μ and σ² per sample."
            ),
            numbers=(
                Table(ln_input),
                Table(_grid(t, t.ln.y), "Layer Norm's output.", on_slide=False),
            ),
            figure=Figure(
                lambda: plots.table_heatmap(t.ln.y, t.rows, t.columns, "Layer Norm: by row"),
                "pad-table-ln",
                _normalized(t.ln.y, 1, lab.beta),
                label="Layer Norm's output, by row",
                summary=f"{len(t.rows)} samples × {len(t.columns)} nodes, values "
                f"{spread(t.ln.y)}. {_normalized(t.ln.y, 1, lab.beta)}",
            ),
        ),
    )


def _normalized(y: np.ndarray, axis: int, beta: float) -> str:
    """Each column's (axis 0) or row's (axis 1) mean and variance after the norm, in words its
    numbers bear out: mean β, and variance σ²/(σ² + ε), which prints as 1 unless ε is large
    next to σ²."""
    what = ("column", "row")[axis]
    means, variances = y.mean(axis=axis), y.var(axis=axis)
    listed = ", ".join(fmt(v) for v in variances)
    at_beta = claim(
        "padding.table_means_beta",
        bool(np.all(np.abs(means - beta) <= ROUNDING * (1 + abs(beta)))),
        f"Every {what} now has mean {fmt(beta)}",
        f"The {what}s' means are now {', '.join(fmt(v, 1 + abs(beta)) for v in means)}",
        axis=axis,
    )
    ones = claim(
        "padding.table_variances_1",
        all(fmt(v) == "1" for v in variances),
        " and variance 1 (up to ε).",
        f" and variances {listed}: σ²/(σ² + ε), under 1 by the share ε takes.",
        axis=axis,
    )
    return at_beta + ones


def _grid(t: pad.TableNorms, values: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame(values, columns=list(t.columns))
    frame.insert(0, "sample", list(t.rows))
    return frame


# ---------------------------------------------------------------- not the whole story


def _running(lab: pad.PaddingLab, view: View) -> Section:
    running = pad.running_statistics(lab, view.steps)
    m, k = pad.MOMENTUM, view.steps
    return Section(
        key=RUNNING,
        title="Masking is not the whole story: running statistics",
        explanation=(
            "At inference Batch Norm uses running averages, which PyTorch updates after every "
            "training batch from mean 0 and variance 1. Here one padded batch trains it again "
            "and again."
        ),
        formulas=(
            rf"\text{{running}} \leftarrow (1 - {num(m)})\,\text{{running}} + {num(m)}\,"
            r"\text{batch}",
            rf"\mu_{{\text{{run}}}} = \big(1 - {num(1 - m)}^{{{k}}}\big)\,\mu = "
            rf"{num(1 - (1 - m) ** k)}\,\mu",
        ),
        numbers=(Table(running_frame(running), "The variance updates use n/(n − 1)·σ²."),),
        figure=Figure(
            lambda: plots.running_figure(running),
            "pad-running",
            "Solid: the running statistics step by step. Dashed: the batch's own.",
            label="Running mean and variance, step by step",
            summary=f"After {k} steps the running means are "
            f"{', '.join(fmt(v) for v in running.mean[-1])} against the batch's "
            f"{', '.join(fmt(v) for v in running.batch_mean)}, and the running variances "
            f"{', '.join(fmt(v) for v in running.var[-1])} against its "
            f"{', '.join(fmt(v) for v in running.batch_var)} ({', '.join(FEATURES)}).",
        ),
    )


def _gap(lab: pad.PaddingLab, view: View) -> Section:
    running = pad.running_statistics(lab, view.steps)
    sentence = lab.who_else.focus if lab.who_else else 0
    return Section(
        key="gap",
        title="Training and inference disagree",
        explanation=(
            "The same tokens through the same Batch Norm layer are normalized with the batch's "
            "statistics in training mode and with the running ones in eval mode. As "
            "the steps add up, the running mean tends to the batch's μ and the running "
            "variance to the unbiased n/(n − 1)·σ², not the σ² training divides by"
            + _settles(running, lab.norms.naive_bn.count)
            + " Layer Norm normalizes the same way in training and at inference."
        ),
        finding=_steps_taken(running),
        detail="Real batches also differ from each other, and on text their statistics "
        "fluctuate strongly (Shen et al., 2020, *PowerNorm*).",
        numbers=(
            Metric("max |eval − train| after 1 step", float(running.gaps[0])),
            Metric(f"after {view.steps} steps", running.gap),
            Metric("Layer Norm: max |eval − train|", 0.0),
            _table(gap_frame(lab, running, sentence), f"Sentence {sentence + 1}."),
        ),
    )


def _settles(running: pad.Running, rows: int) -> str:
    """Where the gap goes as the steps add up: a limit above 0 unless every column is
    constant (x − μ = 0 everywhere); NaN with one row (n − 1 = 0) or a NaN output."""
    limit = running.settled_gap
    if rows < 2:
        otherwise = ": with one row n − 1 = 0, so eval mode's outputs are NaN."
    elif np.isnan(limit):
        otherwise = ", but some outputs are NaN here, so the gap is NaN too."
    else:
        otherwise = ", but here every column is constant, so the gap tends to 0."
    return claim(
        "padding.gap_stays_open",
        limit > 0,
        f", so the gap does not close: it tends to {fmt(limit)}, not 0.",
        otherwise,
    )


def _steps_taken(running: pad.Running) -> str:
    """How the gap went over this run's steps: it need not shrink at every one."""
    gaps, k = running.gaps, running.steps
    if np.isnan(gaps).any():
        otherwise = "Some outputs are NaN here, so the gap is NaN."
    elif k == 1:
        otherwise = f"After 1 step the gap is {fmt(gaps[0])}."
    else:
        low = int(np.argmin(gaps))
        otherwise = (
            f"Over these {k} steps the gap does not shrink at every step: it is "
            f"{fmt(gaps[0])} after 1, {fmt(gaps[low])} at its smallest after {low + 1}, and "
            f"{fmt(gaps[-1])} after {k}."
        )
    return claim(
        "padding.gap_shrinks_every_step",
        k > 1 and bool(np.all(np.diff(gaps) < 0)),
        f"Over these {k} steps the gap shrinks at every step, from {fmt(gaps[0])} to "
        f"{fmt(gaps[-1])}.",
        otherwise,
    )
