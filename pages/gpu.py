"""Run it on the GPU: the five steps in torch on a device and dtype, parity with float64, and
Layer Norm timed at scale (step by step against the fused kernel). The math is in lnlab.timing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lnlab import backend, timing, ui
from lnlab.backend import DeviceInfo
from lnlab.errors import InputError
from lnlab.export import to_csv
from lnlab.lesson import default_labels, feature_names
from lnlab.links import Field, Param
from lnlab.markdown import plain
from lnlab.parse import MAX_CHARS, MAX_TOKENS, format_embeddings, parse_embeddings
from lnlab.plots import gpu as plots
from lnlab.presets import TOKEN_PRESETS, token_preset

DEFAULT_PRESET = "hello"
DEFAULT_SHAPE = {"gpu_batch": 4, "gpu_seq": 512, "gpu_features": 1024}
LINK = (
    # the kind of device: "cuda" opens the first CUDA GPU
    Field(
        Param("dev", "choice", choices=backend.DEVICES),
        "gpu_device",
        lambda kind: "cuda:0" if kind == "cuda" else kind,
        lambda name: name.split(":")[0],
    ),
    Field(Param("dtype", "choice", choices=backend.DTYPES), "gpu_dtype"),
    Field(Param("preset", "choice", choices=tuple(p.key for p in TOKEN_PRESETS)), "gpu_preset"),
    Field(Param("x", "matrix"), "gpu_text", format_embeddings, parse_embeddings),
    Field(Param("tok", "int", lo=1, hi=MAX_TOKENS), "gpu_token", lambda n: n - 1, lambda i: i + 1),
    # the benchmark's sizes; a link never runs it (the button does)
    Field(Param("batch", "int", lo=1, hi=timing.MAX_BATCH), "gpu_batch"),
    Field(Param("seq", "int", lo=1, hi=timing.MAX_SEQ), "gpu_seq"),
    Field(Param("feat", "int", lo=2, hi=timing.MAX_FEATURES), "gpu_features"),
)

ss = st.session_state


@st.cache_resource(show_spinner="Loading torch and looking for a GPU...")
def _devices() -> list[DeviceInfo]:
    return backend.available_devices()


@st.cache_data(max_entries=64, show_spinner=False)
def _parity(
    rows: tuple[tuple[float, ...], ...], device: str, dtype: str, row: int
) -> timing.Parity:
    return timing.parity(np.array(rows), device, dtype, row=row)


def _load_preset() -> None:
    ss.gpu_text = format_embeddings(token_preset(ss.gpu_preset).x)
    ss.gpu_token = 0


def _parse() -> np.ndarray:
    return parse_embeddings(ss.gpu_text)


def _defaults() -> dict[str, object]:
    """Every input's value when neither the visitor nor a link has set it."""
    preset = ss.get("gpu_preset", DEFAULT_PRESET)
    return {
        "gpu_device": "auto",
        "gpu_dtype": "float32",
        "gpu_preset": preset,
        "gpu_text": format_embeddings(token_preset(preset).x),
        "gpu_token": 0,
    } | DEFAULT_SHAPE


# ---------------------------------------------------------------- device and input

ui.page_setup("Run it on the GPU")
ui.open_link("gpu", LINK)
for key, value in _defaults().items():
    # re-assigning keeps a widget's value while presenter mode hides it (Streamlit drops the
    # state of widgets that are not drawn)
    ss[key] = ss.get(key, value)
ui.within("gpu_batch", 1, timing.MAX_BATCH, DEFAULT_SHAPE["gpu_batch"], "The batch")
ui.within("gpu_seq", 1, timing.MAX_SEQ, DEFAULT_SHAPE["gpu_seq"], "The sequence length")
ui.within("gpu_features", 2, timing.MAX_FEATURES, DEFAULT_SHAPE["gpu_features"], "The features")
presenting = ui.presenting()

st.title("Run it on the GPU")
st.markdown(
    "The same five steps, computed with **torch** on a device and in a dtype you choose, "
    "then compared with the exact answer (numpy in float64). Below, the same Layer Norm on a "
    "big batch, timed: one operation per step against PyTorch's fused kernel."
)

devices = _devices()
names = {d.name: d.label for d in devices}
auto = devices[0]
if auto.kind == "cpu":
    st.info(
        "**No GPU on this machine**: torch found no CUDA and no Apple MPS device, so "
        "everything on this page runs on the CPU. The lessons hold all the same; the timings "
        "are the CPU's.",
        icon=":material/memory:",
    )
else:
    st.success(f"GPU found: {plain(auto.label)} ({auto.name}).", icon=":material/memory:")

if ss.gpu_device not in ("auto", *names):
    st.warning(
        f"This link asks for the {plain(ss.gpu_device.split(':')[0])} device, which this "
        f"machine does not have: the page uses auto ({plain(auto.label)}) instead.",
        icon=":material/link_off:",
    )
    ss.gpu_device = "auto"
device_col, dtype_col, preset_col = st.columns([1, 1, 2])
with device_col:
    device = st.selectbox(
        "Device",
        ["auto", *names],
        format_func=lambda n: f"auto ({names[auto.name]})" if n == "auto" else names[n],
        key="gpu_device",
    )
resolved = auto.name if device == "auto" else device
dtypes = backend.supported_dtypes(resolved)
if ss.gpu_dtype not in dtypes:
    st.warning(
        f"{plain(ss.gpu_dtype)} is not supported on {plain(names[resolved])}: the page uses "
        "float32 instead.",
        icon=":material/info:",
    )
    ss.gpu_dtype = "float32"
with dtype_col:
    dtype = st.selectbox("dtype", dtypes, key="gpu_dtype")
preset_key = ss.gpu_preset
if not presenting:  # the slide shows the result; the input boxes stay off it
    with preset_col:
        ui.preset_choice("Preset", TOKEN_PRESETS, "gpu_preset", on_change=_load_preset)
    text_col, token_col = st.columns([3, 1])
    with text_col:
        st.text_area(
            "Token embeddings: one token per line, numbers separated by commas or spaces",
            key="gpu_text",
            height=150,
            max_chars=MAX_CHARS,
            help="You can also paste a Python list, np.array(...) or tensor(...) printout.",
        )
x = ui.last_good("gpu_good_x", _parse, token_preset(DEFAULT_PRESET).x)
preset = token_preset(preset_key)
tokens = list(preset.labels) if np.array_equal(x, preset.x) else default_labels(x.shape[0])
features = feature_names(x.shape[1])
if ss.gpu_token not in range(len(tokens)):
    st.warning(
        f"Token {ss.gpu_token + 1} is not in the input ({len(tokens)} tokens): the steps show "
        "token 1.",
        icon=":material/info:",
    )
    ss.gpu_token = 0
token = ss.gpu_token
if not presenting:
    with token_col:
        st.selectbox(
            "Token shown in the steps",
            range(len(tokens)),
            format_func=lambda i: f"{i + 1}: {tokens[i]}",
            key="gpu_token",
        )

result = ui.last_good(
    "gpu_good_parity",
    lambda: _parity(tuple(map(tuple, x.tolist())), resolved, dtype, token),
    None,
)
if result is None:
    ui.share_link("gpu", LINK)
    st.stop()

# ---------------------------------------------------------------- the steps on the device

st.header(f"The five steps in {result.dtype} on {names[result.device]}")
st.caption(
    f"Token {token + 1} ({plain(tokens[token])}), epsilon {result.eps:g}, γ = 1, β = 0. The "
    f"numbers below are torch's, computed on {result.device}: the input was rounded to "
    f"{result.dtype} first and every result is rounded back to it."
)
for step in result.trace.steps:
    st.markdown(f"**{step.title}**")
    st.latex(step.formula)
    st.latex(step.latex)

if not presenting:  # the slide keeps the steps and the parity; the statistics table is extra
    stats = pd.DataFrame(
        {
            f"{symbol} {where}": getattr(trace, step).reshape(-1)
            for step, symbol in (("mean", "μ"), ("var", "σ²"), ("std", "σ_ε"))
            for trace, where in ((result.trace, result.dtype), (result.reference, "float64"))
        },
        index=tokens,
    )
    st.dataframe(stats, width="stretch")
    st.caption(f"Each token's statistics in {result.dtype} on the device and in float64.")

# ---------------------------------------------------------------- parity

st.header("Parity with float64")
parity_rows = timing.parity_table(result)
st.dataframe(
    pd.DataFrame(parity_rows).set_index("step"),
    width="stretch",
    column_config={
        c: st.column_config.NumberColumn(format="%.3e")
        for c in ("max abs error", "max rel error", "expected bound")
    },
)
if not presenting:
    file_name = f"lnlab-parity-{result.device.replace(':', '')}-{result.dtype}"
    csv_col, json_col, _ = st.columns([1, 1, 4])
    csv_col.download_button(
        "CSV",
        to_csv(parity_rows),
        f"{file_name}.csv",
        "text/csv",
        key="gpu_dl_csv",
        icon=":material/download:",
        help="The parity table above",
    )
    json_col.download_button(
        "JSON",
        timing.parity_json(result, {"token": token + 1}),
        f"{file_name}.json",
        "application/json",
        key="gpu_dl_json",
        icon=":material/download:",
        help="The parity table, the input, and the outputs on the device and in float64",
    )
chart_col, formula_col = st.columns([3, 2])
with chart_col:
    ui.chart(
        plots.parity_bars(result),
        "gpu-parity",
        "Blue: each step's largest relative error against float64 (log scale). Orange: the "
        "bound to expect from the dtype's unit roundoff and the input's κ. The last pair is "
        "torch's own fused F.layer_norm. The table above holds the same numbers.",
    )
with formula_col:
    st.latex(
        r"\text{rel. error} = \frac{\max_i |v_i^{\text{device}} - v_i^{\text{float64}}|}"
        r"{\max_i |v_i^{\text{float64}}|}"
    )
    st.caption(
        "Relative to the largest value of each step (normwise), so a value near 0 cannot "
        "inflate it."
    )
    st.metric(f"unit roundoff u of {result.dtype}", f"{result.unit_roundoff:.3g}")
    st.metric("κ: largest input / spread", f"{result.kappa:.3g}")
    st.metric("κ_μ: largest input / largest mean", f"{result.kappa_mean:.3g}")
beyond = [r.step for r in result.rows if not r.within]
if beyond:
    st.warning(
        f"Beyond the expected bound: {plain(', '.join(beyond))}. This happens when values "
        f"leave {result.dtype}'s range (overflow to inf, or tiny values stored with fewer "
        "bits), where the unit roundoff no longer describes the rounding."
    )

with st.expander("What errors to expect, and why", expanded=not presenting):
    st.markdown(
        "A dtype with a $p$-bit significand stores any number with a relative error of at "
        "most the **unit roundoff** $u = 2^{-p}$. Storing the input moves each $x_i$ by up to "
        "$u|x_i|$; the steps amplify that by how large the inputs are next to their spread, "
        "$\\kappa$, and rounding the result back adds about $u$ more:"
    )
    st.latex(
        r"\text{bound} = u\,(2 + a\,\kappa), \qquad "
        r"\kappa = \max_{\text{tokens}} \frac{\max_i |x_i|}{\sigma_\epsilon}, \qquad "
        r"a = 2\ (\mu, \sigma_\epsilon),\ 4\ (\sigma^2, \hat{x}, y)"
    )
    st.markdown(
        "For the mean, $\\kappa$ is replaced by $\\kappa_\\mu = \\max|x| / \\max|\\mu|$, since "
        "its error is measured against the mean itself. Centred data has a small $\\kappa$ "
        "(this input's is above), so the error is a few $u$: about as many correct decimal "
        "digits as the table gives. A token like 1000.1, 1000.2, 1000.3 has a huge "
        "$\\kappa$: in float16 it loses almost everything before any arithmetic happens."
    )
    st.dataframe(
        pd.DataFrame(timing.dtype_table()).set_index("dtype"),
        width="stretch",
        column_config={"bound for x̂ at κ = 1": st.column_config.NumberColumn(format="%.2e")},
    )

heat_col, heat_table_col = st.columns(2)
diff = (result.trace.y - result.reference.y).reshape(len(tokens), -1)
with heat_col:
    ui.chart(
        plots.error_heatmap(result, tokens, features),
        "gpu-error",
        f"The error of every output: y computed in {result.dtype} on the device minus y in "
        "float64 (orange below 0, purple above). The table beside holds the same numbers.",
    )
with heat_table_col:
    st.dataframe(
        pd.DataFrame(diff, index=tokens, columns=features),
        width="stretch",
        column_config={f: st.column_config.NumberColumn(format="%.2e") for f in features},
    )

# ---------------------------------------------------------------- scale-up

st.header("Scale it up: step by step against fused")
st.markdown(
    "Layer Norm does little arithmetic per number, so its speed is set by **memory**: how "
    f"many bytes it reads and writes. Written one operation per step, it makes "
    f"{len(timing.STEP_OPS)} passes over memory; PyTorch's fused `F.layer_norm` makes "
    f"{len(timing.FUSED_OPS)}. A copy of the same tensor (`dst.copy_(x)`) measures what the "
    "device's memory can do."
)
cap = timing.element_cap(resolved)
size_cols = st.columns(3)
size_cols[0].number_input("batch", min_value=1, max_value=timing.MAX_BATCH, step=1, key="gpu_batch")
size_cols[1].number_input("sequence", min_value=1, max_value=timing.MAX_SEQ, step=1, key="gpu_seq")
size_cols[2].number_input(
    "features", min_value=2, max_value=timing.MAX_FEATURES, step=1, key="gpu_features"
)
shape = (int(ss.gpu_batch), int(ss.gpu_seq), int(ss.gpu_features))
numel = None
try:
    numel = timing.check_size(*shape, resolved)
    st.caption(
        f"{numel:,} elements of at most {cap:,} on {resolved}. One benchmark runs at a time "
        f"in the whole server, for about {timing.BUDGET_S:g} s"
        + (f", on {timing.CPU_THREADS} CPU thread." if resolved == "cpu" else ".")
    )
except InputError as err:
    ui.show_error(err)

if st.button("Run the benchmark", key="gpu_run", icon=":material/speed:", disabled=numel is None):
    try:
        with st.spinner(f"Timing on {resolved}..."):
            ss.gpu_scale_up = timing.run_scale_up(*shape, resolved, dtype)
    except timing.BusyError:
        st.warning(timing.BUSY_MESSAGE, icon=":material/hourglass:")
    except InputError as err:
        ui.show_error(err)

scale_up = ss.get("gpu_scale_up")
if scale_up is None:
    st.caption("Press the button to time the sizes above.")
else:
    st.dataframe(
        pd.DataFrame(timing.scale_up_table(scale_up)).set_index("version"),
        width="stretch",
        column_config={
            "share of copy bandwidth": st.column_config.NumberColumn(format="percent"),
            "median time (ms)": st.column_config.NumberColumn(format="%.4g"),
            "MB moved per call": st.column_config.NumberColumn(format="%.4g"),
            "GB/s moved": st.column_config.NumberColumn(format="%.3g"),
            "useful GB/s (read x, write y)": st.column_config.NumberColumn(format="%.3g"),
        },
    )
    st.caption(
        f"Median over the samples; torch used {scale_up.threads} CPU thread(s). "
        f"Step by step and fused agree to {scale_up.max_diff:.1e}. "
        "GB/s moved counts every byte each operation reads and writes; useful GB/s "
        "counts only reading x and writing y, the least any Layer Norm must move. "
        "A share above 100% means the tensor fits in a cache or the copy was disturbed."
    )
    ui.chart(
        plots.throughput_bars(scale_up),
        "gpu-throughput",
        "GB/s moved by each version, and its share of the copy's GB/s (the table above "
        "holds the same numbers).",
    )

if not presenting:  # the byte counts are reference, not the slide
    with st.expander("How the bytes are counted"):
        batch, seq, feats = shape
        st.markdown(
            "Every operation reads its inputs and writes its output once, in full (caches "
            "ignored). $N$ = batch x sequence x features, $R$ = batch x sequence rows, $D$ = "
            "features. In all, in elements:"
        )
        for version, ops in timing.VERSIONS.items():
            n, r, d = timing.traffic_totals(ops)
            st.latex(rf"\text{{{version}}}: {n}N + {r}R + {d}D")
        st.dataframe(
            pd.DataFrame(timing.traffic_table(batch * seq, feats, timing.ITEMSIZE[dtype])),
            hide_index=True,
            width="stretch",
        )

ui.share_link("gpu", LINK)
