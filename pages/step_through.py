"""Step through one token: Layer Norm's five steps with your own numbers.

The text box is the source of the embeddings; the grid shows its last valid numbers and an
edit in the grid rewrites the text box. All the math is in lnlab.lesson.token_lesson.

The page's state lives in the URL (FIELDS below). In presenter mode each step is one slide;
with "Predict before you see" on, steps 1, 2, 4 and 5 ask a question before their result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lnlab import lesson as ls
from lnlab import ui
from lnlab.errors import InputError
from lnlab.latex import num
from lnlab.links import Field, Param
from lnlab.markdown import plain
from lnlab.parse import (
    MAX_CHARS,
    MAX_TOKENS,
    format_embeddings,
    parse_embeddings,
    parse_vector,
    short_number,
)
from lnlab.plots import step as plots
from lnlab.presets import TOKEN_PRESETS, token_preset
from lnlab.quiz import Question

PAGE = "step_through"
DEFAULT_PRESET = "token-2468"
EPS_DEFAULT = 1e-5
EPS_MAX = 1.0
VECTOR_CHARS = 2000  # gamma and beta boxes
COLOURS = "orange is negative, purple positive, and every cell prints its number"
TABLE_FORMAT = "%.4g"
SYMBOLS = ("μ", "σ²", "σ_ε", "x̂", "y")  # what each step computes, as table and metric labels
KEEP = "session"  # inputs keep their value while presenter mode hides them, and across pages

ss = st.session_state


# ---------------------------------------------------------------- state


def _preset_inputs(key: str) -> dict[str, Any]:
    """What picking a preset sets: its embeddings and labels, token 1, γ = 1, β = 0, step 1."""
    preset = token_preset(key)
    return {
        "st_text": format_embeddings(preset.x),
        "st_labels": ls.labels_text(preset.labels),
        "st_token": 0,
        "st_gamma": "1",
        "st_beta": "0",
        "st_step": 0,
    }


def _load_preset() -> None:
    ss.update(_preset_inputs(ss.st_preset))


def _init_state() -> None:
    """Defaults for whatever a link did not set. A link's own embeddings without labels get
    t1, t2, ... rather than the preset's labels."""
    defaults = _preset_inputs(ss.setdefault("st_preset", DEFAULT_PRESET))
    if ss.get("st_text", defaults["st_text"]) != defaults["st_text"]:
        defaults["st_labels"] = ""
    defaults |= {"st_eps": EPS_DEFAULT, "st_all": False, "st_quiz": False}
    for key, value in defaults.items():
        ss.setdefault(key, value)
    ss.st_step = ls.clamp_step(ss.st_step)


def _url() -> str:
    """The page's state in the URL (presenter mode aside), to tell a new link from our own."""
    names = sorted(k for k in st.query_params if k != ui.PRESENT_KEY)
    return repr([(k, st.query_params.get_all(k)) for k in names])


def _open_link() -> None:
    """Apply a newly opened link, then check that its parts fit together.

    Each parameter is checked on its own by ui.open_link; a token beyond the embeddings, a
    gamma of the wrong length or labels that do not match the tokens are caught here, and
    open the default example with a notice, as any other bad link does.
    """
    new = _url() not in ("[]", ss.get("st_link_seen"))
    ui.open_link(PAGE, FIELDS)
    _init_state()
    ui.within("st_eps", 0.0, EPS_MAX, EPS_DEFAULT, "Epsilon")
    if not new:
        return
    try:
        ls.lesson_from_text(
            ss.st_text, ss.st_labels, ss.st_token, ss.st_eps, ss.st_gamma, ss.st_beta
        )
    except InputError as err:
        for f in FIELDS:
            ss.pop(f.key, None)
        _init_state()
        st.warning(
            f"This link could not be opened: {plain(str(err))}. "
            "The page opened on its default example instead.",
            icon=":material/link_off:",
        )


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


def _undo(gamma: str, beta: str) -> None:
    ss.st_gamma, ss.st_beta = gamma, beta
    ss.st_step = ls.STEP_COUNT - 1


# ---------------------------------------------------------------- cached computations


@st.cache_data(max_entries=64, show_spinner=False)
def _embeddings(text: str) -> np.ndarray:
    """parse_embeddings, cached: the text box is read on every rerun."""
    return parse_embeddings(text)


@st.cache_data(max_entries=64, show_spinner=False)
def _lesson(inputs: tuple) -> ls.TokenLesson:
    """ls.token_lesson(*inputs): (x, labels, token, eps, gamma, beta), arrays hash by value."""
    return ls.token_lesson(*inputs)


@st.cache_data(max_entries=64, show_spinner=False)
def _questions(inputs: tuple) -> tuple[Question | None, ...]:
    return ls.step_questions(_lesson(inputs))


@st.cache_data(max_entries=64, show_spinner=False)
def _exports(inputs: tuple) -> tuple[str, str, str]:
    """CSV, JSON and the PyTorch script of the lesson."""
    lesson = _lesson(inputs)
    return ls.export_csv(lesson), ls.export_json(lesson), ls.export_script(lesson)


# Figures are shared by every session and never mutated (ui.chart copies before restyling):
# cache_resource hands back the same object, where cache_data would unpickle it every rerun.


@st.cache_resource(max_entries=64, show_spinner=False)
def _bars(inputs: tuple, drawn: int) -> go.Figure:
    lesson = _lesson(inputs)
    return plots.token_bars(lesson.x, lesson.x_hat, lesson.y, lesson.mean, lesson.std, drawn)


@st.cache_resource(max_entries=64, show_spinner=False)
def _heatmap(inputs: tuple, normalized: bool) -> go.Figure:
    lesson = _lesson(inputs)
    z, title = (lesson.trace.x_hat, "Normalized x̂") if normalized else (lesson.trace.x, "Input x")
    return plots.prompt_heatmap(z, lesson.labels, title, lesson.token)


# ---------------------------------------------------------------- small pieces


def _table(frame: pd.DataFrame) -> None:
    """A table with 4 significant digits (1e-17, not 0.0000000000000000100), NaN as "NaN"."""
    numbers = frame.select_dtypes("float").columns
    with_nan = [c for c in numbers if frame[c].isna().any()]
    shown = frame.assign(**{c: frame[c].map(lambda v: ls.fmt(v, 4)) for c in with_nan})
    digits = {
        c: st.column_config.NumberColumn(format=TABLE_FORMAT) for c in numbers if c not in with_nan
    }
    st.dataframe(shown, hide_index=True, column_config=digits)


def _vector(key: str, name: str, d: int, fill: float) -> np.ndarray:
    """gamma or beta from its text box; on bad text the last good one (or `fill`)."""
    v = ui.last_good(
        f"st_good_{name}", lambda: parse_vector(ss[key], d, name=name), np.full(d, fill)
    )
    return v if v.shape == (d,) else np.full(d, fill)


def _revealed(k: int, questions: tuple[Question | None, ...]) -> bool:
    """With predictions on, step k's result shows once every question up to step k is checked.

    The first open question is asked here; step k's own question, once checked, stays on
    screen with its verdict.
    """
    if not ss.st_quiz:
        return True
    for j, question in enumerate(questions[: k + 1]):
        if question is None or (j < k and question.qid in ss.get("quiz_verdicts", {})):
            continue
        if not ui.ask(question):
            st.info("Check your prediction to see this step's result.", icon=":material/lock:")
            return False
    return True


# ---------------------------------------------------------------- the inputs


def _inputs() -> tuple[np.ndarray, list[str]]:
    """The preset, the embeddings (text and grid) and the labels; returns x and the labels."""
    ui.preset_choice(
        "Preset", TOKEN_PRESETS, "st_preset", on_change=_load_preset, persist_state=KEEP
    )
    text_col, grid_col = st.columns(2)
    with text_col:
        st.text_area(
            "Token embeddings: one token per line, numbers separated by commas or spaces",
            key="st_text",
            height=180,
            max_chars=MAX_CHARS,
            help="You can also paste a Python list, np.array(...) or tensor(...) printout.",
            persist_state=KEEP,
        )
        x = _current_x()
        st.text_area(
            "Token labels (optional): one per line",
            key="st_labels",
            height=110,
            max_chars=ls.LABELS_MAX_CHARS,
            help="Leave blank for t1, t2, ... One label a line, so a label may be a comma "
            "(a single line may also list labels separated by commas).",
            persist_state=KEEP,
        )
        labels = _current_labels(len(x))
    with grid_col:
        ss.st_grid_base = (x, labels)
        ui.data_editor(ls.grid_frame(x), key="st_grid", num_rows="dynamic", on_change=_grid_changed)
        try:
            ls.apply_grid_edits(x, labels, ss.get("st_grid", {}))
        except InputError as err:
            ui.show_error(err)
        st.caption(
            "The text box is the source: this grid shows its last valid numbers (one row per "
            "token), and a change here rewrites the text box. Add or delete rows to add or "
            "remove tokens."
        )
    return x, labels


def _current_x() -> np.ndarray:
    """The embeddings in the text box, or the last good ones (shown with an error)."""
    return ui.last_good("st_good_x", lambda: _embeddings(ss.st_text), token_preset(ss.st_preset).x)


def _current_labels(n: int) -> list[str]:
    labels = ui.last_good(
        "st_good_labels", lambda: ls.parse_labels(ss.st_labels, n), ls.default_labels(n)
    )
    return labels if len(labels) == n else ls.default_labels(n)


def _settings(labels: list[str], d: int, presenting: bool) -> tuple[int, float, Any, Any]:
    """Token and ε (also on a slide), γ and β (not on a slide)."""
    if ss.st_token not in range(len(labels)):
        ss.st_token = 0
    token_col, eps_col, gamma_col, beta_col = st.columns(4)
    token = token_col.selectbox(
        "Token",
        range(len(labels)),
        format_func=lambda i: f"{i + 1}: {labels[i]}",
        key="st_token",
        persist_state=KEEP,
    )
    eps = eps_col.number_input(
        "Epsilon ε",
        min_value=0.0,
        max_value=EPS_MAX,
        step=1e-5,
        format="%g",
        key="st_eps",
        help="Added to the variance before the square root. Set it to 0 to see why it is there.",
        persist_state=KEEP,
    )
    if not presenting:
        for col, key, name in (
            (gamma_col, "st_gamma", "γ (gamma)"),
            (beta_col, "st_beta", "β (beta)"),
        ):
            col.text_input(
                f"{name}: one value, or one per feature",
                key=key,
                max_chars=VECTOR_CHARS,
                persist_state=KEEP,
            )
    with gamma_col:
        gamma = _vector("st_gamma", "gamma", d, 1.0)
    with beta_col:
        beta = _vector("st_beta", "beta", d, 0.0)
    return token, float(eps), gamma, beta


# ---------------------------------------------------------------- the five steps


def _steps(lesson: ls.TokenLesson, inputs: tuple, presenting: bool) -> None:
    """The chosen token's steps: one at a time (always on a slide), or all at once."""
    step = ss.st_step
    show_all = ss.st_all and not presenting
    nav = ui.step_buttons("st", "st_step", ls.STEP_COUNT, disabled=show_all)
    if not presenting:
        nav.toggle("Show all steps at once", key="st_all", persist_state=KEEP)
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

    questions = _questions(inputs)
    shown = range(ls.STEP_COUNT) if show_all else [step]
    for k in shown:
        s = lesson.trace.steps[k]
        st.subheader(f"Step {k + 1} of {ls.STEP_COUNT}: {s.title}")
        st.latex(s.formula)
        if not _revealed(k, questions):
            break  # with all steps shown, the later ones wait for this answer too
        st.latex(s.latex)
        value = s.value[lesson.token]
        if value.size == 1:
            st.metric(f"{SYMBOLS[k]} ({s.title.lower()})", ls.fmt(value[0]))
        else:
            _table(ls.vector_frame(SYMBOLS[k], value))
    drawn = shown[-1]
    if ss.st_quiz:
        drawn = min(drawn, ls.revealed_step(questions, ss.get("quiz_verdicts", {})))
    ui.chart(
        _bars(inputs, drawn),
        "st_bars",
        "Left: the token's features as bars, the dashed line at their mean μ and, from step 3, "
        "the band μ ± σ_ε. Right, from step 4: x̂ with its band 0 ± 1, then y = γ x̂ + β.",
    )


# ---------------------------------------------------------------- the check, the undo


def _check_section(lesson: ls.TokenLesson) -> None:
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


def _undo_section(lesson: ls.TokenLesson) -> None:
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
            f"The input is back: y = x for token {lesson.token + 1}, "
            f"largest difference |y − x| = {ls.fmt(lesson.recovery_error, 3)}.",
            icon=":material/check_circle:",
        )
        _table(ls.recovery_frame(lesson))
        st.caption(
            "γ and β are shared by every token, so the other tokens come back only if they "
            "happen to have the same mean and σ_ε."
        )


def _prompt_section(lesson: ls.TokenLesson, inputs: tuple) -> None:
    st.header("The whole prompt at once")
    st.markdown(
        r"Every token is normalized with its own mean and $\sigma_\epsilon$, never with another "
        f"token's. The outlined row is token {lesson.token + 1}."
    )
    for normalized, table, caption in (
        (
            False,
            ls.input_table(lesson),
            f"The input, one row per token ({COLOURS}). The table beside it adds each token's "
            "mean μ and σ_ε.",
        ),
        (
            True,
            ls.normalized_table(lesson),
            f"x̂, one row per token ({COLOURS}). The table shows each row's mean (0) and std "
            "(1, a hair under with ε > 0); a row whose σ_ε is 0 is NaN.",
        ),
    ):
        table_col, heat_col = st.columns(2)
        with table_col:
            _table(table)
        with heat_col:
            name = "normalized" if normalized else "input"
            ui.chart(_heatmap(inputs, normalized), f"st_heat_{name}", caption)


def _exports_section(inputs: tuple) -> None:
    """CSV, JSON and a PyTorch script of every number above."""
    csv_text, json_text, script = _exports(inputs)
    st.header("Take the numbers with you")
    csv_col, json_col, script_col = st.columns(3)
    for col, label, data, name, mime, key, icon in (
        (csv_col, "Trace as CSV", csv_text, "lnlab-steps.csv", "text/csv", "st_dl_csv", "table"),
        (
            json_col,
            "Trace as JSON",
            json_text,
            "lnlab-steps.json",
            "application/json",
            "st_dl_json",
            "data_object",
        ),
        (
            script_col,
            "PyTorch script",
            script,
            "lnlab_steps.py",
            "text/x-python",
            "st_dl_py",
            "code",
        ),
    ):
        col.download_button(
            label,
            data,
            file_name=name,
            mime=mime,
            key=key,
            icon=f":material/{icon}:",
            on_click="ignore",
        )
    st.caption(
        "The CSV has one row per token and feature: x, the token's mean, variance and σ_ε, "
        "then x̂ and y. The JSON holds the same arrays, each step's formula and the settings. "
        "Figures download from their own toolbar."
    )
    with st.expander("The PyTorch script (torch.nn.functional, float64)"):
        st.code(script, language="python")


# ---------------------------------------------------------------- shareable links


def _one_based(i: int) -> int:
    return i + 1


def _zero_based(i: int) -> int:
    return i - 1


def _vector_text(v: np.ndarray) -> str:
    return ", ".join(short_number(a) for a in v)


def _shown(name: str) -> Callable[[Any], Any]:
    """A box's value for the link: what the page shows from it (set in ss.st_shown each run).

    A box with an error shows its last valid input, so the link still opens exactly the
    example on screen; blank labels travel as the t1, t2, ... the page shows for them.
    """
    return lambda _box: ss.st_shown[name]


def _compact(v: np.ndarray) -> np.ndarray:
    """gamma or beta for the link: one value when every feature has the same."""
    return v[:1] if np.all(v == v[0]) else v


FIELDS = (
    Field(Param("preset", "choice", choices=tuple(p.key for p in TOKEN_PRESETS)), "st_preset"),
    Field(Param("x", "matrix"), "st_text", format_embeddings, _shown("x")),
    Field(
        Param("labels", "text", max_chars=ls.LABELS_MAX_CHARS, max_lines=MAX_TOKENS),
        "st_labels",
        from_widget=_shown("labels"),
    ),
    Field(Param("tok", "int", lo=1, hi=MAX_TOKENS), "st_token", _zero_based, _one_based),
    Field(Param("eps", "float", lo=0.0, hi=EPS_MAX), "st_eps"),
    Field(Param("gamma", "vector"), "st_gamma", _vector_text, _shown("gamma")),
    Field(Param("beta", "vector"), "st_beta", _vector_text, _shown("beta")),
    Field(Param("step", "int", lo=1, hi=ls.STEP_COUNT), "st_step", _zero_based, _one_based),
    Field(Param("all", "bool"), "st_all"),
    Field(Param("q", "bool"), "st_quiz"),
)


# ---------------------------------------------------------------- the page

ui.page_setup("Step through one token")
_open_link()
presenting = ui.presenting()

if presenting:
    x = _current_x()
    labels = _current_labels(len(x))
else:
    st.title("Step through one token")
    st.markdown(
        "Layer Norm looks at **one token at a time**: it takes that token's $D$ features, "
        "computes their mean and spread, and rescales them. Enter embeddings (or pick a "
        "preset), choose a token, and walk through the five steps."
    )
    st.toggle(
        "Predict before you see",
        key="st_quiz",
        persist_state=KEEP,
        help="Steps 1, 2, 4 and 5 first ask you to predict their result; your first tries "
        "are scored in the sidebar.",
    )
    x, labels = _inputs()

slide_top = st.container() if presenting else None  # a slide opens on the token's numbers
token, eps, gamma, beta = _settings(labels, x.shape[1], presenting)
inputs = (x, tuple(labels), token, eps, gamma, beta)
lesson = _lesson(inputs)
ss.st_shown = {
    "x": x,
    "labels": ls.labels_text(labels),
    "gamma": _compact(gamma),
    "beta": _compact(beta),
}

with slide_top or st.container():
    st.header(f"Token {token + 1}: {plain(labels[token])}")
    st.markdown(plain(ls.token_summary(lesson)))
_steps(lesson, inputs, presenting)

if not presenting:
    if not ss.st_quiz or ls.revealed_step(_questions(inputs), ss.get("quiz_verdicts", {})) == (
        ls.STEP_COUNT - 1
    ):
        _check_section(lesson)
        _undo_section(lesson)
        _prompt_section(lesson, inputs)
    else:
        st.info(
            "The check, the undo and the whole prompt show this token's numbers: they appear "
            "once every prediction above is checked.",
            icon=":material/lock:",
        )
    _exports_section(inputs)

ui.share_link(PAGE, FIELDS)
ss.st_link_seen = _url()
