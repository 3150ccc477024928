"""Batch Norm vs Layer Norm on a padded batch of sentences.

Sentences are padded with zero PAD rows into one batch; Batch Norm's column statistics see
the zeros (or, masked, only real tokens), Layer Norm's row statistics never see another row.
All the math is in lnlab.padding.padding_lab; the figures in lnlab.plots.padding.

The page's state lives in the URL (FIELDS below); in presenter mode each numbered section is
one slide; with "Predict before you see" on, sections 3 to 5 ask a question first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from lnlab import export, ui
from lnlab import padding as pad
from lnlab.latex import num, vector
from lnlab.links import Field, Param
from lnlab.markdown import plain
from lnlab.plots import padding as plots
from lnlab.presets import BATCH_PRESETS, PADDING_COUNT, batch_preset
from lnlab.quiz import Question

PAGE = "padding"
FEATURES = pad.FEATURES
EPS_DEFAULT = 1e-5
MAX_SENTENCE_CHARS = pad.MAX_WORDS * (pad.MAX_WORD_CHARS + 1)
KEEP = "session"  # widgets keep their value while presenter mode hides them, and across pages

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
    """Defaults for whatever the link did not set (the sentences follow the link's preset)."""
    ss.setdefault("pad_preset", BATCH_PRESETS[0].key)
    defaults = {
        "pad_sentences": "\n".join(batch_preset(ss.pad_preset).sentences),
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
        "pad_quiz": False,
        "pad_slide": 0,
    }
    for key, value in defaults.items():
        ss.setdefault(key, value)


def _clamp(key: str, options: list[int]) -> None:
    """Keep a selectbox's stored choice among its options (the batch may have shrunk)."""
    if ss.get(key) not in options:
        ss[key] = options[0]


# Cached results are shared by every session and never mutated: cache_resource hands back the
# same objects, where cache_data would unpickle the figures on every rerun.


@st.cache_resource(max_entries=64, show_spinner=False)
def _lab(inputs: tuple) -> pad.PaddingLab:
    """pad.padding_lab(*inputs), cached: inputs are its plain, hashable arguments."""
    return pad.padding_lab(*inputs)


@st.cache_resource(max_entries=64, show_spinner=False)
def _batch_figure(inputs: tuple, pick: str | None, index: int) -> go.Figure:
    """The stacked batch, the cells of the picked statistic outlined (none for None)."""
    lab = _lab(inputs)
    if pick is None:
        return plots.batch_figure(lab, np.zeros(lab.tokens.shape, bool), "The padded batch")
    cells = pad.highlight_mask(lab, pick, index)
    return plots.batch_figure(lab, cells, "The stacked batch: tokens x features")


@st.cache_resource(max_entries=64, show_spinner=False)
def _output_figures(inputs: tuple) -> tuple[go.Figure, ...]:
    return plots.output_figures(_lab(inputs))


@st.cache_resource(max_entries=64, show_spinner=False)
def _closed_form_figure(inputs: tuple, feature: int, share: float) -> go.Figure:
    return plots.closed_form_figure(_lab(inputs), feature, share)


@st.cache_data(max_entries=64, show_spinner=False)
def _questions(inputs: tuple) -> pad.PaddingQuestions:
    return pad.page_questions(_lab(inputs))


@st.cache_data(max_entries=64, show_spinner=False)
def _script(inputs: tuple) -> str:
    lab = _lab(inputs)
    return export.batch_norm_script(lab.x, lab.mask, lab.eps, lab.beta)


Table = pa.Table | pd.DataFrame  # Arrow, or pandas for a table with NaN in it


def _prepared(frame: pd.DataFrame) -> Table:
    """The frame as Arrow, which st.dataframe sends without converting on every rerun.

    NaN must show as NaN, where Streamlit shows None (Arrow turns NaN into null): a frame
    with NaN stays pandas and goes through pandas' slower Styler (see _table).
    """
    numbers = [c for c in frame.columns if frame[c].dtype.kind in "fiu"]
    if any(np.isnan(frame[c].to_numpy(np.float64)).any() for c in numbers):
        return frame
    return pa.Table.from_pandas(frame, preserve_index=False)


def _table(data: Table, digits: int = 4, scientific: tuple[str, ...] = ()) -> None:
    """A table with `digits` decimals (`scientific` columns as 1.23e-16)."""
    if isinstance(data, pd.DataFrame):
        style = data.style.format(precision=digits, na_rep="NaN")
        if scientific:
            style = style.format("{:.2e}", subset=list(scientific))
        st.dataframe(style, hide_index=True)
        return
    numbers = [
        f.name for f in data.schema if pa.types.is_floating(f.type) or pa.types.is_integer(f.type)
    ]
    config = {
        c: st.column_config.NumberColumn(format="%.2e" if c in scientific else f"%.{digits}f")
        for c in numbers
    }
    st.dataframe(data, hide_index=True, column_config=config)


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


def _lab_frames(lab: pad.PaddingLab) -> dict[str, pd.DataFrame]:
    """Every table of the batch's numbers, by name."""
    naive, masked, ln = lab.norms.naive_bn, lab.norms.masked_bn, lab.norms.ln
    cf = lab.closed_form
    features = list(FEATURES)
    focus = lab.who_else.focus if lab.who_else else 0
    focus_rows = lab.x.shape[1] * focus + np.arange(len(lab.sentences[focus]))
    frames = {
        "tokens": _rows_frame(lab, lab.tokens),
        "naive_stats": _stats_frame(features, "feature", naive.mean, naive.var, naive.std),
        "masked_stats": _stats_frame(features, "feature", masked.mean, masked.var, masked.std),
        "ln_stats": _stats_frame(list(lab.labels), "token", ln.mean, ln.var, ln.std),
        "naive_y": _rows_frame(lab, naive.y),
        "masked_y": _rows_frame(lab, masked.y),
        "ln_y": _rows_frame(lab, ln.y),
        "check": pd.DataFrame(
            {
                "feature": features,
                "μ (real)": cf.real_mean,
                "σ² (real)": cf.real_var,
                "(1−p)μ": cf.predicted_mean,
                "mean computed": cf.computed_mean,
                "mean diff": cf.mean_error,
                "(1−p)σ² + p(1−p)μ²": cf.predicted_var,
                "variance computed": cf.computed_var,
                "variance diff": cf.var_error,
            }
        ),
        "running": pd.DataFrame(
            {
                "feature": features,
                "batch mean": naive.mean,
                "batch var (biased)": naive.var,
                "running mean": naive.running_mean,
                "running var": naive.running_var,
            }
        ),
        "gap": pd.DataFrame(
            {
                "token": [lab.labels[i] for i in focus_rows for _ in FEATURES],
                "feature": features * len(focus_rows),
                "training (batch stats)": naive.y.reshape(-1, len(FEATURES))[focus_rows].ravel(),
                "inference (running stats)": lab.inference_y.reshape(-1, len(FEATURES))[
                    focus_rows
                ].ravel(),
            }
        ),
    }
    who = lab.who_else
    if who is not None:
        frames["who"] = pd.DataFrame(
            {
                "token": [w for w in who.words for _ in FEATURES],
                "feature": features * len(who.words),
                "BN masked, before": who.masked_bn[0].ravel(),
                "BN masked, after": who.masked_bn[1].ravel(),
                "BN change": (who.masked_bn[1] - who.masked_bn[0]).ravel(),
                "LN before": who.ln[0].ravel(),
                "LN after": who.ln[1].ravel(),
                "LN change": (who.ln[1] - who.ln[0]).ravel(),
            }
        )
    return frames


@st.cache_resource(max_entries=64, show_spinner=False)
def _tables(inputs: tuple) -> dict[str, Table]:
    return {name: _prepared(frame) for name, frame in _lab_frames(_lab(inputs)).items()}


@st.cache_resource(max_entries=64, show_spinner=False)
def _preactivation_tables(eps: float, beta: float) -> dict[str, Table]:
    """The 5 x 3 pre-activations, normalized down the columns and across the rows."""
    t = pad.preactivation_norms(eps, beta)
    frames = {
        "x": _grid(t, t.x),
        "bn_stats": _stats_frame(list(t.columns), "node", t.bn.mean, t.bn.var, t.bn.std),
        "bn_y": _grid(t, t.bn.y),
        "ln_stats": _stats_frame(list(t.rows), "sample", t.ln.mean, t.ln.var, t.ln.std),
        "ln_y": _grid(t, t.ln.y),
    }
    return {name: _prepared(frame) for name, frame in frames.items()}


def _percent(share: float) -> str:
    return f"{100 * share:.4g} %"


def _sentence_label(sentences: pad.Sentences, b: int) -> str:
    return f"{b + 1}: {' '.join(sentences[b])}"


def _revealed(question: Question | None) -> bool:
    """With predictions on, ask `question` first; True once it is checked (or when off)."""
    if question is None or not ss.pad_quiz:
        return True
    if ui.ask(question):
        return True
    st.info("Check your prediction to see this section's numbers.", icon=":material/lock:")
    return False


# ---------------------------------------------------------------- 1. the batch


def _batch_inputs() -> tuple[pad.Sentences, dict[str, pad.Vector]]:
    """The preset, sentences, ε, β and the embedding grid; returns the sentences and edits."""
    text_col, table_col = st.columns(2)
    with text_col:
        ui.preset_choice(
            "Example", BATCH_PRESETS, "pad_preset", on_change=_load_preset, persist_state=KEEP
        )
        st.text_area(
            "Sentences, one per line (words are split on spaces)",
            key="pad_sentences",
            height=150,
            max_chars=pad.MAX_TEXT_CHARS,
            help=f"At most {pad.MAX_SENTENCES} sentences of {pad.MAX_WORDS} words, "
            f"{pad.MAX_WORD_CHARS} characters a word.",
            persist_state=KEEP,
        )
        sentences = _sentences()
        eps_col, beta_col = st.columns(2)
        eps_col.number_input(
            "epsilon ε",
            min_value=0.0,
            max_value=pad.MAX_EPS,
            step=1e-5,
            format="%g",
            key="pad_eps",
            persist_state=KEEP,
        )
        beta_col.number_input(
            "β (the same for every feature; γ = 1)",
            min_value=-pad.MAX_BETA,
            max_value=pad.MAX_BETA,
            step=0.5,
            key="pad_beta",
            persist_state=KEEP,
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
            # The hidden index ties the grid's edits to these words (and this reset): new
            # words or a reset give the grid a new identity, so an edit never lands on another
            # word.
            index=pd.Index(words, name=f"table {ss.pad_table_epoch}"),
        )
        edited = ui.data_editor(
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
            "word, or your edit. Edit a number to change every occurrence of that word. PAD "
            "rows are always zeros."
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
    return sentences, overrides


def _sentences() -> pad.Sentences:
    return ui.last_good(
        "pad_good_sentences",
        lambda: pad.parse_sentences(ss.pad_sentences),
        tuple(tuple(s.split()) for s in batch_preset(ss.pad_preset).sentences),
    )


def _summary(lab: pad.PaddingLab) -> None:
    b, s, d = lab.x.shape
    st.markdown(
        f"**{b}** sentences, the longest **{s}** words: the batch has shape "
        f"(B, S, D) = ({b}, {s}, {d}), **{lab.tokens.shape[0]}** token rows, of which "
        f"**{lab.pad_count}** are PAD rows (p = {_percent(lab.closed_form.share)})."
    )


def _slide_batch(lab: pad.PaddingLab, inputs: tuple) -> None:
    """Presenter mode's first slide: the batch itself, nothing outlined yet."""
    _summary(lab)
    ui.chart(
        _batch_figure(inputs, None, 0),
        "pad-batch-plain",
        "Every token of every sentence, stacked into one (B·S) x D table: the rows of the "
        "short sentences are filled up with zero PAD rows (greyed) to the longest one.",
    )


# ---------------------------------------------------------------- 2. which cells feed what


def _cells_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    pick = st.radio(
        "Statistic",
        list(pad.PICKS),
        format_func=pad.PICKS.get,
        key="pad_pick",
        horizontal=True,
        persist_state=KEEP,
    )
    if pick == pad.PICK_TOKEN:
        _clamp("pad_token", list(range(len(lab.labels))))
        index = st.selectbox(
            "Token row",
            list(range(len(lab.labels))),
            format_func=lambda i: lab.labels[i],
            key="pad_token",
            persist_state=KEEP,
        )
    else:
        index = st.selectbox(
            "Feature column",
            list(range(len(FEATURES))),
            format_func=FEATURES.__getitem__,
            key="pad_feature",
            persist_state=KEEP,
        )
    cells = pad.highlight_mask(lab, pick, index)
    caption = (
        "Every token of every sentence, stacked into one (B·S) x D table; PAD rows are "
        f"greyed. The outlined cells ({int(cells.sum())}) are exactly the ones that feed the "
        "picked statistic."
    )
    figure = _batch_figure(inputs, pick, index)
    if ui.presenting():
        ui.chart(figure, "pad-batch", caption)
    else:
        fig_col, numbers_col = st.columns([3, 2])
        with fig_col:
            ui.chart(figure, "pad-batch", caption)
        with numbers_col:
            _table(_tables(inputs)["tokens"], digits=1)
    for line in pad.statistic_latex(lab, pick, index):
        st.latex(line)


# ---------------------------------------------------------------- 3. statistics


def _statistics_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    if not _revealed(_questions(inputs).statistics):
        return
    tables = _tables(inputs)
    naive_col, masked_col, ln_col = st.columns([1, 1, 1.3])
    with naive_col:
        st.subheader("Batch Norm, PAD included")
        _table(tables["naive_stats"])
        st.caption(f"Each feature over all {lab.norms.naive_bn.count} rows, PAD zeros included.")
    with masked_col:
        st.subheader("Batch Norm, masked")
        _table(tables["masked_stats"])
        st.caption(f"Each feature over the {lab.norms.masked_bn.count} real tokens only.")
    with ln_col:
        st.subheader("Layer Norm")
        _table(tables["ln_stats"])
        st.caption(f"Each token over its own {len(FEATURES)} features.")


# ---------------------------------------------------------------- 4. outputs


def _outputs_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    if not _revealed(_questions(inputs).outputs):
        return
    naive, ln = lab.norms.naive_bn, lab.norms.ln
    tables = _tables(inputs)
    st.latex(r"y = \gamma \, \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta, \quad \gamma = 1")
    outputs = zip(
        st.columns(3),
        _output_figures(inputs),
        ("naive_y", "masked_y", "ln_y"),
        ("pad-naive-bn", "pad-masked-bn", "pad-ln"),
        (
            "Naive Batch Norm turns every PAD row into (0 − μ)/σ_ε + β: not zero.",
            "Masked Batch Norm ignores the PAD positions and leaves them at 0.",
            "Layer Norm normalizes each row on its own: a PAD row comes out as β.",
        ),
        strict=True,
    )
    for column, figure, table, name, caption in outputs:
        with column:
            ui.chart(figure, name, caption)
            if not ui.presenting():
                _table(tables[table])
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
            f"With ε = {lab.eps:g} Layer Norm's PAD rows are NaN. A PAD row is constant (all "
            "zeros), so its mean is 0 and its variance is 0, and x̂ = (0 − 0) / √(0 + 0) = 0/0, "
            "which is undefined: NaN. Any ε > 0 gives 0 / √ε = 0, and the row comes out as β.",
            icon=":material/warning:",
        )
    elif pad_rows.size:
        st.success(
            f"Layer Norm leaves every PAD row at β = {lab.beta:g}: the row is constant, so "
            f"x − μ = 0 and 0 / √(0 + ε) = 0 with ε = {lab.eps:g} > 0. (Set ε to 0 to see the "
            "0/0.)",
            icon=":material/check:",
        )


# ---------------------------------------------------------------- 5. closed form + calculator


def _calculator_inputs() -> None:
    batch_in, longest_in, average_in = st.columns(3)
    batch_in.number_input(
        "Sentences in the batch",
        min_value=1,
        max_value=pad.MAX_CALC_BATCH,
        step=1,
        key="pad_batch",
        persist_state=KEEP,
    )
    longest_in.number_input(
        "Longest sentence (words)",
        min_value=1,
        max_value=pad.MAX_CALC_LONGEST,
        step=1,
        key="pad_longest",
        persist_state=KEEP,
    )
    average_in.number_input(
        "Average length (words)",
        min_value=1.0,
        max_value=float(pad.MAX_CALC_LONGEST),
        step=1.0,
        key="pad_average",
        persist_state=KEEP,
    )


def _closed_form_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    if not _revealed(_questions(inputs).closed_form):
        return
    presenting = ui.presenting()
    st.markdown(
        "If a share p of a feature's rows are PAD zeros, and the real tokens have mean μ and "
        "(biased) variance σ², then the statistics naive Batch Norm computes are:"
    )
    st.latex(
        r"\mu_{\text{padded}} = (1 - p)\,\mu, \qquad "
        r"\sigma^2_{\text{padded}} = (1 - p)\,\sigma^2 + p\,(1 - p)\,\mu^2"
    )
    cf = lab.closed_form
    if not presenting:
        st.markdown(
            f"Checked on this batch, p = {lab.pad_count}/{lab.tokens.shape[0]} = "
            f"{cf.share:.4g}: the closed form against what naive Batch Norm computed "
            "(the differences are float64 rounding):"
        )
        _table(_tables(inputs)["check"], scientific=("mean diff", "variance diff"))
        st.subheader("Padding calculator")
        _calculator_inputs()
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
        rf"\frac{{{count.longest} - {num(count.average)}}}{{{count.longest}}} = "
        rf"{num(count.share)}"
    )
    if not presenting:
        st.selectbox(
            "Feature for the closed form",
            list(range(len(FEATURES))),
            format_func=FEATURES.__getitem__,
            key="pad_cf_feature",
            persist_state=KEEP,
        )
    feature = ss.pad_cf_feature
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
        _closed_form_figure(inputs, feature, count.share),
        "pad-closed-form",
        "Lines: the closed form as the PAD share p goes from 0 to 1. Dots: the mean and "
        "variance naive Batch Norm computed on the batch above; they sit on the lines. "
        "Diamonds: the calculator's share.",
    )


# ---------------------------------------------------------------- 6. who else is in the batch


def _who_else_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    who = lab.who_else
    sentences = lab.sentences
    if who is None:
        st.info("The batch has one sentence. Add a second line above to see this.")
        return
    if ui.presenting():
        st.markdown(
            f"Sentence {who.focus + 1}, **{plain(' '.join(who.words))}**, stays as it is. "
            f"Sentence {who.other + 1} changes from **{plain(' '.join(who.before))}** to "
            f"**{plain(' '.join(who.after))}**."
        )
    else:
        focus_in, other_in, text_in = st.columns([1, 1, 2])
        focus_in.selectbox(
            "This sentence",
            list(range(len(sentences))),
            format_func=lambda b: _sentence_label(sentences, b),
            key="pad_focus",
            persist_state=KEEP,
        )
        other_in.selectbox(
            "Edit this other sentence",
            [b for b in range(len(sentences)) if b != ss.pad_focus],
            format_func=lambda b: _sentence_label(sentences, b),
            key="pad_other",
            persist_state=KEEP,
        )
        text_in.text_input(
            "...into", key="pad_other_text", max_chars=MAX_SENTENCE_CHARS, persist_state=KEEP
        )
    c1, c2, c3 = st.columns(3)
    c1.metric("Batch Norm, naive: max |change|", f"{who.max_change(who.naive_bn):.4g}")
    c2.metric("Batch Norm, masked: max |change|", f"{who.max_change(who.masked_bn):.4g}")
    c3.metric("Layer Norm: max |change|", f"{who.max_change(who.ln):.4g}")
    if not ui.presenting():
        _table(_tables(inputs)["who"])
    st.caption(
        "The outputs of the same words of this sentence, before and after the other sentence "
        "changed. Batch Norm's statistics come from the whole batch, so this sentence's output "
        "depends on its neighbours, masked or not; Layer Norm's depend on the token alone."
    )


# ---------------------------------------------------------------- 7. the 5 x 3 table


def _table_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    tables = _preactivation_tables(lab.eps, lab.beta)
    st.markdown(
        "The pre-activations z1, z2, z3 of three nodes for five samples. **Batch Norm** "
        "normalizes each node **down its column** (over the samples); **Layer Norm** "
        "normalizes each sample **across its row** (over the nodes)."
    )
    in_col, bn_col, ln_col = st.columns(3)
    with in_col:
        st.subheader("Input")
        _table(tables["x"], digits=1)
    with bn_col:
        st.subheader("Batch Norm (columns)")
        st.caption("One mean and variance per node, over the five samples:")
        _table(tables["bn_stats"])
        st.caption("Output:")
        _table(tables["bn_y"])
    with ln_col:
        st.subheader("Layer Norm (rows)")
        st.caption("One mean and variance per sample, over its three nodes:")
        _table(tables["ln_stats"])
        st.caption("Output:")
        _table(tables["ln_y"])
    st.caption(
        "After Batch Norm every column has mean 0 and variance 1 (up to ε); after Layer Norm "
        "every row does."
    )


# ---------------------------------------------------------------- 8. not the whole story


def _power_norm_section(lab: pad.PaddingLab, inputs: tuple) -> None:
    st.markdown(
        "Masking the PAD rows fixes Batch Norm's statistics on one batch, not Batch Norm in "
        "Transformers. Shen et al. (2020, *PowerNorm: Rethinking Batch Normalization in "
        "Transformers*) found that on text the batch statistics **fluctuate strongly from "
        "batch to batch** during training, which makes training unstable. And Batch Norm "
        "normalizes **differently in training and at inference**: training uses the batch's "
        "own statistics, inference uses running averages that PyTorch updates after every "
        "training batch. Layer Norm has neither problem: each token uses its own statistics, "
        "the same way in training and at inference."
    )
    tables = _tables(inputs)
    run_col, gap_col = st.columns(2)
    with run_col:
        _table(tables["running"])
        st.caption(
            f"What nn.BatchNorm1d (momentum {pad.MOMENTUM}) stores after training on this "
            "padded batch once, from running mean 0 and variance 1: running = (1 − momentum) · "
            "old + momentum · batch, with the unbiased batch variance."
        )
    with gap_col:
        _table(tables["gap"])
        st.caption(
            "The same tokens through the same Batch Norm layer in training mode and in eval "
            "mode: different outputs. Layer Norm would give identical ones."
        )


# ---------------------------------------------------------------- exports


def _exports(lab: pad.PaddingLab, inputs: tuple) -> None:
    """CSV, JSON and a PyTorch script of the numbers above (files built only when clicked)."""
    preset = ss.pad_preset
    csv_col, json_col, script_col = st.columns(3)
    csv_col.download_button(
        "Statistics as CSV",
        lambda: export.to_csv(pad.statistics_rows(lab)),
        file_name="lnlab-padding.csv",
        mime="text/csv",
        key="pad_dl_csv",
        icon=":material/table:",
        on_click="ignore",
    )
    json_col.download_button(
        "Statistics as JSON",
        lambda: pad.statistics_json(lab, preset),
        file_name="lnlab-padding.json",
        mime="application/json",
        key="pad_dl_json",
        icon=":material/data_object:",
        on_click="ignore",
    )
    script = _script(inputs)
    script_col.download_button(
        "PyTorch script",
        script,
        file_name="lnlab_padding.py",
        mime="text/x-python",
        key="pad_dl_script",
        icon=":material/code:",
        on_click="ignore",
    )
    st.caption(
        "The CSV has one row per token and feature: the input, then mean, variance, σ_ε and "
        "output of naive Batch Norm, masked Batch Norm and Layer Norm. The JSON holds the same "
        "numbers, the running statistics and the settings. Figures download from their own "
        "toolbar."
    )
    with st.expander("The PyTorch script (torch.nn.functional, float64)"):
        st.code(script, language="python")


# ---------------------------------------------------------------- the sections, or slides

Section = Callable[[pad.PaddingLab, tuple], None]
SECTIONS: tuple[tuple[str, Section], ...] = (
    ("The batch", _slide_batch),
    ("Which cells feed a statistic", _cells_section),
    ("The statistics, side by side", _statistics_section),
    ("The outputs", _outputs_section),
    ("How much padding, and what it does to the statistics", _closed_form_section),
    ("Who else is in the batch?", _who_else_section),
    ("Down the columns or across the rows", _table_section),
    ("Masking is not the whole story", _power_norm_section),
)


def _slide(lab: pad.PaddingLab, inputs: tuple) -> None:
    """Presenter mode: the section ss.pad_slide alone, with Previous and Next."""
    _clamp("pad_slide", list(range(len(SECTIONS))))
    k = ss.pad_slide
    title, show = SECTIONS[k]
    st.header(f"{k + 1}. {title}")
    nav = ui.step_buttons("pad", "pad_slide", len(SECTIONS))
    nav.caption(f"Slide {k + 1} of {len(SECTIONS)}: Batch Norm vs Layer Norm. Keys ← and →.")
    show(lab, inputs)


# ---------------------------------------------------------------- shareable links


def _one_based(i: int) -> int:
    return i + 1


def _zero_based(i: int) -> int:
    return i - 1


def _canonical_sentences(text: str) -> str:
    return pad.format_sentences(pad.parse_sentences(text))


def _canonical_sentence(text: str) -> str:
    return " ".join(pad.parse_sentence(text))


def _overrides_text(overrides: dict[str, pad.Vector]) -> str | None:
    return pad.format_overrides(overrides) or None  # no edits: no parameter


FIELDS = (
    Field(Param("preset", "choice", choices=tuple(p.key for p in BATCH_PRESETS)), "pad_preset"),
    Field(
        pad.CheckedText(
            "s",
            "text",
            max_chars=pad.MAX_TEXT_CHARS,
            max_lines=pad.MAX_SENTENCES,
            check=pad.parse_sentences,
        ),
        "pad_sentences",
        from_widget=_canonical_sentences,
    ),
    Field(
        pad.CheckedText(
            "w", "text", max_chars=pad.MAX_OVERRIDES_CHARS, max_lines=1, check=pad.parse_overrides
        ),
        "pad_overrides",
        pad.parse_overrides,
        _overrides_text,
    ),
    Field(Param("eps", "float", lo=0.0, hi=pad.MAX_EPS), "pad_eps"),
    Field(Param("beta", "float", lo=-pad.MAX_BETA, hi=pad.MAX_BETA), "pad_beta"),
    Field(Param("stat", "choice", choices=tuple(pad.PICKS)), "pad_pick"),
    Field(Param("feat", "int", lo=1, hi=len(FEATURES)), "pad_feature", _zero_based, _one_based),
    Field(
        Param("tok", "int", lo=1, hi=pad.MAX_SENTENCES * pad.MAX_WORDS),
        "pad_token",
        _zero_based,
        _one_based,
    ),
    Field(Param("focus", "int", lo=1, hi=pad.MAX_SENTENCES), "pad_focus", _zero_based, _one_based),
    Field(Param("other", "int", lo=1, hi=pad.MAX_SENTENCES), "pad_other", _zero_based, _one_based),
    Field(
        pad.CheckedText(
            "edit", "text", max_chars=MAX_SENTENCE_CHARS, max_lines=1, check=pad.parse_sentence
        ),
        "pad_other_text",
        from_widget=_canonical_sentence,
    ),
    Field(Param("batch", "int", lo=1, hi=pad.MAX_CALC_BATCH), "pad_batch"),
    Field(Param("longest", "int", lo=1, hi=pad.MAX_CALC_LONGEST), "pad_longest"),
    Field(Param("avg", "float", lo=1.0, hi=pad.MAX_CALC_LONGEST), "pad_average"),
    Field(Param("cf", "int", lo=1, hi=len(FEATURES)), "pad_cf_feature", _zero_based, _one_based),
    Field(Param("q", "bool"), "pad_quiz"),
    Field(Param("slide", "int", lo=1, hi=len(SECTIONS)), "pad_slide", _zero_based, _one_based),
)


# ---------------------------------------------------------------- the page

ui.page_setup("Batch Norm vs Layer Norm")
ui.open_link(PAGE, FIELDS)
_init_state()
ui.within("pad_batch", 1, pad.MAX_CALC_BATCH, PADDING_COUNT.batch, "The batch size")
ui.within("pad_longest", 1, pad.MAX_CALC_LONGEST, PADDING_COUNT.longest, "The longest sentence")
ui.within("pad_average", 1, pad.MAX_CALC_LONGEST, PADDING_COUNT.average, "The average length")
if ui.presenting():
    sentences, overrides = _sentences(), ss.pad_overrides
else:
    st.title("Batch Norm vs Layer Norm on a padded batch")
    st.markdown(
        "Sentences in a batch have different lengths, so the short ones are **padded with zero "
        "PAD rows** up to the longest. Batch Norm computes each feature's statistics **down a "
        "column, over every token in the batch**, PAD zeros included unless they are masked. "
        "Layer Norm computes them **across a row, over one token's own features**, so padding "
        "and the other sentences cannot touch it."
    )
    st.toggle(
        "Predict before you see",
        key="pad_quiz",
        persist_state=KEEP,
        help="Sections 3 to 5 first ask you to predict what they show; your first tries are "
        "scored in the sidebar.",
    )
    st.header("1. The batch")
    sentences, overrides = _batch_inputs()

_clamp("pad_focus", list(range(len(sentences))))
_clamp("pad_other", [b for b in range(len(sentences)) if b != ss.pad_focus] or [0])
_clamp("pad_cf_feature", list(range(len(FEATURES))))
eps, beta = ui.last_good(
    "pad_good_settings",
    lambda: pad.checked_settings(ss.pad_eps, ss.pad_beta),
    (EPS_DEFAULT, 0.0),
)
replacement = ui.last_good(
    "pad_good_other_text",
    lambda: pad.parse_sentence(ss.pad_other_text),
    tuple(pad.DEFAULT_REPLACEMENT.split()),
)
inputs = (
    sentences,
    ss.pad_preset,
    tuple(overrides.items()),
    eps,
    beta,
    ss.pad_focus,
    ss.pad_other,
    replacement,
)
lab = _lab(inputs)

if ui.presenting():
    _slide(lab, inputs)
else:
    _summary(lab)
    for number, (title, section) in enumerate(SECTIONS[1:], start=2):
        st.header(f"{number}. {title}")
        section(lab, inputs)
    st.header("Take the numbers with you")
    _exports(lab, inputs)

ui.share_link(PAGE, FIELDS)
