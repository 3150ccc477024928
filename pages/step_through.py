"""Step through one token: Layer Norm's five steps with your own numbers.

The text box is the source of the embeddings; the grid shows its last valid numbers and an
edit in the grid rewrites the text box. All the math is in lnlab.lesson.token_lesson.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lnlab import lesson as ls
from lnlab import ui
from lnlab.errors import InputError
from lnlab.latex import num
from lnlab.markdown import plain
from lnlab.parse import MAX_CHARS, format_embeddings, parse_embeddings, parse_labels, parse_vector
from lnlab.plots import step as plots
from lnlab.presets import TOKEN_PRESETS, token_preset

DEFAULT_PRESET = "token-2468"
EPS_DEFAULT = 1e-5
EPS_MAX = 1.0
VECTOR_CHARS = 2000  # gamma, beta and labels boxes
COLOURS = "orange is negative, purple positive, and every cell prints its number"
TABLE_FORMAT = "%.4g"
SYMBOLS = ("μ", "σ²", "σ_ε", "x̂", "y")  # what each step computes, as table and metric labels

ss = st.session_state


def _load_preset() -> None:
    """Fill the inputs from the picked preset; gamma and beta go back to 1 and 0."""
    preset = token_preset(ss.get("st_preset", DEFAULT_PRESET))
    ss.st_text = format_embeddings(preset.x)
    ss.st_labels = ls.labels_text(preset.labels)
    ss.st_token = 0
    ss.st_gamma, ss.st_beta = "1", "0"
    ss.st_step = 0


def _grid_changed() -> None:
    """Write a valid grid edit back to the text box (the source); errors show on the page."""
    x, labels = ss.st_grid_base
    try:
        new_x, new_labels = ls.apply_grid_edits(x, labels, ss.st_grid)
    except InputError:
        return
    ss.st_text = format_embeddings(new_x)
    if ss.st_labels.strip() and len(new_labels) != len(labels):
        ss.st_labels = ls.labels_text(new_labels)


def _move(delta: int) -> None:
    ss.st_step = ls.clamp_step(ss.get("st_step", 0) + delta)


def _undo(gamma: str, beta: str) -> None:
    ss.st_gamma, ss.st_beta = gamma, beta
    ss.st_step = ls.STEP_COUNT - 1


@st.cache_data(max_entries=64, show_spinner=False)
def _lesson(
    rows: tuple[tuple[float, ...], ...],
    labels: tuple[str, ...],
    token: int,
    eps: float,
    gamma: tuple[float, ...],
    beta: tuple[float, ...],
) -> ls.TokenLesson:
    return ls.token_lesson(np.array(rows), labels, token, eps, np.array(gamma), np.array(beta))


def _table(frame: pd.DataFrame) -> None:
    """A table with 4 significant digits (1e-17, not 0.0000000000000000100), NaN as "NaN"."""
    numbers = frame.select_dtypes("float").columns
    with_nan = [c for c in numbers if frame[c].isna().any()]
    shown = frame.assign(**{c: frame[c].map(lambda v: ls.fmt(v, 4)) for c in with_nan})
    digits = {
        c: st.column_config.NumberColumn(format=TABLE_FORMAT) for c in numbers if c not in with_nan
    }
    st.dataframe(shown, hide_index=True, column_config=digits)


def _as_tuple(a: np.ndarray) -> tuple:
    return tuple(tuple(row) for row in a.tolist()) if a.ndim == 2 else tuple(a.tolist())


def _vector(key: str, name: str, d: int, fill: float) -> np.ndarray:
    """gamma or beta from its text box; on bad text the last good one (or `fill`)."""
    v = ui.last_good(
        f"st_good_{name}", lambda: parse_vector(ss[key], d, name=name), np.full(d, fill)
    )
    return v if v.shape == (d,) else np.full(d, fill)


# ---------------------------------------------------------------- inputs

ui.page_setup("Step through one token")
if "st_text" not in ss:
    _load_preset()
ss.st_step = ls.clamp_step(ss.get("st_step"))
ss.setdefault("st_eps", EPS_DEFAULT)

st.title("Step through one token")
st.markdown(
    "Layer Norm looks at **one token at a time**: it takes that token's $D$ features, "
    "computes their mean and spread, and rescales them. Enter embeddings (or pick a preset), "
    "choose a token, and walk through the five steps."
)

preset_key = st.selectbox(
    "Preset",
    [p.key for p in TOKEN_PRESETS],
    format_func=lambda k: token_preset(k).title,
    key="st_preset",
    on_change=_load_preset,
)
st.caption(plain(token_preset(preset_key).source))

text_col, grid_col = st.columns(2)
with text_col:
    st.text_area(
        "Token embeddings: one token per line, numbers separated by commas or spaces",
        key="st_text",
        height=180,
        max_chars=MAX_CHARS,
        help="You can also paste a Python list, np.array(...) or tensor(...) printout.",
    )
    x = ui.last_good("st_good_x", lambda: parse_embeddings(ss.st_text), token_preset(preset_key).x)
    n, d = x.shape
    st.text_input(
        "Token labels (optional): separated by commas",
        key="st_labels",
        max_chars=VECTOR_CHARS,
        help=f"Leave blank for t1, t2, ... A label cannot hold a comma: write {ls.LABEL_COMMA}",
    )
    labels = ui.last_good(
        "st_good_labels", lambda: parse_labels(ss.st_labels, n), ls.default_labels(n)
    )
    labels = labels if len(labels) == n else ls.default_labels(n)
with grid_col:
    ss.st_grid_base = (x, labels)
    st.data_editor(ls.grid_frame(x), key="st_grid", num_rows="dynamic", on_change=_grid_changed)
    try:
        ls.apply_grid_edits(x, labels, ss.get("st_grid", {}))
    except InputError as err:
        ui.show_error(err)
    st.caption(
        "The text box is the source: this grid shows its last valid numbers (one row per "
        "token), and a change here rewrites the text box. Add or delete rows to add or remove "
        "tokens."
    )

if ss.get("st_token", 0) not in range(n):
    ss.st_token = 0
token_col, eps_col, gamma_col, beta_col = st.columns(4)
token = token_col.selectbox(
    "Token", range(n), format_func=lambda i: f"{i + 1}: {labels[i]}", key="st_token"
)
eps = eps_col.number_input(
    "Epsilon ε",
    min_value=0.0,
    max_value=EPS_MAX,
    step=1e-5,
    format="%g",
    key="st_eps",
    help="Added to the variance before the square root. Set it to 0 to see why it is there.",
)
with gamma_col:
    st.text_input(
        "γ (gamma): one value, or one per feature", key="st_gamma", max_chars=VECTOR_CHARS
    )
    gamma = _vector("st_gamma", "gamma", d, 1.0)
with beta_col:
    st.text_input("β (beta): one value, or one per feature", key="st_beta", max_chars=VECTOR_CHARS)
    beta = _vector("st_beta", "beta", d, 0.0)

lesson = _lesson(_as_tuple(x), tuple(labels), token, float(eps), _as_tuple(gamma), _as_tuple(beta))

# ---------------------------------------------------------------- the five steps

st.header(f"Token {token + 1}: {plain(labels[token])}")
step = ss.st_step
nav = st.container(horizontal=True, vertical_alignment="center")
show_all = ss.get("st_all", False)
nav.button(
    "Previous",
    key="st_prev",
    icon=":material/arrow_back:",
    on_click=_move,
    args=(-1,),
    disabled=show_all or step == 0,
    shortcut="Left",
)
nav.button(
    "Next",
    key="st_next",
    icon=":material/arrow_forward:",
    on_click=_move,
    args=(1,),
    disabled=show_all or step == ls.STEP_COUNT - 1,
    shortcut="Right",
)
nav.toggle("Show all steps at once", key="st_all")
st.caption("The ← and → keys step back and forth when no text box has the focus.")

if lesson.undefined:
    st.warning(
        "This token is constant, so σ² = 0, and ε = 0, so σ_ε = √(0 + 0) = 0. Every "
        "x̂ᵢ = (xᵢ − μ) / σ_ε = 0 / 0, which is NaN (not a number), and so is y. This is "
        "why ε exists: with any ε > 0 the same token gives x̂ = 0 and y = β.",
        icon=":material/warning:",
    )
elif lesson.var == 0:
    st.info(
        "This token is constant (σ² = 0): ε keeps σ_ε above 0, so x̂ = 0 and y = β.",
        icon=":material/info:",
    )

for k in range(ls.STEP_COUNT) if show_all else [step]:
    s = lesson.trace.steps[k]
    st.subheader(f"Step {k + 1} of {ls.STEP_COUNT}: {s.title}")
    st.latex(s.formula)
    st.latex(s.latex)
    value = s.value[token]
    if value.size == 1:
        st.metric(f"{SYMBOLS[k]} ({s.title.lower()})", ls.fmt(value[0]))
    else:
        _table(ls.vector_frame(SYMBOLS[k], value))
ui.chart(
    plots.token_bars(
        lesson.x,
        lesson.x_hat,
        lesson.y,
        lesson.mean,
        lesson.std,
        ls.STEP_COUNT - 1 if show_all else step,
    ),
    "st_bars",
    "Left: the token's features as bars, the dashed line at their mean μ and, from step 3, "
    "the band μ ± σ_ε. Right, from step 4: x̂ with its band 0 ± 1, then y = γ x̂ + β.",
)

# ---------------------------------------------------------------- the check

st.header("The check: mean 0, standard deviation 1")
c = lesson.check
cols = st.columns(3)
cols[0].metric(
    "mean of x̂",
    ls.fmt(c.mean),
    help="Something like 5.6e-17 is 0 up to floating-point rounding.",
)
cols[1].metric("std of x̂, dividing by D", ls.fmt(c.std))
cols[2].metric("torch.std(x̂), dividing by D − 1", ls.fmt(c.std_unbiased))
st.markdown(
    "Layer Norm divides by $D$: it describes exactly these "
    f"$D = {c.features}$ numbers. With ε > 0 the std of x̂ is a hair under 1:"
)
st.latex(
    rf"\sqrt{{\tfrac{{\sigma^2}}{{\sigma^2 + \epsilon}}}} = "
    rf"\sqrt{{\tfrac{{{num(lesson.var)}}}{{{num(lesson.var)} + {num(lesson.eps)}}}}} = "
    rf"{num(c.expected_std)}"
)
st.markdown(
    "`torch.std` prints a different number because by default it applies **Bessel's "
    "correction**: it divides by $D - 1$, as if the features were a sample from a larger "
    "population whose spread it estimates. That multiplies the std by $\\sqrt{D/(D-1)}$:"
)
st.latex(
    rf"\sqrt{{\tfrac{{1}}{{D-1}}\textstyle\sum_i (\hat{{x}}_i - \bar{{\hat{{x}}}})^2}}"
    rf" = {num(c.std)} \times \sqrt{{\tfrac{{{c.features}}}{{{c.features - 1}}}}}"
    rf" = {num(c.std)} \times {num(c.bessel)} = {num(c.std_unbiased)}"
)
st.markdown(
    f"Likewise `torch.var(x)` gives {ls.fmt(c.var_input_unbiased)} for this token, where "
    f"Layer Norm uses σ² = {ls.fmt(lesson.var)}. Ask torch for Layer Norm's numbers with "
    "`x.std(unbiased=False)` or `x.var(correction=0)`."
)
if c.features == 1:
    st.info("With one feature D − 1 = 0, so torch.std returns nan.", icon=":material/info:")

# ---------------------------------------------------------------- undo

st.header("Let γ and β undo it")
st.markdown(
    "γ and β are learned, so the model can undo the normalization if that helps: with "
    r"$\gamma = \sigma_\epsilon$ and $\beta = \mu$, "
    r"$y = \sigma_\epsilon (x - \mu) / \sigma_\epsilon + \mu = x$."
)
st.latex(
    rf"\gamma = \sigma_\epsilon = {num(lesson.undo_gamma)}, \quad \beta = \mu = "
    rf"{num(lesson.undo_beta)}"
)
st.button(
    "Let γ and β undo it",
    key="st_undo",
    icon=":material/undo:",
    on_click=_undo,
    args=(repr(lesson.undo_gamma), repr(lesson.undo_beta)),
    disabled=lesson.undefined,
    help="Sets γ to this token's σ_ε and β to its mean, then shows step 5.",
)
if lesson.undoes_token:
    st.success(
        f"The input is back: y = x for token {token + 1}, "
        f"largest difference |y − x| = {ls.fmt(lesson.recovery_error, 3)}.",
        icon=":material/check_circle:",
    )
    _table(ls.recovery_frame(lesson))
    st.caption(
        "γ and β are shared by every token, so the other tokens come back only if they "
        "happen to have the same mean and σ_ε."
    )

# ---------------------------------------------------------------- whole prompt

st.header("The whole prompt at once")
st.markdown(
    r"Every token is normalized with its own mean and $\sigma_\epsilon$, never with another "
    f"token's. The outlined row is token {token + 1}."
)
for name, table, z, title, caption in (
    (
        "input",
        ls.input_table(lesson),
        lesson.trace.x,
        "Input x",
        f"The input, one row per token ({COLOURS}). The table beside it adds each token's "
        "mean μ and σ_ε.",
    ),
    (
        "normalized",
        ls.normalized_table(lesson),
        lesson.trace.x_hat,
        "Normalized x̂",
        f"x̂, one row per token ({COLOURS}). The table shows each row's mean (0) and std "
        "(1, a hair under with ε > 0); a row whose σ_ε is 0 is NaN.",
    ),
):
    table_col, heat_col = st.columns(2)
    with table_col:
        _table(table)
    with heat_col:
        ui.chart(plots.prompt_heatmap(z, labels, title, token), f"st_heat_{name}", caption)
