"""Training lab: a tiny Transformer trained with each normalization, side by side.

The lesson (lnlab.labs.training.lesson) is drawn one section at a time by ui.lesson_view; the
run's settings and the Train button are the first section's inputs. Training runs in a
worker process, one run at a time in the server, cached per configuration
(lnlab.labs.training.worker); the settings live in the URL, so a link gives the same curves.
"""

from __future__ import annotations

import streamlit as st

from lnlab import ui
from lnlab.core.errors import InputError
from lnlab.core.parse import short_number
from lnlab.labs.training import config as cfg
from lnlab.labs.training import export as tr_export
from lnlab.labs.training import lesson as slides
from lnlab.labs.training.model import VARIANTS
from lnlab.labs.training.worker import LAB
from lnlab.teach.links import Field, Param
from lnlab.teach.markdown import plain
from lnlab.ui.line import worker_notice
from lnlab.ui.training import train

PAGE = "training"
KEEP = ui.KEEP
DEFAULT = cfg.TrainConfig()
DEFAULTS = {
    "tr_variants": list(DEFAULT.variants),
    "tr_layers": DEFAULT.layers,
    "tr_lr": DEFAULT.lr,
    "tr_warmup": DEFAULT.warmup,
    "tr_padding": DEFAULT.padding,
    "tr_steps": DEFAULT.steps,
    "tr_seed": DEFAULT.seed,
    "tr_slide": 0,
    "tr_quiz": False,
}
PERCENTS = tuple(str(round(100 * p)) for p in cfg.PADDINGS)
FIELDS = (
    Field(
        Param("var", "text", max_chars=40),
        "tr_variants",
        lambda text: text.split(","),
        ",".join,
    ),
    Field(Param("layers", "int", lo=cfg.MIN_LAYERS, hi=cfg.MAX_LAYERS), "tr_layers"),
    Field(
        Param("lr", "choice", choices=tuple(map(short_number, cfg.LEARNING_RATES))),
        "tr_lr",
        float,
        short_number,
    ),
    Field(Param("warmup", "bool"), "tr_warmup"),
    Field(
        Param("pad", "choice", choices=PERCENTS),
        "tr_padding",
        lambda p: int(p) / 100,
        lambda share: str(round(100 * share)),
    ),
    Field(Param("steps", "int", lo=cfg.MIN_STEPS, hi=cfg.MAX_STEPS), "tr_steps"),
    Field(Param("seed", "int", lo=0, hi=cfg.MAX_SEED), "tr_seed"),
    Field(Param("s", "int", lo=1, hi=7), "tr_slide", lambda s: s - 1, lambda i: i + 1),
    Field(Param("q", "bool"), "tr_quiz"),
)

ss = st.session_state


def _init_state() -> None:
    """Defaults, and a notice for any value no widget would send (a crafted link or message)."""
    for key, value in DEFAULTS.items():
        ss.setdefault(key, value)
    variants = ss.tr_variants
    if not isinstance(variants, list) or not set(variants) <= set(VARIANTS):
        ui.show_error(InputError(f"unknown variants {plain(str(variants)[:40])}"))
        ss.tr_variants = DEFAULTS["tr_variants"]
    if ss.tr_lr not in cfg.LEARNING_RATES:
        ss.tr_lr = DEFAULTS["tr_lr"]
    if ss.tr_padding not in cfg.PADDINGS:
        ss.tr_padding = DEFAULTS["tr_padding"]
    for key, low, high, what in (
        ("tr_layers", cfg.MIN_LAYERS, cfg.MAX_LAYERS, "The number of blocks"),
        ("tr_steps", cfg.MIN_STEPS, cfg.MAX_STEPS, "The number of steps"),
        ("tr_seed", 0, cfg.MAX_SEED, "The seed"),
    ):
        ui.within(key, low, high, DEFAULTS[key], what)


def _config() -> cfg.TrainConfig:
    """The checked configuration on screen (InputError over a cap or with no variant)."""
    return cfg.TrainConfig(
        variants=tuple(ss.tr_variants),
        layers=int(ss.tr_layers),
        lr=float(ss.tr_lr),
        warmup=bool(ss.tr_warmup),
        padding=float(ss.tr_padding),
        steps=int(ss.tr_steps),
        seed=int(ss.tr_seed),
    )


def _ask_to_train() -> None:
    ss.tr_train = True
    ui.rerun_app()  # the run and its progress bar are drawn above the lesson


def _settings() -> None:
    """The run's settings and the Train button (on a slide, the variants as text: the
    chooser's chips are too small for a projector)."""
    if ui.presenting():
        st.markdown("Variants: " + ", ".join(map(slides.label, ss.tr_variants)))
    else:
        st.pills(
            "Variants",
            list(VARIANTS),
            selection_mode="multi",
            format_func=slides.label,
            key="tr_variants",
            persist_state=KEEP,
        )
    left, middle, right = st.columns(3)
    left.number_input(
        "Blocks", cfg.MIN_LAYERS, cfg.MAX_LAYERS, step=1, key="tr_layers", persist_state=KEEP
    )
    middle.radio(
        "Learning rate",
        cfg.LEARNING_RATES,
        format_func=short_number,
        key="tr_lr",
        horizontal=True,
        persist_state=KEEP,
    )
    right.radio(
        "Padding share",
        cfg.PADDINGS,
        format_func=lambda p: f"{p:.0%}",
        key="tr_padding",
        horizontal=True,
        persist_state=KEEP,
    )
    left.toggle("Warm-up", key="tr_warmup", persist_state=KEEP)
    middle.number_input(
        "Steps", cfg.MIN_STEPS, cfg.MAX_STEPS, step=10, key="tr_steps", persist_state=KEEP
    )
    right.number_input("Seed", 0, cfg.MAX_SEED, step=1, key="tr_seed", persist_state=KEEP)
    try:
        config = _config()
    except InputError as err:
        ui.show_error(err)
        return
    cached = LAB.cached(config) is not None
    st.button(
        "Trained (cached)" if cached else "Train",
        key="tr_run",
        icon=":material/model_training:",
        disabled=cached,
        on_click=_ask_to_train,
    )
    st.caption(
        f"{config.trained_runs} runs of {config.steps} steps. One run at a time in the whole "
        "server, in pieces of a few seconds that let other visitors' heavy work go between "
        "them; each configuration is trained once and kept for everyone."
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(config: cfg.TrainConfig, trained: bool) -> slides.Lesson:
    """Shared between sessions, never mutated; rebuilt once the configuration is trained."""
    return slides.slides(config, LAB.cached(config) if trained else None)


def _build() -> slides.Lesson:
    try:
        config = _config()
    except InputError:
        config = DEFAULT
    return _slides(config, LAB.cached(config) is not None)


def _exports() -> None:
    """The runnable script that reproduces the run on screen."""
    try:
        config = _config()
    except InputError:
        return
    ui.exports(tr_export.exports(config))


# ---------------------------------------------------------------- the page

ui.page_setup(slides.TITLE)
ui.open_link(PAGE, FIELDS)
_init_state()
worker_notice()
if not ui.presenting():
    ui.title(slides.TITLE, slides.INTRO)
    ui.predict_toggle("tr_quiz")
if ss.pop("tr_train", False):
    try:
        train(_config())
    except InputError as err:
        ui.show_error(err)
ui.lesson_view(
    _build,
    page=PAGE,
    slide_key="tr_slide",
    fields=FIELDS,
    controls={slides.SETUP: _settings},
    quiz_key="tr_quiz",
    after=_exports,
)
