"""Formulas as MathML, which every browser draws itself: no formula library on a page.

A formula is LaTeX throughout the app (lnlab.teach.latex, the lessons); `mathml` writes it as
HTML for the page: one `<math>` per piece, so that a long formula wraps like text. A piece ends
after a top-level `=`, `+` or `\\approx` and at `\\allowbreak` (the places KaTeX breaks inline
math, and where lnlab.teach.latex lets a vector break); never inside braces or between
`\\left` and `\\right` (no formula uses an environment, `\\begin ... \\end`). The pieces are
hidden from screen readers, which read the whole formula as one `<math>` instead.

The MathML travels in the `data-mathml` attribute of a span that holds the LaTeX as its text:
st.html keeps HTML only (its sanitizer drops MathML), and the app's assist script
(lnlab/ui/assets/assist.js) puts the MathML in place as the span arrives, before it is painted.
So it is checked here: presentation elements and layout attributes only (no link, colour or
script can pass), and a formula the converter cannot write shows as its LaTeX. The span's
`data-tex` is the formula's LaTeX: the browser's lessons find a formula drawn this way by it
(static/lnlab/math.mjs), and tests read it.
"""

from __future__ import annotations

import functools
import html
import re
import xml.etree.ElementTree as ET

from latex2mathml.converter import convert

BREAK = r"\allowbreak"
NS = "http://www.w3.org/1998/Math/MathML"
# fmt: off
ELEMENTS = frozenset((
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup",
    "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mstyle", "mpadded", "mphantom",
    "menclose", "mtable", "mtr", "mtd",
))
ATTRIBUTES = frozenset((
    "display", "mathvariant", "displaystyle", "scriptlevel", "stretchy", "fence", "separator",
    "lspace", "rspace", "minsize", "maxsize", "accent", "accentunder", "linethickness", "width",
    "height", "depth", "form", "movablelimits", "largeop", "symmetric", "columnalign",
    "rowalign", "columnspacing", "rowspacing", "notation",
))
# fmt: on
_TOKEN = re.compile(r"\\[a-zA-Z]+|\\.|.", re.DOTALL)
_BREAKS_AFTER = {"=", "+", r"\approx"}
_OPEN, _CLOSE = {"{", r"\left"}, {"}", r"\right"}
_CLOSING = {")", "]", "|", "}", "\u2016", "\u27e9"}  # after these a minus is an operation

_MO, _MN, _MTEXT = (f"{{{NS}}}{name}" for name in ("mo", "mn", "mtext"))

ET.register_namespace("", NS)


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


def _checked(element: ET.Element) -> None:
    """Check that `element` and everything in it is presentation MathML (ValueError if not),
    dropping every attribute but the layout ones, and write each negative number as one
    number (the converter writes its sign as an operator, which the browser spaces: "( − 0.2)")."""
    for e in element.iter():
        namespace, _, name = e.tag.rpartition("}")
        if namespace != "{" + NS or name not in ELEMENTS:
            raise ValueError(f"not presentation MathML: {e.tag}")
        for attribute in list(e.attrib):
            if attribute not in ATTRIBUTES:
                del e.attrib[attribute]
        _signs(e)


def _opens(before: ET.Element | None) -> bool:
    """Whether a minus after `before` starts a number: first, or after an operator other than a
    closing bracket, or after a space."""
    if before is None:
        return True
    if before.tag == _MO:
        return before.text not in _CLOSING
    return before.tag == _MTEXT and not (before.text or "").strip()


def _signs(parent: ET.Element) -> None:
    """Fold each sign among `parent`'s children into the number after it (see _checked)."""
    kids = list(parent)
    for before, kid, after in zip([None, *kids], kids, kids[1:], strict=False):  # up to the last
        sign = kid.tag == _MO and (kid.text or "").strip() in ("-", "\u2212")
        if sign and after.tag == _MN and _opens(before):
            after.text = "\u2212" + (after.text or "")
            parent.remove(kid)


def _math(tex: str) -> str:
    """One <math> of `tex`, checked; its LaTeX as text if it cannot be written."""
    try:
        element = ET.fromstring(convert(tex))
        _checked(element)
        return ET.tostring(element, encoding="unicode")
    except Exception:  # the converter's own errors, ParseError, ValueError: shown as LaTeX
        return f'<math xmlns="{NS}"><mtext>{html.escape(tex)}</mtext></math>'


@functools.lru_cache(maxsize=4096)
def mathml(tex: str) -> str:
    """`tex` as HTML: a span (class lnlab-math, data-tex its LaTeX, data-mathml the whole
    formula for screen readers and its pieces for the eye) holding the LaTeX until the page
    draws the MathML."""
    tex = tex.strip()
    whole = _math(tex.replace(BREAK, ""))
    seen = "".join(_math(p) for p in pieces(tex))
    drawn = f'<span class="lnlab-sr-only">{whole}</span><span aria-hidden="true">{seen}</span>'
    return (
        f'<span class="lnlab-math" data-tex="{html.escape(tex)}" '
        f'data-mathml="{html.escape(drawn)}">{html.escape(tex)}</span>'
    )
