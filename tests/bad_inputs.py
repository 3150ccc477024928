"""The bad inputs every page must survive: one row per input, by page and by the way it comes in.

Ways in (`path`):

* "text": a text area or text box, set as the server receives it. `max_chars` is enforced by
  the browser only, so a crafted message can send more; the pages' own caps must hold.
* "grid": an st.data_editor edit, sent as the browser's JSON widget message.
* "state": a widget value already in session state when the page first runs, as a link
  decoder or a crafted message could leave it (numbers out of their widget's range).
* "url": the query parameters of a link opened in a fresh session.

`says` is a phrase the error or warning must contain (compared without markdown escapes and
case); None means the input is valid and must be accepted with no error. `known` marks a
failure of the page as it is today: the case runs as xfail(strict=True) with that reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
IMG_WORD = "<img/src=x/onerror=alert(1)>"  # one word: the padding page splits sentences on spaces
THOUSAND_COLUMNS = ", ".join(["1"] * 1000)
LONG_NUMBER = "7" * 100_000  # one 100k-digit number: overflows to inf
LONG_LETTERS = "x" * 200_000  # over the 110k-character cap (max_chars cuts it, or the parser)
LONG_ROW = "1 " * 50_000  # 100k characters: 50,000 numbers in one row
NINE_SENTENCES = "\n".join(f"sentence {i}" for i in range(1, 10))
SEVENTEEN_WORDS = " ".join(["word"] * 17)


@dataclass(frozen=True)
class Bad:
    """One bad input and what the page must do with it."""

    name: str  # the test id: short, never the input itself
    page: str  # the file in pages/, without ".py"
    path: str  # "text", "grid", "state" or "url"
    key: str  # the widget key ("url": unused)
    value: Any  # text, grid edits, a number, or query parameters
    says: str | None  # a phrase of the message; None: valid input, no error
    number: float | None = None  # the key number on screen afterwards; None: the default one
    keeps_number: bool = True  # False: the input changes the key number unpredictably
    literal: str = ""  # user text the page must show as typed: in a table, never as HTML
    known: str = ""  # a known failure of the page: xfail(strict=True) with this reason


def _edit(row: int, column: str, value: Any) -> dict:
    return {"edited_rows": {str(row): {column: value}}}


CASES: tuple[Bad, ...] = (
    # ------------------------------------------------------------ step-through: text boxes
    Bad("st-text-pipes", "step_through", "text", "st_text", "1|2|3", "separate numbers"),
    Bad("st-text-letters", "step_through", "text", "st_text", "a, b, c", "is not a number"),
    Bad("st-text-empty", "step_through", "text", "st_text", "", "at least one number"),
    Bad("st-text-blank", "step_through", "text", "st_text", "  \n\t \n", "at least one number"),
    Bad("st-text-ragged", "step_through", "text", "st_text", "1, 2, 3\n4, 5", "same number"),
    Bad("st-text-1000-cols", "step_through", "text", "st_text", THOUSAND_COLUMNS, "too many"),
    Bad("st-text-1e309", "step_through", "text", "st_text", "2, 4, 1e309", "not finite"),
    Bad("st-text-1e-400", "step_through", "text", "st_text", "2, 4, 1e-400", "too small"),
    Bad("st-text-nan", "step_through", "text", "st_text", "2, nan, 6", "not finite"),
    Bad("st-text-minus-inf", "step_through", "text", "st_text", "-inf, 1", "not finite"),
    Bad("st-text-arabic-digit", "step_through", "text", "st_text", "٣, 4", "digits 0-9"),
    Bad("st-text-fullwidth-digit", "step_through", "text", "st_text", "３, 4", "digits 0-9"),
    Bad("st-text-unicode-minus", "step_through", "text", "st_text", "−1, 2", None, number=0.5),
    Bad("st-text-emoji", "step_through", "text", "st_text", "😀, 1", "is not a number"),
    Bad(
        "st-text-script", "step_through", "text", "st_text", SCRIPT, "not a number", literal=SCRIPT
    ),
    Bad("st-text-100k-digits", "step_through", "text", "st_text", LONG_NUMBER, "not finite"),
    Bad("st-text-200k-chars", "step_through", "text", "st_text", LONG_LETTERS, "the limit"),
    Bad(
        "st-labels-script",
        "step_through",
        "text",
        "st_labels",
        SCRIPT,
        None,
        literal=SCRIPT,
    ),
    Bad(
        "st-labels-img",
        "step_through",
        "text",
        "st_labels",
        IMG,
        None,
        literal=IMG,
    ),
    Bad("st-labels-emoji", "step_through", "text", "st_labels", "😀🎉", None, literal="😀🎉"),
    Bad("st-labels-too-many", "step_through", "text", "st_labels", "a, b, c", "3 labels"),
    Bad("st-labels-100k", "step_through", "text", "st_labels", "L" * 100_000, "characters"),
    Bad("st-labels-control", "step_through", "text", "st_labels", "a\x00b", "control character"),
    Bad("st-gamma-double-semicolon", "step_through", "text", "st_gamma", "1;;2", "2 values"),
    Bad("st-gamma-1e309", "step_through", "text", "st_gamma", "1e309", "not finite"),
    Bad("st-gamma-ragged", "step_through", "text", "st_gamma", "1 2\n3", "single list"),
    Bad("st-beta-letters", "step_through", "text", "st_beta", "b", "is not a number"),
    Bad("st-beta-nan", "step_through", "text", "st_beta", "nan", "not finite"),
    Bad("st-dy-letters", "step_through", "text", "st_dy", "a, b, c, d", "is not a number"),
    Bad("st-dy-two-of-four", "step_through", "text", "st_dy", "1, 2", "2 values"),
    Bad("st-dy-inf", "step_through", "text", "st_dy", "1, inf, 2, 3", "not finite"),
    Bad("st-dy-50k-numbers", "step_through", "text", "st_dy", LONG_ROW, "limit is 64"),
    Bad("st-dy-script", "step_through", "text", "st_dy", SCRIPT, "not a number"),
    # ------------------------------------------------------------ step-through: the grid
    Bad("st-grid-letters", "step_through", "grid", "st_grid", _edit(0, "f2", "abc"), "f2"),
    Bad("st-grid-cleared", "step_through", "grid", "st_grid", _edit(0, "f2", None), "empty"),
    Bad("st-grid-inf", "step_through", "grid", "st_grid", _edit(0, "f2", math.inf), "f2"),
    Bad(
        "st-grid-70-rows",
        "step_through",
        "grid",
        "st_grid",
        {"added_rows": [{"f1": 1}] * 70},
        "at most 64 rows",
    ),
    Bad(
        "st-grid-delete-all",
        "step_through",
        "grid",
        "st_grid",
        {"deleted_rows": [0]},
        "at least one token",
    ),
    Bad(
        "st-grid-row-99",
        "step_through",
        "grid",
        "st_grid",
        _edit(99, "f1", 1),
        "could not be applied",
    ),
    Bad(
        "st-grid-unknown-column",
        "step_through",
        "grid",
        "st_grid",
        _edit(0, "f999", 1),
        "f999",
    ),
    # ------------------------------------------------------------ step-through: numbers, links
    Bad(
        "st-eps-negative",
        "step_through",
        "state",
        "st_eps",
        -1.0,
        "eps",
    ),
    Bad(
        "st-eps-nan",
        "step_through",
        "state",
        "st_eps",
        math.nan,
        "eps",
    ),
    Bad("st-url-pipes", "step_through", "url", "", {"x": "1|2|3"}, "separate numbers"),
    Bad("st-url-eps-negative", "step_through", "url", "", {"eps": "-1"}, "eps"),
    Bad("st-url-dy-two-of-four", "step_through", "url", "", {"dy": "1,2"}, "dy has 2 values"),
    Bad("st-url-dy-nan", "step_through", "url", "", {"dy": "nan"}, "dy"),
    Bad("st-url-gamma-nan", "step_through", "url", "", {"gamma": "nan"}, "not finite"),
    Bad("st-url-token-99", "step_through", "url", "", {"tok": "99"}, "tok"),
    Bad(
        "st-url-labels-script",
        "step_through",
        "url",
        "",
        {"labels": SCRIPT},
        None,
        literal=SCRIPT,
    ),
    Bad("st-url-100k", "step_through", "url", "", {"x": "1," * 50_000}, "limit"),
    # ------------------------------------------------------------ padding: text boxes
    Bad("pad-sent-empty", "padding", "text", "pad_sentences", "", "at least one sentence"),
    Bad("pad-sent-blank", "padding", "text", "pad_sentences", " \n\t\n ", "at least one sentence"),
    Bad("pad-sent-9-lines", "padding", "text", "pad_sentences", NINE_SENTENCES, "at most 8"),
    Bad("pad-sent-17-words", "padding", "text", "pad_sentences", SEVENTEEN_WORDS, "at most 16"),
    Bad("pad-sent-100k", "padding", "text", "pad_sentences", "w" * 100_000, "characters"),
    Bad("pad-sent-control", "padding", "text", "pad_sentences", "Hi\x00 there", "control"),
    Bad(
        "pad-sent-script",
        "padding",
        "text",
        "pad_sentences",
        f"Hi Nitish {SCRIPT}\nHow are you today",
        None,
        keeps_number=False,
        literal=SCRIPT,
    ),
    Bad(
        "pad-sent-img-emoji",
        "padding",
        "text",
        "pad_sentences",
        f"{IMG_WORD} 😀\nHow are you today",
        None,
        keeps_number=False,
        literal=IMG_WORD,
    ),
    Bad("pad-other-empty", "padding", "text", "pad_other_text", "   ", "empty"),
    Bad("pad-other-two-lines", "padding", "text", "pad_other_text", "a\nb", "single line"),
    # ------------------------------------------------------------ padding: the grid
    Bad("pad-grid-letters", "padding", "grid", "pad_words", _edit(0, "f1", "abc"), "f1"),
    Bad("pad-grid-cleared", "padding", "grid", "pad_words", _edit(0, "f1", None), "empty"),
    Bad("pad-grid-inf", "padding", "grid", "pad_words", _edit(0, "f1", math.inf), "between"),
    Bad("pad-grid-5000", "padding", "grid", "pad_words", _edit(0, "f2", 5000), "between"),
    Bad(
        "pad-grid-unknown-column",
        "padding",
        "grid",
        "pad_words",
        _edit(0, "f999", 1),
        "f999",
    ),
    # ------------------------------------------------------------ padding: numbers, links
    Bad(
        "pad-eps-nan",
        "padding",
        "state",
        "pad_eps",
        math.nan,
        "eps",
    ),
    Bad(
        "pad-batch-1e9",
        "padding",
        "state",
        "pad_batch",
        10**9,
        "batch",
    ),
    Bad("pad-average-nan", "padding", "state", "pad_average", math.nan, "average"),
    Bad("pad-url-eps-negative", "padding", "url", "", {"eps": "-1"}, "eps"),
    Bad("pad-url-batch-1e9", "padding", "url", "", {"batch": str(10**9)}, "batch"),
    Bad("pad-url-100k", "padding", "url", "", {"s": "w" * 100_000}, "limit"),
    Bad("pad-url-control", "padding", "url", "", {"s": "a\x00b"}, "control"),
    Bad(
        "pad-url-script",
        "padding",
        "url",
        "",
        {"s": f"{SCRIPT} Nitish\nHow are you today"},
        None,
        keeps_number=False,
        literal=SCRIPT,
    ),
    # ------------------------------------------------------------ conventions: text boxes
    Bad("cv-text-pipes", "conventions", "text", "cv_text", "1|2|3", "separate numbers"),
    Bad("cv-text-unicode-minus", "conventions", "text", "cv_text", "−1, 2", None, number=0.5),
    Bad("cv-text-arabic-digit", "conventions", "text", "cv_text", "٣, 1", "digits 0-9"),
    Bad("cv-text-200k-chars", "conventions", "text", "cv_text", LONG_LETTERS, "the limit"),
    Bad("cv-axes-ragged", "conventions", "text", "cv_axes_text", "1, 2\n3", "same number"),
    Bad("cv-axes-1e309", "conventions", "text", "cv_axes_text", "1e309, 1", "not finite"),
    Bad("ck-x-letters", "conventions", "text", "ck_x", "a b c", "is not a number"),
    Bad("ck-x-100k", "conventions", "text", "ck_x", LONG_ROW, "the limit"),
    Bad("ck-mean-pipes", "conventions", "text", "ck_mean", "1|2", "separate numbers"),
    Bad("ck-mean-nan", "conventions", "text", "ck_mean", "nan", "not finite"),
    Bad("ck-std-emoji", "conventions", "text", "ck_std", "😀", "is not a number"),
    Bad("ck-var-minus-inf", "conventions", "text", "ck_var", "-inf", "not finite"),
    Bad("ck-out-ragged", "conventions", "text", "ck_out", "1, 2\n3", "same number"),
    Bad("ck-out-img", "conventions", "text", "ck_out", IMG, "not a number", literal=IMG),
    # ------------------------------------------------------------ conventions: links
    Bad("cv-url-pipes", "conventions", "url", "", {"x": "1|2|3"}, "separate numbers"),
    Bad("cv-url-1000-cols", "conventions", "url", "", {"x": THOUSAND_COLUMNS}, "too many"),
    Bad("cv-url-arabic-token", "conventions", "url", "", {"tok": "٣"}, "whole number"),
    Bad("cv-url-repeated", "conventions", "url", "", {"x": ["1", "2"]}, "more than once"),
    Bad("cv-url-version", "conventions", "url", "", {"v": "2"}, "version"),
    Bad("cv-url-40-params", "conventions", "url", "", {f"p{i}": "1" for i in range(40)}, "32"),
    Bad("cv-url-unknown", "conventions", "url", "", {"zzz": "1"}, "unknown parameter"),
    # ------------------------------------------------------------ gpu
    Bad("gpu-text-pipes", "gpu", "text", "gpu_text", "1|2|3", "separate numbers"),
    Bad("gpu-text-empty", "gpu", "text", "gpu_text", "", "at least one number"),
    Bad("gpu-text-1000-cols", "gpu", "text", "gpu_text", THOUSAND_COLUMNS, "too many"),
    Bad("gpu-text-1e309", "gpu", "text", "gpu_text", "1e309", "not finite"),
    Bad("gpu-text-script", "gpu", "text", "gpu_text", SCRIPT, "not a number", literal=SCRIPT),
    Bad("gpu-text-fullwidth-minus", "gpu", "text", "gpu_text", "－1, 2", None, number=0.5),
    Bad(
        "gpu-batch-1e12",
        "gpu",
        "state",
        "gpu_batch",
        10**12,
        "batch",
    ),
    Bad("gpu-url-batch-1e12", "gpu", "url", "", {"batch": str(10**12)}, "batch"),
    Bad("gpu-url-device", "gpu", "url", "", {"dev": "quantum"}, "not one of"),
    Bad("gpu-url-nan", "gpu", "url", "", {"x": "nan,1"}, "not finite"),
    # ------------------------------------------------------------ transformer
    Bad(
        "tf-depth-10000",
        "transformer",
        "state",
        "tf_depth",
        10_000,
        "depth",
    ),
    Bad("tf-layers-negative", "transformer", "state", "tf_layers", -5, "between 1 and 96"),
    Bad("tf-url-depth-10000", "transformer", "url", "", {"depth": "10000"}, "depth"),
    Bad(
        "tf-url-norm-script",
        "transformer",
        "url",
        "",
        {"norm": SCRIPT},
        "not one of",
        literal=SCRIPT,
    ),
    Bad("tf-url-layers-nan", "transformer", "url", "", {"layers": "nan"}, "whole number"),
    Bad("tf-url-depth-emoji", "transformer", "url", "", {"depth": "😀"}, "whole number"),
)
