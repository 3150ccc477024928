"""Conventions and variants: one vector through six conventions, which axes, and a checker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    conventions_json,
    conventions_rows,
    conventions_script,
    conventions_table,
    readings_table,
    tally_table,
    unbiased_ratio,
    verdict_table,
)
from lnlab.export import to_csv
from lnlab.latex import num
from lnlab.links import Field, Param
from lnlab.markdown import plain
from lnlab.parse import MAX_TOKENS, format_embeddings, parse_embeddings
from lnlab.plots.conventions import claim_errors, groupings_heatmap, outputs_by_convention
from lnlab.presets import token_preset

HELLO = token_preset("hello")
NOTEBOOK = token_preset("notebook-2x3")
CASES = {case.key: case for case in CHECK_CASES}
CLAIM_FIELDS = ("x", "mean", "std", "var", "out")
ss = st.session_state
DEFAULTS = {
    "cv_text": format_embeddings(HELLO.x[:1]),
    "cv_token": 0,
    "cv_axes_text": format_embeddings(NOTEBOOK.x),
    "ck_case": CHECK_CASES[0].key,
} | {f"ck_{field}": getattr(CHECK_CASES[0], field) for field in CLAIM_FIELDS}
# The checker's boxes travel as typed (a pasted tensor printout stays one); a box over its cap
# is left out of the link rather than making the link unreadable.
CLAIM_PARAMS = {
    field: Param(
        f"c{field}", "text", max_chars=10_000 if field in ("x", "out") else 2_000, max_lines=200
    )
    for field in CLAIM_FIELDS
}
LINK = (
    Field(Param("x", "matrix"), "cv_text", format_embeddings, parse_embeddings),
    Field(Param("tok", "int", lo=1, hi=MAX_TOKENS), "cv_token", lambda n: n - 1, lambda i: i + 1),
    Field(Param("axes", "matrix"), "cv_axes_text", format_embeddings, parse_embeddings),
    Field(Param("case", "choice", choices=tuple(CASES)), "ck_case"),
    *(
        Field(CLAIM_PARAMS[field], f"ck_{field}", from_widget=CLAIM_PARAMS[field].decode)
        for field in CLAIM_FIELDS
    ),
)
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
    case = CASES[ss.ck_case]
    for field in CLAIM_FIELDS:
        ss[f"ck_{field}"] = getattr(case, field)


def _labels(n: int) -> list[str]:
    return [f"token {i}" for i in range(1, n + 1)]


def _text_box(widget: Callable[..., str], label: str, key: str, **kwargs: Any) -> None:
    """A text box; in presenter mode its text, read-only (the slide is the result)."""
    if presenting:
        st.caption(label)
        st.code(ss[key] or " ", language=None, wrap_lines=True)
    else:
        widget(label, key=key, **kwargs)


ui.page_setup("Conventions and checker")
ui.open_link("conventions", LINK)
ss.setdefault("ck_case", DEFAULTS["ck_case"])  # the claims' defaults are those of the case
defaults = DEFAULTS | {f"ck_{f}": getattr(CASES[ss.ck_case], f) for f in CLAIM_FIELDS}
for key, value in defaults.items():
    # re-assigning keeps a box's text while presenter mode hides it (Streamlit drops the
    # state of widgets that are not drawn)
    ss[key] = ss.get(key, value)
presenting = ui.presenting()

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
    _text_box(
        st.text_area,
        "Token embeddings, one token per row (commas or spaces; a pasted array works too)",
        "cv_text",
        height=120,
    )
    st.caption(f'Opens on the "Hello" token of {plain(HELLO.source)}')
comparison = ui.last_good(
    "cv_result",
    lambda: _conventions(ss.cv_text),
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
if ss.cv_token >= len(labels):
    st.warning(
        f"Token {ss.cv_token + 1} is not in the input ({len(labels)} tokens): the chart shows "
        "token 1.",
        icon=":material/info:",
    )
    ss.cv_token = 0
token = ss.cv_token
if len(labels) > 1:
    token = st.selectbox(
        "Token in the chart", range(len(labels)), format_func=labels.__getitem__, key="cv_token"
    )
outputs_chart = (
    outputs_by_convention(comparison, token, labels[token]),
    "conventions-outputs",
    "Each group of bars is one feature of the token; each colour one convention. "
    "PyTorch, BERT and the NumPy tutorial overlap; Keras, the Annotated Transformer "
    "and RMSNorm stand out when they differ.",
)
if presenting:  # the chart is the point; the full table stays off the slide
    ui.chart(*outputs_chart)
else:
    chart, table = st.columns([3, 2])
    with chart:
        ui.chart(*outputs_chart)
    with table:
        st.dataframe(
            comparison_table(comparison, labels),
            hide_index=True,
            column_config={"max |Δ| from PyTorch": SMALL}
            | {f"y{i + 1}": NUMBER for i in range(d)}
            | {"mean": NUMBER, "divided by": NUMBER},
        )
    script = conventions_script(comparison.x)
    csv_col, json_col, script_col = st.columns(3)
    csv_col.download_button(
        "CSV of the table",
        to_csv(conventions_rows(comparison, labels)),
        "lnlab-conventions.csv",
        "text/csv",
        key="cv_dl_csv",
        icon=":material/download:",
        help="Every convention's settings, mean, denominator and outputs, token by token",
    )
    json_col.download_button(
        "JSON",
        conventions_json(comparison, labels),
        "lnlab-conventions.json",
        "application/json",
        key="cv_dl_json",
        icon=":material/download:",
    )
    script_col.download_button(
        "PyTorch script",
        script,
        "lnlab_conventions.py",
        "text/x-python",
        key="cv_dl_script",
        icon=":material/code:",
        help="Computes every convention's outputs with torch and prints them as JSON",
    )
    with st.expander("The PyTorch script: the six conventions in torch"):
        st.code(script, language="python")

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
    _text_box(st.text_area, "Tokens of the sentence, one per row", "cv_axes_text", height=100)
    st.caption(plain(NOTEBOOK.source))
axes = ui.last_good(
    "cv_axes_result",
    lambda: _axes(ss.cv_axes_text),
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
    _text_box(st.text_area, "Vector (one row per token)", "ck_x", height=150)
    _text_box(
        st.text_area,
        "Claimed outputs (one per feature, rows as in the vector)",
        "ck_out",
        height=150,
    )
with right:
    _text_box(st.text_input, "Claimed mean of each row", "ck_mean")
    _text_box(st.text_input, "Claimed std of each row", "ck_std")
    _text_box(st.text_input, "Claimed variance of each row", "ck_var")

fields = tuple(ss[f"ck_{field}"] for field in CLAIM_FIELDS)
case_labels = case.labels if ss.ck_x == case.x else None
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
if not presenting:
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

ui.share_link("conventions", LINK)
