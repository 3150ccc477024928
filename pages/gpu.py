"""Run it on the GPU: the five steps in torch on a device and dtype, parity with float64, and
Layer Norm timed at scale (step by step against the fused kernel).

The lesson (lnlab.labs.gpu.lesson) is drawn one section at a time by ui.lesson_view; the device
and dtype are the first section's inputs, the benchmark's sizes and Run button the last's.
The math is in lnlab.labs.gpu.parity, lnlab.labs.gpu.traffic and lnlab.labs.gpu.benchmark.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lnlab import ui
from lnlab.core import backend
from lnlab.core.backend import DeviceInfo
from lnlab.core.errors import InputError
from lnlab.core.parse import (
    MAX_TOKENS,
    default_labels,
    format_embeddings,
    parse_embeddings,
)
from lnlab.labs.gpu import benchmark, memory, parity
from lnlab.labs.gpu import export as gpu_export
from lnlab.labs.gpu import lesson as slides
from lnlab.labs.gpu.traffic import ITEMSIZE
from lnlab.teach.links import Field, Param
from lnlab.teach.markdown import plain
from lnlab.teach.presets import TOKEN_PRESETS, token_preset
from lnlab.ui.line import worker_notice

PAGE = "gpu"
KEEP = ui.KEEP
DEFAULT_PRESET = "hello"
FALLBACK_SHAPE = (4, 512, 1024)  # where the device's cache size is not known
SIZES = (  # the benchmark's inputs: key, label, link parameter, smallest, largest
    ("gpu_batch", "batch", "batch", 1, benchmark.MAX_BATCH),
    ("gpu_seq", "sequence", "seq", 1, benchmark.MAX_SEQ),
    ("gpu_features", "features", "feat", 2, benchmark.MAX_FEATURES),
)
FIELDS = (
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
    *(Field(Param(param, "int", lo=lo, hi=hi), key) for key, _, param, lo, hi in SIZES),
    Field(Param("s", "int", lo=1, hi=4), "gpu_slide", lambda s: s - 1, lambda i: i + 1),
    Field(Param("q", "bool"), "gpu_quiz"),
)

ss = st.session_state


@st.cache_resource(show_spinner="Loading torch and looking for a GPU...")
def _devices() -> list[DeviceInfo]:
    return backend.available_devices()


@st.cache_resource(max_entries=64, show_spinner=False)
def _parity(rows: tuple, device: str, dtype: str, row: int) -> parity.Parity:
    """Shared between sessions, never mutated."""
    return parity.parity(np.array(rows), device, dtype, row=row)


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(inputs: tuple, scale_up: benchmark.ScaleUp | None) -> slides.Lesson:
    rows, device, dtype, token, tokens, label, shape = inputs
    return slides.slides(_parity(rows, device, dtype, token), tokens, token, label, shape, scale_up)


def _load_preset() -> None:
    ss.gpu_text = format_embeddings(token_preset(ss.gpu_preset).x)
    ss.gpu_token = 0


def _default_shape() -> dict[str, int]:
    """The benchmark's sizes, from the device: x past its last cache, so the default run times
    the memory (benchmark.suggested_shape), in float32."""
    shape = benchmark.suggested_shape(_devices()[0].name) or FALLBACK_SHAPE
    return {key: value for (key, *_), value in zip(SIZES, shape, strict=True)}


def _init_state() -> None:
    """Every input's value when neither the visitor nor a link has set it."""
    preset = ss.setdefault("gpu_preset", DEFAULT_PRESET)
    defaults = {
        "gpu_device": "auto",
        "gpu_dtype": "float32",
        "gpu_text": format_embeddings(token_preset(preset).x),
        "gpu_token": 0,
        "gpu_slide": 0,
    }
    shape = _default_shape()
    for key, value in (defaults | shape).items():
        ss.setdefault(key, value)
    for key, name, _, lo, hi in SIZES:
        ui.within(key, lo, hi, shape[key], f"The {name}")


def _resolved() -> str:
    return _devices()[0].name if ss.gpu_device == "auto" else ss.gpu_device


def _check_device(names: dict[str, str]) -> None:
    """A link's device this machine lacks, or a dtype the device lacks, falls back to auto or
    float32 with a notice."""
    auto = _devices()[0]
    if ss.gpu_device not in ("auto", *names):
        st.warning(
            f"This link asks for the {plain(ss.gpu_device.split(':')[0])} device, which this "
            f"machine does not have: the page uses auto ({plain(auto.label)}) instead.",
            icon=":material/link_off:",
        )
        ss.gpu_device = "auto"
    if ss.gpu_dtype not in backend.supported_dtypes(_resolved()):
        st.warning(
            f"{plain(ss.gpu_dtype)} is not supported on {plain(names[_resolved()])}: the page "
            "uses float32 instead.",
            icon=":material/info:",
        )
        ss.gpu_dtype = "float32"


# ---------------------------------------------------------------- the sections' inputs


def _device_inputs() -> None:
    names = {d.name: d.label for d in _devices()}
    auto = _devices()[0]
    device_col, dtype_col = st.columns(2)
    device_col.radio(
        "Device",
        ["auto", *names],
        format_func=lambda n: f"auto ({names[auto.name]})" if n == "auto" else names[n],
        key="gpu_device",
        on_change=ui.rerun_app,  # the page above checks the dtype against the new device
        horizontal=True,
        persist_state=KEEP,
    )
    dtype_col.radio(
        "dtype",
        backend.supported_dtypes(_resolved()),
        key="gpu_dtype",
        horizontal=True,
        persist_state=KEEP,
    )


def _size_for_memory(shape: tuple[int, int, int]) -> None:
    for (key, *_), value in zip(SIZES, shape, strict=True):
        ss[key] = value


def _request_run(shape: tuple[int, int, int], device: str) -> None:
    ss.gpu_run_request = (shape, device, ss.gpu_dtype)


def _run_benchmark(shape: tuple[int, int, int], device: str, dtype: str) -> None:
    """Wait in the server's heavy-work line, showing the place, time in the
    worker process, then rerun the page so the lesson shows the new timings."""
    line = ui.Line()
    try:
        with (
            st.spinner(
                f"Benchmark on {device}: at most {benchmark.DEADLINE_S:g} s once its turn comes..."
            ),
            ui.turn_aside(),
        ):  # the run waits for the worker process
            result = benchmark.run_scale_up(
                *shape, device, dtype, owner=ui.visitor(), on_wait=line.on_wait
            )
    except InputError as err:  # BusyError too: refused a place in line
        line.refused(str(err))
        return
    ss.gpu_scale_up = result
    ss.gpu_run_note = line.done()
    st.rerun()


def _benchmark_inputs() -> None:
    """The sizes and the Run button: one run at a time in the whole server, first come first
    served, within caps and a deadline."""
    for col, (key, name, _, lo, hi) in zip(st.columns(3), SIZES, strict=True):
        col.number_input(name, min_value=lo, max_value=hi, step=1, key=key, persist_state=KEEP)
    shape = tuple(int(ss[key]) for key, *_ in SIZES)
    device, dtype = _resolved(), ss.gpu_dtype
    suggested = benchmark.suggested_shape(device, dtype)
    if suggested is not None and suggested != shape:
        st.button(
            "Size it past the cache",
            key="gpu_fit",
            icon=":material/memory:",
            on_click=_size_for_memory,
            args=(suggested,),
            help=f"{' x '.join(map(str, suggested))}: x {benchmark.MEMORY_MULTIPLE} times the "
            "device's last cache, so the timings are the memory's",
        )
    try:
        numel = benchmark.check_size(*shape, device, dtype)
    except InputError as err:
        ui.show_error(err)
        numel = None
    else:
        threads = f", on {benchmark.CPU_THREADS} CPU thread" if device == "cpu" else ""
        measures = memory.level(numel * ITEMSIZE[dtype], memory.device_memory(device))
        policy = (
            f" {numel:,} elements of at most {benchmark.element_cap(device, dtype):,} on "
            f"{device} in {dtype}, in at most {benchmark.MAX_ROWS:,} rows. One benchmark runs "
            "at a time in the whole server, first come first served, in a worker process beside "
            f"the server{threads}; each stops at {benchmark.DEADLINE_S:g} s, warm-up included."
        )
        # on a slide, the finding alone: the button says what to do, and room is short
        st.caption(plain(measures.finding if ui.presenting() else measures.text + policy))
    if note := ss.pop("gpu_run_note", None):
        st.caption(note)
    st.button(
        "Run the benchmark",
        key="gpu_run",
        icon=":material/speed:",
        disabled=not numel,
        on_click=_request_run,
        args=(shape, device),
    )
    if request := ss.pop("gpu_run_request", None):
        _run_benchmark(*request)
    if ss.get("gpu_scale_up") is None:
        st.caption("Press the button to time the sizes above.")


def _exports() -> None:
    """The parity table as CSV, and as JSON with the input and both outputs."""
    rows, device, dtype, token, *_ = ss.gpu_inputs
    ui.exports(gpu_export.exports(_parity(rows, device, dtype, token), token))


# ---------------------------------------------------------------- the page

ui.page_setup(slides.TITLE)
ui.open_link(PAGE, FIELDS)
_init_state()
worker_notice()
devices = _devices()
names = {d.name: d.label for d in devices}
if not ui.presenting():
    ui.title(slides.TITLE, slides.INTRO)
    ui.predict_toggle("gpu_quiz")
    if devices[0].kind == "cpu":
        st.info(
            "**No GPU on this machine**: torch found no CUDA and no Apple MPS device, so "
            "everything on this page runs on the CPU. The lessons hold all the same; the "
            "timings are the CPU's.",
            icon=":material/memory:",
        )
    else:
        st.success(f"GPU found: {plain(devices[0].label)} ({devices[0].name}).")
_check_device(names)
if not ui.presenting():  # the slides show the results; the input boxes stay off them
    preset_col, text_col = st.columns([1, 2])
    with preset_col:
        ui.preset_choice(
            "Preset", TOKEN_PRESETS, "gpu_preset", on_change=_load_preset, persist_state=KEEP
        )
    with text_col:
        ui.embeddings_box("gpu_text", 150)
x = ui.last_good("gpu_good_x", lambda: parse_embeddings(ss.gpu_text), token_preset("hello").x)
preset = token_preset(ss.gpu_preset)
tokens = tuple(preset.labels) if np.array_equal(x, preset.x) else tuple(default_labels(x.shape[0]))
if ss.gpu_token not in range(len(tokens)):
    st.warning(
        f"Token {ss.gpu_token + 1} is not in the input ({len(tokens)} tokens): the steps show "
        "token 1.",
        icon=":material/info:",
    )
    ss.gpu_token = 0
if not ui.presenting():
    ui.token_choice(preset_col, "Token shown in the steps", "gpu_token", tokens)
rows = tuple(map(tuple, x.tolist()))


def _build() -> slides.Lesson:
    """The lesson for the inputs in session state; a section's input reruns only the lesson."""
    device = _resolved()
    shape = tuple(int(ss[key]) for key, *_ in SIZES)
    ss.gpu_inputs = (rows, device, ss.gpu_dtype, ss.gpu_token, tokens, names[device], shape)
    return _slides(ss.gpu_inputs, ss.get("gpu_scale_up"))


ui.lesson_view(
    _build,
    page=PAGE,
    slide_key="gpu_slide",
    fields=FIELDS,
    controls={slides.DEVICE: _device_inputs, slides.SCALE: _benchmark_inputs},
    quiz_key="gpu_quiz",
    after=_exports,
)
