"""Conventions and variants: one vector through six conventions, which axes, and a checker."""

from __future__ import annotations

import streamlit as st

from lnlab import ui
from lnlab.conventions import (
    CHECK_CASES,
    CONVENTIONS,
    REFERENCE,
    SLACK_ABS,
    SLACK_REL,
    AxesComparison,
    CheckResult,
    ConventionComparison,
    axes_table,
    check_claims,
    compare_axes,
    compare_conventions,
    comparison_table,
    convention,
    conventions_table,
    readings_table,
    tally_table,
    unbiased_ratio,
    verdict_table,
)
from lnlab.latex import num
from lnlab.markdown import plain
from lnlab.parse import format_embeddings, parse_embeddings
from lnlab.plots.conventions import claim_errors, groupings_heatmap, outputs_by_convention
from lnlab.presets import token_preset

HELLO = token_preset("hello")
NOTEBOOK = token_preset("notebook-2x3")
CASES = {case.key: case for case in CHECK_CASES}
CLAIM_FIELDS = ("x", "mean", "std", "var", "out")
DEFAULTS = {
    "cv_text": format_embeddings(HELLO.x[:1]),
    "cv_axes_text": format_embeddings(NOTEBOOK.x),
    "ck_case": CHECK_CASES[0].key,
} | {f"ck_{field}": getattr(CHECK_CASES[0], field) for field in CLAIM_FIELDS}
NUMBER = st.column_config.NumberColumn(format="%.6f")
SMALL = st.column_config.NumberColumn(format="%.2e")
ROW_PX = 35  # height of a dataframe row, to show a short table without a scrollbar


@st.cache_data(max_entries=64)
def _conventions(text: str) -> ConventionComparison:
    return compare_conventions(parse_embeddings(text))


@st.cache_data(max_entries=64)
def _axes(text: str) -> AxesComparison:
    return compare_axes(parse_embeddings(text))


@st.cache_data(max_entries=64)
def _check(fields: tuple[str, ...], labels: tuple[str, ...] | None) -> CheckResult:
    return check_claims(*fields, labels=labels)


def _load_case() -> None:
    """Fill the checker's inputs with the chosen case, exactly as its tutorial wrote them."""
    case = CASES[st.session_state.ck_case]
    for field in CLAIM_FIELDS:
        st.session_state[f"ck_{field}"] = getattr(case, field)


def _labels(n: int) -> list[str]:
    return [f"token {i}" for i in range(1, n + 1)]


ui.page_setup("Conventions and checker")
for key, value in DEFAULTS.items():
    st.session_state.setdefault(key, value)

st.title("Conventions and variants")
st.markdown(
    "Layer Norm is one formula on paper and several in code. Libraries disagree on three "
    "details: how large epsilon is, whether it goes **inside the square root** or is **added "
    "to the std**, and whether the variance divides by $D$ or by $D-1$. RMSNorm drops the "
    "mean altogether. Below: one input through each of them, the axes question, and a checker "
    "for the numbers tutorials print."
)

# ---------------------------------------------------------------- six conventions
st.header("One vector, six conventions")
left, right = st.columns([2, 3])
with left:
    st.text_area(
        "Token embeddings, one token per row (commas or spaces; a pasted array works too)",
        key="cv_text",
        height=120,
    )
    st.caption(f'Opens on the "Hello" token of {plain(HELLO.source)}')
comparison = ui.last_good(
    "cv_result",
    lambda: _conventions(st.session_state.cv_text),
    _conventions(DEFAULTS["cv_text"]),
)
with right:
    st.dataframe(
        conventions_table(comparison),
        hide_index=True,
        column_config={"eps": SMALL, "max |Δ| from PyTorch": SMALL},
    )
for column, c in zip(st.columns(3) * 2, CONVENTIONS, strict=True):
    with column:
        st.markdown(f"**{c.name}**  \n{plain(c.source)}")
        st.latex(c.formula)

st.subheader("Where they differ: largest |output − PyTorch's output|")
others = [run for run in comparison.runs if run.convention.key != REFERENCE]
reference = convention(REFERENCE)
for column, run in zip(st.columns(len(others)), others, strict=True):
    column.metric(run.convention.name, f"{run.max_abs_diff:.3g}")
    column.caption(run.convention.differences_from(reference))
d = comparison.x.shape[1]
st.markdown(
    "Epsilon only matters next to the variance: it moves the outputs noticeably when the "
    "variance is small, and not at all when it is large. Dividing by $D-1$ makes the std "
    f"larger by $\\sqrt{{D/(D-1)}}$, so with $D = {d}$ the Annotated Transformer's outputs are "
    f"{unbiased_ratio(d):.4f} times PyTorch's (when epsilon is negligible): far apart for "
    "small $D$, nearly equal at $D = 512$. RMSNorm's outputs differ whenever the mean is not 0."
)

labels = _labels(comparison.x.shape[0])
if st.session_state.get("cv_token", 0) >= len(labels):
    st.session_state.cv_token = 0
token = 0
if len(labels) > 1:
    token = st.selectbox(
        "Token in the chart", range(len(labels)), format_func=labels.__getitem__, key="cv_token"
    )
chart, table = st.columns([3, 2])
with chart:
    ui.chart(
        outputs_by_convention(comparison, token, labels[token]),
        "conventions-outputs",
        "Each group of bars is one feature of the token; each colour one convention. "
        "PyTorch, BERT and the NumPy tutorial overlap; Keras, the Annotated Transformer "
        "and RMSNorm stand out when they differ.",
    )
with table:
    st.dataframe(
        comparison_table(comparison, labels),
        hide_index=True,
        column_config={"max |Δ| from PyTorch": SMALL}
        | {f"y{i + 1}": NUMBER for i in range(d)}
        | {"mean": NUMBER, "divided by": NUMBER},
    )

# ---------------------------------------------------------------- which axes
st.header("Which axes? The notebook's last two")
st.markdown(
    "The PyTorch notebook of seed 001 builds a batch of one sentence, shape "
    "$(B, S, E) = (1, 2, 3)$, reshapes it to $(S, B, E) = (2, 1, 3)$ and normalizes over the "
    "**last two** axes, $(B, E)$. With $B = 1$ each group holds exactly one token, so it is "
    "ordinary per-token Layer Norm. Without the reshape the last two axes would be $(S, E)$: "
    "the whole sentence would share one mean and one std, and each token's output would "
    "depend on its neighbours. (With $B > 1$ the reshaped $(B, E)$ group would mix the same "
    "position of different sentences.)"
)
st.code(
    "inputs = inputs.reshape(S, B, E)          # (2, 1, 3)\n"
    "dims = [-1, -2]                           # the last two axes\n"
    "mean = inputs.mean(dim=dims, keepdim=True)",
    language="python",
)
left, right = st.columns([2, 3])
with left:
    st.text_area("Tokens of the sentence, one per row", key="cv_axes_text", height=100)
    st.caption(plain(NOTEBOOK.source))
axes = ui.last_good(
    "cv_axes_result",
    lambda: _axes(st.session_state.cv_axes_text),
    _axes(DEFAULTS["cv_axes_text"]),
)
with right:
    st.latex(r"\text{per token: } \mu_t = \frac{1}{E}\sum_{e} x_{t,e}")
    st.latex(r"\text{one group: } \mu = \frac{1}{S E}\sum_{t,e} x_{t,e}")
    first, second = st.columns(2)
    first.metric("Notebook vs per token: max |Δ|", f"{axes.notebook_vs_per_token:.3g}")
    second.metric("No reshape vs per token: max |Δ|", f"{axes.one_group_vs_per_token:.3g}")
axes_labels = _labels(axes.x.shape[0])
chart, table = st.columns([2, 3])
with chart:
    ui.chart(
        groupings_heatmap(axes, axes_labels),
        "conventions-axes",
        "Outputs with eps = 1e-5. Top rows: one group per token, which is also what the "
        "notebook's (S, 1, E) layout computes. Bottom rows: all tokens in one group.",
    )
with table:
    st.dataframe(
        axes_table(axes, axes_labels),
        hide_index=True,
        column_config={f"y{i + 1}": NUMBER for i in range(axes.x.shape[1])}
        | {"mean": NUMBER, "divided by": NUMBER},
    )

# ---------------------------------------------------------------- the checker
st.header("Worked-example checker")
st.markdown(
    "Paste a vector and what a tutorial claims about it: the mean, std or variance of each "
    "row (one number per row), and/or the outputs (one per feature). Leave a box blank to "
    "skip it. Each claim is compared with every way the conventions compute that quantity. "
    "A number written with $k$ decimals claims that the truth **rounds** to it, so it holds "
    "when the truth lies within half a unit of its last digit: `0.364` means 0.3635 to "
    "0.3645, `5` means 4.5 to 5.5. The small slack only absorbs floating-point rounding, "
    "including printouts computed in float32."
)
st.latex(
    r"|\text{truth} - \text{claim}| \le \tfrac{1}{2} \cdot 10^{-k}"
    rf" + {num(SLACK_REL)}\,|\text{{claim}}| + {num(SLACK_ABS)}"
)
case = CASES[
    st.selectbox(
        "Ready-made case from the tutorials",
        list(CASES),
        format_func=lambda key: CASES[key].title,
        key="ck_case",
        on_change=_load_case,
    )
]
st.caption(plain(case.source))
left, right = st.columns(2)
with left:
    st.text_area("Vector (one row per token)", key="ck_x", height=150)
    st.text_area(
        "Claimed outputs (one per feature, rows as in the vector)", key="ck_out", height=150
    )
with right:
    st.text_input("Claimed mean of each row", key="ck_mean")
    st.text_input("Claimed std of each row", key="ck_std")
    st.text_input("Claimed variance of each row", key="ck_var")

fields = tuple(st.session_state[f"ck_{field}"] for field in CLAIM_FIELDS)
case_labels = case.labels if st.session_state.ck_x == case.x else None
result = ui.last_good(
    "ck_result",
    lambda: _check(fields, case_labels),
    _check(tuple(DEFAULTS[f"ck_{field}"] for field in CLAIM_FIELDS), None),
)
names = {c.key: c.name for c in CONVENTIONS}
if not result.verdicts:
    st.info("Enter at least one claim (mean, std, variance or outputs) to check it.")
else:
    wrong = [v for v in result.verdicts if not v.holds]
    held = len(result.verdicts) - len(wrong)
    summary = f"{held} of {len(result.verdicts)} claims hold."
    if result.consistent:
        summary += " Every claim holds under: " + ", ".join(names[k] for k in result.consistent)
        st.success(summary + ".")
    else:
        summary += " No single convention explains every claim"
        summary += f"; {len(wrong)} claims are simply wrong under all of them." if wrong else "."
        st.warning(summary)
    st.dataframe(
        verdict_table(result),
        hide_index=True,
        column_config={
            "claim": st.column_config.TextColumn(width="medium"),
            "± tolerance": SMALL,
            "Layer Norm value": NUMBER,
            "its value": NUMBER,
        },
    )
    st.caption(
        "Layer Norm value: the mean, the biased variance and std (divided by D), or PyTorch's "
        "output. Closest reading: the computation, of all the conventions', nearest the claim."
    )
    ui.chart(
        claim_errors(result),
        "conventions-claims",
        "Each bar is a claim's distance from the closest true value, divided by its "
        "tolerance. At or below the dashed line the claim holds (blue); above it the claim "
        "is wrong under every convention (vermillion, hatched).",
    )
tally, statistics = st.columns([2, 3])
with tally:
    st.subheader("Claims that hold, per convention")
    st.dataframe(tally_table(result), hide_index=True)
with statistics:
    st.subheader("The true statistics of each row")
    readings = readings_table(result)
    st.dataframe(
        readings,
        column_config={c: NUMBER for c in result.labels},
        height=ROW_PX * (len(readings) + 1) + 3,
    )
