"""Batch Norm vs Layer Norm on a padded batch of sentences.

Sentences are padded with zero PAD rows into one batch; Batch Norm's column statistics see
the zeros (or, masked, only real tokens), Layer Norm's row statistics never see another row.
All the math is in lnlab.padding.padding_lab; the figures in lnlab.plots.padding.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lnlab import padding as pad
from lnlab import ui
from lnlab.latex import num, vector
from lnlab.markdown import plain
from lnlab.plots import padding as plots
from lnlab.presets import BATCH_PRESETS, PADDING_COUNT, batch_preset

FEATURES = pad.FEATURES
EPS_DEFAULT = 1e-5
EPS_MAX = 1.0
BETA_MAX = 100.0

ss = st.session_state


def _load_preset() -> None:
    """Fill the sentences from the picked preset and drop every edited embedding."""
    ss.pad_sentences = "\n".join(batch_preset(ss.pad_preset).sentences)
    _reset_embeddings()


def _reset_embeddings() -> None:
    """Forget the edits; a new table identity makes the grid drop its own edit state too."""
    ss.pad_overrides = {}
    ss.pad_table_epoch = ss.get("pad_table_epoch", 0) + 1


def _init_state() -> None:
    preset = BATCH_PRESETS[0]
    defaults = {
        "pad_preset": preset.key,
        "pad_sentences": "\n".join(preset.sentences),
        "pad_overrides": {},
        "pad_table_epoch": 0,
        "pad_eps": EPS_DEFAULT,
        "pad_beta": 0.0,
        "pad_pick": pad.PICK_NAIVE,
        "pad_feature": 0,
        "pad_token": 0,
        "pad_focus": 0,
        "pad_other": 1,
        "pad_other_text": pad.DEFAULT_REPLACEMENT,
        "pad_cf_feature": 0,
        "pad_batch": PADDING_COUNT.batch,
        "pad_longest": PADDING_COUNT.longest,
        "pad_average": float(PADDING_COUNT.average),
    }
    for key, value in defaults.items():
        ss.setdefault(key, value)


def _clamp(key: str, options: list[int]) -> None:
    """Keep a selectbox's stored choice among its options (the batch may have shrunk)."""
    if ss.get(key) not in options:
        ss[key] = options[0]


@st.cache_data(max_entries=64, show_spinner=False)
def _lab(inputs: tuple) -> pad.PaddingLab:
    """pad.padding_lab(*inputs), cached: inputs are its plain, hashable arguments."""
    return pad.padding_lab(*inputs)


@st.cache_data(max_entries=64, show_spinner=False)
def _batch_figure(inputs: tuple, pick: str, index: int) -> go.Figure:
    lab = _lab(inputs)
    cells = pad.highlight_mask(lab, pick, index)
    return plots.batch_figure(lab, cells, "The stacked batch: tokens x features")


@st.cache_data(max_entries=64, show_spinner=False)
def _output_figures(inputs: tuple) -> tuple[go.Figure, ...]:
    return plots.output_figures(_lab(inputs))


@st.cache_data(max_entries=64, show_spinner=False)
def _table_norms(eps: float, beta: float) -> pad.TableNorms:
    return pad.preactivation_norms(eps, beta)


def _table(frame: pd.DataFrame, digits: int = 4, scientific: tuple[str, ...] = ()) -> None:
    """A table with `digits` decimals (`scientific` columns as 1.23e-16); NaN shows as NaN,
    where a plain table would show None."""
    style = frame.style.format(precision=digits, na_rep="NaN")
    if scientific:
        style = style.format("{:.2e}", subset=list(scientific))
    st.dataframe(style, hide_index=True)


def _rows_frame(lab: pad.PaddingLab, values: np.ndarray) -> pd.DataFrame:
    """A (B*S, D) array as a table: one row per token, PAD rows flagged."""
    frame = pd.DataFrame(values.reshape(-1, len(FEATURES)), columns=list(FEATURES))
    frame.insert(0, "token", lab.labels)
    frame.insert(1, "PAD", ~lab.real)
    return frame


def _stats_frame(
    index: list[str], name: str, mean: np.ndarray, var: np.ndarray, std: np.ndarray
) -> pd.DataFrame:
    """Mean, variance and sigma_eps per group (a feature or a token), one row each."""
    frame = pd.DataFrame(
        {"mean μ": np.ravel(mean), "variance σ²": np.ravel(var), "σ_ε": np.ravel(std)}
    )
    frame.insert(0, name, index)
    return frame


def _grid(table: pad.TableNorms, values: np.ndarray) -> pd.DataFrame:
    """A samples x nodes array as a table with the sample names."""
    frame = pd.DataFrame(values, columns=list(table.columns))
    frame.insert(0, "sample", list(table.rows))
    return frame


def _percent(share: float) -> str:
    return f"{100 * share:.4g} %"


# ---------------------------------------------------------------- 1. the batch

ui.page_setup("Batch Norm vs Layer Norm")
_init_state()
st.title("Batch Norm vs Layer Norm on a padded batch")
st.markdown(
    "Sentences in a batch have different lengths, so the short ones are **padded with zero "
    "PAD rows** up to the longest. Batch Norm computes each feature's statistics **down a "
    "column, over every token in the batch**, PAD zeros included unless they are masked. "
    "Layer Norm computes them **across a row, over one token's own features**, so padding "
    "and the other sentences cannot touch it."
)

st.header("1. The batch")
text_col, table_col = st.columns(2)
with text_col:
    st.selectbox(
        "Example",
        [p.key for p in BATCH_PRESETS],
        format_func=lambda k: batch_preset(k).title,
        key="pad_preset",
        on_change=_load_preset,
    )
    preset = batch_preset(ss.pad_preset)
    st.caption(plain(preset.source))
    st.text_area(
        "Sentences, one per line (words are split on spaces)",
        key="pad_sentences",
        height=150,
        max_chars=pad.MAX_TEXT_CHARS,
        help=f"At most {pad.MAX_SENTENCES} sentences of {pad.MAX_WORDS} words, "
        f"{pad.MAX_WORD_CHARS} characters a word.",
    )
    sentences = ui.last_good(
        "pad_good_sentences",
        lambda: pad.parse_sentences(ss.pad_sentences),
        tuple(tuple(s.split()) for s in preset.sentences),
    )
    eps_col, beta_col = st.columns(2)
    eps = eps_col.number_input(
        "epsilon ε", min_value=0.0, max_value=EPS_MAX, step=1e-5, format="%g", key="pad_eps"
    )
    beta = beta_col.number_input(
        "β (the same for every feature; γ = 1)",
        min_value=-BETA_MAX,
        max_value=BETA_MAX,
        step=0.5,
        key="pad_beta",
    )

with table_col:
    words = pad.vocabulary(sentences)
    rows = pad.embedding_table(words, ss.pad_preset, ss.pad_overrides)
    grid = pd.DataFrame(
        {
            "word": [r.word for r in rows],
            **{f: [r.vector[j] for r in rows] for j, f in enumerate(FEATURES)},
            "from": [r.source for r in rows],
        },
        # The hidden index ties the grid's edits to these words (and this reset): new words
        # or a reset give the grid a new identity, so an edit never lands on another word.
        index=pd.Index(words, name=f"table {ss.pad_table_epoch}"),
    )
    edited = st.data_editor(
        grid,
        key="pad_words",
        hide_index=True,
        disabled=["word", "from"],
        column_config={
            f: st.column_config.NumberColumn(
                f, min_value=-pad.MAX_ABS_VALUE, max_value=pad.MAX_ABS_VALUE, step=0.1
            )
            for f in FEATURES
        },
    )
    st.caption(
        "Each word's embedding: the example's numbers, or a fixed vector hashed from the "
        "word, or your edit. Edit a number to change every occurrence of that word. PAD rows "
        "are always zeros."
    )
    st.button("Reset the embeddings", key="pad_reset_words", on_click=_reset_embeddings)
    overrides = ui.last_good(
        "pad_good_overrides",
        lambda: pad.read_overrides(
            words, edited[list(FEATURES)].to_numpy().tolist(), ss.pad_preset, ss.pad_overrides
        ),
        ss.pad_overrides,
    )
    if overrides != ss.pad_overrides:
        ss.pad_overrides = overrides
        st.rerun()  # so the "from" column shows the edit at once

n_sentences = len(sentences)
_clamp("pad_focus", list(range(n_sentences)))
_clamp("pad_other", [b for b in range(n_sentences) if b != ss.pad_focus] or [0])
replacement = ui.last_good(
    "pad_good_other_text",
    lambda: pad.parse_sentence(ss.pad_other_text),
    tuple(pad.DEFAULT_REPLACEMENT.split()),
)
inputs = (
    sentences,
    ss.pad_preset,
    tuple(overrides.items()),
    float(eps),
    float(beta),
    ss.pad_focus,
    ss.pad_other,
    replacement,
)
lab = _lab(inputs)
longest = lab.x.shape[1]
st.markdown(
    f"**{n_sentences}** sentences, the longest **{longest}** words: the batch has shape "
    f"(B, S, D) = ({n_sentences}, {longest}, {len(FEATURES)}), **{lab.tokens.shape[0]}** "
    f"token rows, of which **{lab.pad_count}** are PAD rows "
    f"(p = {_percent(lab.closed_form.share)})."
)

# ---------------------------------------------------------------- 2. which cells feed what

st.header("2. Which cells feed a statistic")
pick = st.radio(
    "Statistic", list(pad.PICKS), format_func=pad.PICKS.get, key="pad_pick", horizontal=True
)
if pick == pad.PICK_TOKEN:
    _clamp("pad_token", list(range(len(lab.labels))))
    index = st.selectbox(
        "Token row",
        list(range(len(lab.labels))),
        format_func=lambda i: lab.labels[i],
        key="pad_token",
    )
else:
    index = st.selectbox(
        "Feature column",
        list(range(len(FEATURES))),
        format_func=FEATURES.__getitem__,
        key="pad_feature",
    )
cells = pad.highlight_mask(lab, pick, index)
fig_col, numbers_col = st.columns([3, 2])
with fig_col:
    ui.chart(
        _batch_figure(inputs, pick, index),
        "pad-batch",
        "Every token of every sentence, stacked into one (B·S) x D table; PAD rows are greyed. "
        f"The outlined cells ({int(cells.sum())}) are exactly the ones that feed the picked "
        "statistic.",
    )
with numbers_col:
    _table(_rows_frame(lab, lab.tokens), digits=1)
for line in pad.statistic_latex(lab, pick, index):
    st.latex(line)

# ---------------------------------------------------------------- 3. statistics

st.header("3. The statistics, side by side")
naive, masked, ln = lab.norms.naive_bn, lab.norms.masked_bn, lab.norms.ln
naive_col, masked_col, ln_col = st.columns([1, 1, 1.3])
with naive_col:
    st.subheader("Batch Norm, PAD included")
    _table(_stats_frame(list(FEATURES), "feature", naive.mean, naive.var, naive.std))
    st.caption(f"Each feature over all {naive.count} rows, PAD zeros included.")
with masked_col:
    st.subheader("Batch Norm, masked")
    _table(_stats_frame(list(FEATURES), "feature", masked.mean, masked.var, masked.std))
    st.caption(f"Each feature over the {masked.count} real tokens only.")
with ln_col:
    st.subheader("Layer Norm")
    _table(_stats_frame(list(lab.labels), "token", ln.mean, ln.var, ln.std))
    st.caption(f"Each token over its own {len(FEATURES)} features.")

# ---------------------------------------------------------------- 4. outputs

st.header("4. The outputs")
st.latex(r"y = \gamma \, \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta, \quad \gamma = 1")
outputs = zip(
    st.columns(3),
    _output_figures(inputs),
    (naive.y, masked.y, ln.y),
    ("pad-naive-bn", "pad-masked-bn", "pad-ln"),
    (
        "Naive Batch Norm turns every PAD row into (0 − μ)/σ_ε + β: not zero.",
        "Masked Batch Norm ignores the PAD positions and leaves them at 0.",
        "Layer Norm normalizes each row on its own: a PAD row comes out as β.",
    ),
    strict=True,
)
for column, figure, y, name, caption in outputs:
    with column:
        ui.chart(figure, name, caption)
        _table(_rows_frame(lab, y))
pad_rows = np.flatnonzero(~lab.real)
if pad_rows.size:
    st.latex(
        r"y_{\text{PAD}} = \frac{0 - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta = "
        + vector(naive.y.reshape(-1, len(FEATURES))[pad_rows[0]])
        + r"\quad \text{(naive Batch Norm)}"
    )
else:
    st.info("No PAD rows: every sentence has the same length. Shorten one to see padding.")
if np.isnan(ln.y).any():
    st.warning(
        f"With ε = {eps:g} Layer Norm's PAD rows are NaN. A PAD row is constant (all zeros), "
        "so its mean is 0 and its variance is 0, and x̂ = (0 − 0) / √(0 + 0) = 0/0, which is "
        "undefined: NaN. Any ε > 0 gives 0 / √ε = 0, and the row comes out as β.",
        icon=":material/warning:",
    )
elif pad_rows.size:
    st.success(
        f"Layer Norm leaves every PAD row at β = {beta:g}: the row is constant, so x − μ = 0 "
        f"and 0 / √(0 + ε) = 0 with ε = {eps:g} > 0. (Set ε to 0 to see the 0/0.)",
        icon=":material/check:",
    )

# ---------------------------------------------------------------- 5. closed form + calculator

st.header("5. How much padding, and what it does to the statistics")
st.markdown(
    "If a share p of a feature's rows are PAD zeros, and the real tokens have mean μ and "
    "(biased) variance σ², then the statistics naive Batch Norm computes are:"
)
st.latex(
    r"\mu_{\text{padded}} = (1 - p)\,\mu, \qquad "
    r"\sigma^2_{\text{padded}} = (1 - p)\,\sigma^2 + p\,(1 - p)\,\mu^2"
)
cf = lab.closed_form
check = pd.DataFrame(
    {
        "feature": list(FEATURES),
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
st.markdown(
    f"Checked on this batch, p = {lab.pad_count}/{lab.tokens.shape[0]} = "
    f"{cf.share:.4g}: the closed form against what naive Batch Norm computed "
    "(the differences are float64 rounding):"
)
_table(check, scientific=("mean diff", "variance diff"))

st.subheader("Padding calculator")
batch_in, longest_in, average_in = st.columns(3)
batch_in.number_input(
    "Sentences in the batch",
    min_value=1,
    max_value=pad.MAX_CALC_BATCH,
    step=1,
    key="pad_batch",
)
longest_in.number_input(
    "Longest sentence (words)",
    min_value=1,
    max_value=pad.MAX_CALC_LONGEST,
    step=1,
    key="pad_longest",
)
average_in.number_input(
    "Average length (words)",
    min_value=1.0,
    max_value=float(pad.MAX_CALC_LONGEST),
    step=1.0,
    key="pad_average",
)
count = ui.last_good(
    "pad_good_count",
    lambda: pad.padding_share(ss.pad_batch, ss.pad_longest, ss.pad_average),
    pad.padding_share(PADDING_COUNT.batch, PADDING_COUNT.longest, PADDING_COUNT.average),
)
st.caption(plain(PADDING_COUNT.source))
m1, m2, m3 = st.columns(3)
m1.metric("Positions in the padded tensor", f"{count.slots:,}")
m2.metric("Real tokens", f"{count.real:,.6g}")
m3.metric("Share of PAD zeros", _percent(count.share))
st.latex(
    rf"p = \frac{{\text{{longest}} - \text{{average}}}}{{\text{{longest}}}} = "
    rf"\frac{{{count.longest} - {num(count.average)}}}{{{count.longest}}} = {num(count.share)}"
)
feature = st.selectbox(
    "Feature for the closed form",
    list(range(len(FEATURES))),
    format_func=FEATURES.__getitem__,
    key="pad_cf_feature",
)
padded_mean, padded_var = pad.padded_moments(
    count.share, cf.real_mean[feature], cf.real_var[feature]
)
st.markdown(
    f"With this batch's real tokens (μ = {cf.real_mean[feature]:.4g}, "
    f"σ² = {cf.real_var[feature]:.4g} for {FEATURES[feature]}), a batch padded to "
    f"{_percent(count.share)} zeros would give Batch Norm a mean of "
    f"**{float(padded_mean):.4g}** and a variance of **{float(padded_var):.4g}**."
)
ui.chart(
    plots.closed_form_figure(lab, feature, count.share),
    "pad-closed-form",
    "Lines: the closed form as the PAD share p goes from 0 to 1. Dots: the mean and variance "
    "naive Batch Norm computed on the batch above; they sit on the lines. Diamonds: the "
    "calculator's share.",
)

# ---------------------------------------------------------------- 6. who else is in the batch

st.header("6. Who else is in the batch?")
who = lab.who_else
if who is None:
    st.info("The batch has one sentence. Add a second line above to see this.")
else:
    focus_in, other_in, text_in = st.columns([1, 1, 2])
    focus_in.selectbox(
        "This sentence",
        list(range(n_sentences)),
        format_func=lambda b: f"{b + 1}: {' '.join(sentences[b])}",
        key="pad_focus",
    )
    other_in.selectbox(
        "Edit this other sentence",
        [b for b in range(n_sentences) if b != ss.pad_focus],
        format_func=lambda b: f"{b + 1}: {' '.join(sentences[b])}",
        key="pad_other",
    )
    text_in.text_input(
        "...into", key="pad_other_text", max_chars=pad.MAX_WORDS * (pad.MAX_WORD_CHARS + 1)
    )
    c1, c2, c3 = st.columns(3)
    c1.metric("Batch Norm, naive: max |change|", f"{who.max_change(who.naive_bn):.4g}")
    c2.metric("Batch Norm, masked: max |change|", f"{who.max_change(who.masked_bn):.4g}")
    c3.metric("Layer Norm: max |change|", f"{who.max_change(who.ln):.4g}")
    long = pd.DataFrame(
        {
            "token": [w for w in who.words for _ in FEATURES],
            "feature": list(FEATURES) * len(who.words),
            "BN masked, before": who.masked_bn[0].ravel(),
            "BN masked, after": who.masked_bn[1].ravel(),
            "BN change": (who.masked_bn[1] - who.masked_bn[0]).ravel(),
            "LN before": who.ln[0].ravel(),
            "LN after": who.ln[1].ravel(),
            "LN change": (who.ln[1] - who.ln[0]).ravel(),
        }
    )
    _table(long)
    st.caption(
        "The outputs of the same words of this sentence, before and after the other sentence "
        "changed. Batch Norm's statistics come from the whole batch, so this sentence's output "
        "depends on its neighbours, masked or not; Layer Norm's depend on the token alone."
    )

# ---------------------------------------------------------------- 7. the 5 x 3 table

st.header("7. Down the columns or across the rows")
table = _table_norms(float(eps), float(beta))
st.markdown(
    "The pre-activations z1, z2, z3 of three nodes for five samples. **Batch Norm** "
    "normalizes each node **down its column** (over the samples); **Layer Norm** normalizes "
    "each sample **across its row** (over the nodes)."
)


in_col, bn_col, ln_col = st.columns(3)
with in_col:
    st.subheader("Input")
    _table(_grid(table, table.x), digits=1)
with bn_col:
    st.subheader("Batch Norm (columns)")
    st.caption("One mean and variance per node, over the five samples:")
    _table(_stats_frame(list(table.columns), "node", table.bn.mean, table.bn.var, table.bn.std))
    st.caption("Output:")
    _table(_grid(table, table.bn.y))
with ln_col:
    st.subheader("Layer Norm (rows)")
    st.caption("One mean and variance per sample, over its three nodes:")
    _table(_stats_frame(list(table.rows), "sample", table.ln.mean, table.ln.var, table.ln.std))
    st.caption("Output:")
    _table(_grid(table, table.ln.y))
st.caption(
    "After Batch Norm every column has mean 0 and variance 1 (up to ε); after Layer Norm "
    "every row does."
)

# ---------------------------------------------------------------- 8. not the whole story

st.header("8. Masking is not the whole story")
st.markdown(
    "Masking the PAD rows fixes Batch Norm's statistics on one batch, not Batch Norm in "
    "Transformers. Shen et al. (2020, *PowerNorm: Rethinking Batch Normalization in "
    "Transformers*) found that on text the batch statistics **fluctuate strongly from batch "
    "to batch** during training, which makes training unstable. And Batch Norm normalizes "
    "**differently in training and at inference**: training uses the batch's own statistics, "
    "inference uses running averages that PyTorch updates after every training batch. Layer "
    "Norm has neither problem: each token uses its own statistics, the same way in training "
    "and at inference."
)
running = pd.DataFrame(
    {
        "feature": list(FEATURES),
        "batch mean": naive.mean,
        "batch var (biased)": naive.var,
        "running mean": naive.running_mean,
        "running var": naive.running_var,
    }
)
run_col, gap_col = st.columns(2)
with run_col:
    _table(running)
    st.caption(
        f"What nn.BatchNorm1d (momentum {pad.MOMENTUM}) stores after training on this "
        "padded batch once, from running mean 0 and variance 1: running = (1 − momentum) · "
        "old + momentum · batch, with the unbiased batch variance."
    )
with gap_col:
    focus_rows = lab.x.shape[1] * ss.pad_focus + np.arange(len(sentences[ss.pad_focus]))
    gap = pd.DataFrame(
        {
            "token": [lab.labels[i] for i in focus_rows for _ in FEATURES],
            "feature": list(FEATURES) * len(focus_rows),
            "training (batch stats)": naive.y.reshape(-1, len(FEATURES))[focus_rows].ravel(),
            "inference (running stats)": lab.inference_y.reshape(-1, len(FEATURES))[
                focus_rows
            ].ravel(),
        }
    )
    _table(gap)
    st.caption(
        "The same tokens through the same Batch Norm layer in training mode and in eval mode: "
        "different outputs. Layer Norm would give identical ones."
    )
