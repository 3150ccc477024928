"""Formulas as MathML, which every browser draws itself: no formula library on a page.

A formula is LaTeX throughout the app (lnlab.teach.latex, the lessons); `mathml` writes it as
HTML for the page: one `<math>` per piece, so that a long formula wraps like text. A piece ends
after a top-level `=`, `+` or `\\approx` and at `\\allowbreak` (the places KaTeX breaks inline
math, and where lnlab.teach.latex lets a vector break); never inside braces or between
`\\left` and `\\right`.

The pieces travel in the `data-mathml` attribute of a span that holds the LaTeX as its text:
st.html keeps HTML only (its sanitizer drops MathML), and the app's assist script
(lnlab/ui/assets/assist.js) puts the MathML in place as the span arrives, before it is painted.
The span's `data-tex` is the formula's LaTeX: the browser's lessons find a formula drawn this
way by it (static/lnlab/math.mjs), and tests read it.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

BREAK = r"\allowbreak"
_TOKEN = re.compile(r"\\[a-zA-Z]+|\\.|.", re.DOTALL)
_BREAKS_AFTER = {"=", "+", r"\approx"}
_OPEN, _CLOSE = {"{", r"\left"}, {"}", r"\right"}


def pieces(tex: str) -> list[str]:
    """`tex` cut where a line may break: after a top-level =, + or \\approx, and at
    \\allowbreak (which is dropped); never inside braces or \\left ... \\right."""
    out: list[str] = []
    piece: list[str] = []
    depth = 0
    for token in _TOKEN.findall(tex):
        if token == BREAK and depth == 0:
            out.append("".join(piece))
            piece = []
            continue
        if token != BREAK:
            piece.append(token)
        depth += (token in _OPEN) - (token in _CLOSE)
        if depth == 0 and token in _BREAKS_AFTER:
            out.append("".join(piece))
            piece = []
    out.append("".join(piece))
    return [p for p in out if p.strip()]


def mathml(tex: str) -> str:
    """`tex` as HTML: a span (class lnlab-math, data-tex its LaTeX, data-mathml its MathML
    pieces) holding the LaTeX until the page draws the MathML."""
    tex = tex.strip()
    maths = "".join(convert(p) for p in pieces(tex))
    return (
        f'<span class="lnlab-math" data-tex="{html.escape(tex)}" '
        f'data-mathml="{html.escape(maths)}">{html.escape(tex)}</span>'
    )
