"""Conventions and checker: one vector through six conventions, which axes, and a checker of
the numbers tutorials print.

The lesson (lnlab.labs.conventions.lesson) is drawn one section at a time by ui.lesson_view; each
section's input boxes are drawn inside it (its control). A box's edit reruns the page, which
keeps every box's last valid text (`*_good`) and its error (`*_error`, shown under the box).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from lnlab import ui
from lnlab.core.errors import InputError
from lnlab.core.parse import MAX_CHARS, MAX_TOKENS, format_embeddings, parse_embeddings
from lnlab.labs.conventions import lesson as slides
from lnlab.labs.conventions.cases import CHECK_CASES, OLD_KEYS, case_key
from lnlab.labs.conventions.checker import CheckResult, check_claims
from lnlab.labs.conventions.compare import (
    AxesComparison,
    ConventionComparison,
    compare_axes,
    compare_conventions,
    comparison_table,
)
from lnlab.labs.conventions.export import exports
from lnlab.teach.links import Field, Param
from lnlab.teach.markdown import plain
from lnlab.teach.presets import token_preset

PAGE = "conventions"
KEEP = ui.KEEP
CASES = {case.key: case for case in CHECK_CASES}
CLAIM_FIELDS = ("x", "mean", "std", "var", "out")
ss = st.session_state
DEFAULTS = {
    "cv_text": format_embeddings(token_preset("hello").x[:1]),
    "cv_token": 0,
    "cv_axes_text": format_embeddings(token_preset("notebook-2x3").x),
    "cv_slide": 0,
    "ck_case": CHECK_CASES[0].key,
}
# The checker's boxes travel as typed (a pasted tensor printout stays one); a box over its cap
# is left out of the link rather than making the link unreadable.
CLAIM_PARAMS = {
    field: Param(
        f"c{field}", "text", max_chars=10_000 if field in ("x", "out") else 2_000, max_lines=200
    )
    for field in CLAIM_FIELDS
}
SECTION_COUNT = 8
FIELDS = (
    Field(Param("x", "matrix"), "cv_text", format_embeddings, parse_embeddings),
    Field(Param("tok", "int", lo=1, hi=MAX_TOKENS), "cv_token", lambda n: n - 1, lambda i: i + 1),
    Field(Param("axes", "matrix"), "cv_axes_text", format_embeddings, parse_embeddings),
    Field(Param("case", "choice", choices=(*CASES, *OLD_KEYS)), "ck_case", case_key),
    *(
        Field(CLAIM_PARAMS[field], f"ck_{field}", from_widget=CLAIM_PARAMS[field].decode)
        for field in CLAIM_FIELDS
    ),
    Field(Param("s", "int", lo=1, hi=SECTION_COUNT), "cv_slide", lambda i: i - 1, lambda i: i + 1),
    Field(Param("all", "bool"), f"{PAGE}_all"),
    Field(Param("q", "bool"), "cv_quiz"),
)


# ---------------------------------------------------------------- cached computations


@st.cache_data(max_entries=64, show_spinner=False)
def _conventions(text: str) -> ConventionComparison:
    return compare_conventions(parse_embeddings(text))


@st.cache_data(max_entries=64, show_spinner=False)
def _axes(text: str) -> AxesComparison:
    return compare_axes(parse_embeddings(text))


@st.cache_data(max_entries=64, show_spinner=False)
def _check(fields: tuple[str, ...], labels: tuple[str, ...] | None) -> CheckResult:
    return check_claims(*fields, labels=labels)


@st.cache_resource(max_entries=64, show_spinner=False)
def _slides(inputs: tuple, token: int) -> slides.Lesson:
    """The lesson for (vector text, sentence text, claim texts, case labels), all valid."""
    text, axes_text, fields, labels = inputs
    return slides.slides(_conventions(text), token, _axes(axes_text), _check(fields, labels))


# ---------------------------------------------------------------- state


def _claims() -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The claim boxes' texts, and the case's row labels while its vector is unchanged."""
    case = CASES[ss.ck_case]
    return tuple(ss[f"ck_{f}"] for f in CLAIM_FIELDS), case.labels if ss.ck_x == case.x else None


def _keep_good(name: str, value: Any, compute: Callable[[], object]) -> None:
    """Remember `value` as box `name`'s last valid input if `compute` accepts it; otherwise
    keep the last one and its error, which the box's section shows."""
    try:
        compute()
    except InputError as err:
        ss[f"{name}_error"] = err
        return
    ss[f"{name}_good"] = value
    ss.pop(f"{name}_error", None)


def _init_state() -> None:
    """Defaults for whatever a link did not set, then every box's last valid input."""
    for key, value in DEFAULTS.items():
        ss.setdefault(key, value)
    for field in CLAIM_FIELDS:  # the claims' defaults are those of the chosen case
        ss.setdefault(f"ck_{field}", getattr(CASES[ss.ck_case], field))
    ss.setdefault("cv_good", DEFAULTS["cv_text"])
    ss.setdefault("cv_axes_good", DEFAULTS["cv_axes_text"])
    ss.setdefault("ck_good", (tuple(getattr(CHECK_CASES[0], f) for f in CLAIM_FIELDS), None))
    _keep_good("cv", ss.cv_text, lambda: _conventions(ss.cv_text))
    _keep_good("cv_axes", ss.cv_axes_text, lambda: _axes(ss.cv_axes_text))
    _keep_good("ck", _claims(), lambda: _check(*_claims()))


def _token_in_range() -> None:
    tokens = parse_embeddings(ss.cv_good).shape[0]
    if ss.cv_token >= tokens:
        st.warning(
            f"Token {ss.cv_token + 1} is not in the input ({tokens} tokens): the charts show "
            "token 1.",
            icon=":material/info:",
        )
        ss.cv_token = 0


def _load_case() -> None:
    """Fill the checker's boxes with the chosen case, exactly as its tutorial wrote them."""
    for field in CLAIM_FIELDS:
        ss[f"ck_{field}"] = getattr(CASES[ss.ck_case], field)
    ui.rerun_app()


# ---------------------------------------------------------------- the sections' boxes


def _box(widget: Callable[..., Any], label: str, key: str, limit: int, **kwargs: Any) -> None:
    """A text box of at most `limit` characters that reruns the page; in presenter mode its
    text, read-only."""
    if ui.presenting():
        st.markdown(f"{label}: " + plain("; ".join(ss[key].splitlines())))
    else:
        ui.text_box(widget, label, key, limit, on_change=ui.rerun_app, persist_state=KEEP, **kwargs)


def _error(name: str) -> None:
    if err := ss.get(f"{name}_error"):
        ui.show_error(err)


def _vector_box() -> None:
    _box(st.text_area, "Token embeddings, one token per row", "cv_text", MAX_CHARS, height=100)
    _error("cv")
    tokens = parse_embeddings(ss.cv_good).shape[0]
    if tokens > 1:
        labels = slides.token_labels(tokens)
        ui.menu(st, "Token in the charts", range(tokens), "cv_token", labels.__getitem__)


def _axes_box() -> None:
    _box(st.text_area, "Tokens of the sentence, one per row", "cv_axes_text", MAX_CHARS, height=90)
    _error("cv_axes")


def _claim_box(widget: Callable[..., Any], label: str, field: str, **kwargs: Any) -> None:
    """A claim's box, as long as its link parameter allows."""
    _box(widget, label, f"ck_{field}", CLAIM_PARAMS[field].max_chars, **kwargs)


def _claim_boxes() -> None:
    """The case picker; off-slide the vector and the claims, as the tutorial wrote them."""
    ui.preset_choice(
        "Ready-made case from the tutorials",
        CHECK_CASES,
        "ck_case",
        on_change=_load_case,
        persist_state=KEEP,
    )
    if ui.presenting():
        return
    left, right = st.columns(2)
    with left:
        _claim_box(st.text_area, "Vector (one row per token)", "x", height=120)
        _claim_box(st.text_area, "Claimed outputs (one per feature, rows as in the vector)", "out")
    with right:
        for field, name in (("mean", "mean"), ("std", "std"), ("var", "variance")):
            _claim_box(st.text_input, f"Claimed {name} of each row", field)
    st.caption("Leave a box blank to skip it.")
    _error("ck")


# ---------------------------------------------------------------- exports


def _exports() -> None:
    """Every convention's numbers as a table, CSV, JSON and a PyTorch script."""
    comparison = _conventions(ss.cv_good)
    labels = slides.token_labels(comparison.x.shape[0])
    with st.expander("Every convention's numbers, token by token"):
        ui.table(comparison_table(comparison, labels))
    ui.exports(exports(comparison, labels))


# ---------------------------------------------------------------- the page

ui.page_setup(slides.TITLE)
ui.open_link(PAGE, FIELDS)
_init_state()
_token_in_range()
if not ui.presenting():
    ui.title(slides.TITLE, slides.INTRO)
    ui.predict_toggle("cv_quiz")
ss.cv_inputs = (ss.cv_good, ss.cv_axes_good, *ss.ck_good)
ui.lesson_view(
    lambda: _slides(ss.cv_inputs, ss.cv_token),
    page=PAGE,
    slide_key="cv_slide",
    fields=FIELDS,
    controls={slides.SIX: _vector_box, slides.AXES: _axes_box, slides.CHECK: _claim_boxes},
    quiz_key="cv_quiz",
    after=_exports,
)
