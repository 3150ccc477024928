"""Formulas as MathML (lnlab.teach.mathml): every formula every lesson writes on the hard
inputs, drawn whole (no LaTeX command left as text), and cut only where a line may break."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest
from claims.test_claims import PAIRS, _built

from lnlab.teach.latex import power
from lnlab.teach.mathml import mathml, pieces
from lnlab.teach.steps import STEPS

M = "{http://www.w3.org/1998/Math/MathML}"


def _formulas() -> set[str]:
    found = {step.formula for step in STEPS}
    for lab, case in PAIRS:
        for lesson in _built(lab, case)[0]:
            for s in lesson.sections:
                found.update((*s.formulas, *s.worked, *(latex for _, latex in s.definitions)))
    return found


FORMULAS = sorted(_formulas())


def _drawn(tex: str) -> tuple[ET.Element, list[ET.Element]]:
    """The whole <math> of `tex`'s span (for screen readers) and its pieces (for the eye), as
    the page draws them from data-mathml."""
    span = ET.fromstring(mathml(tex))
    assert span.tag == "span" and span.get("class") == "lnlab-math"
    assert span.get("data-tex") == span.text == tex.strip()
    heard, seen = ET.fromstring(f"<p>{span.get('data-mathml')}</p>")
    assert heard.get("class") == "lnlab-sr-only" and seen.get("aria-hidden") == "true"
    [whole] = heard
    return whole, list(seen)


def _maths(tex: str) -> list[ET.Element]:
    whole, maths = _drawn(tex)
    return [whole, *maths]


def test_the_corpus_has_the_formulas_of_every_lab():
    assert len(FORMULAS) > 300
    assert any(r"\allowbreak" in f for f in FORMULAS) and any(r"\sqrt" in f for f in FORMULAS)


@pytest.mark.parametrize("tex", FORMULAS)
def test_every_formula_is_drawn_whole(tex: str):
    maths = _maths(tex)
    assert maths and all(m.tag == f"{M}math" for m in maths)
    text = "".join("".join(m.itertext()) for m in maths)
    assert "\\" not in text, f"a command drawn as text: {text!r}"


def test_a_formula_breaks_after_equals_and_plus_at_the_top_level_only():
    assert pieces(r"\mu = \tfrac{1}{4}\big(2 + 4\big) = 3") == [
        r"\mu =",
        r" \tfrac{1}{4}\big(2 +",
        r" 4\big) =",
        " 3",
    ]
    assert pieces(r"\sqrt{a + b} = \left(c + d\right)") == [
        r"\sqrt{a + b} =",
        r" \left(c + d\right)",
    ]
    assert pieces(r"[1,\allowbreak\ 2,\allowbreak\ 3]") == ["[1,", r"\ 2,", r"\ 3]"]
    assert pieces("x") == ["x"]


def test_the_pieces_are_the_formula():
    def bare(tex: str) -> str:
        return re.sub(r"\s+", "", tex.replace(r"\allowbreak", ""))

    for tex in FORMULAS:
        assert bare("".join(pieces(tex))) == bare(tex)


def test_the_latex_is_kept_escaped():
    tex = r'a < b, \text{"c"}'
    assert f'data-tex="{html.escape(tex)}"' in mathml(tex)
    assert ET.fromstring(mathml(tex)).get("data-tex") == tex


def test_a_number_raised_to_a_power_is_one_base():
    assert [power(v, 2) for v in (3.0, -2.0, 1e8, 2.5e7)] == [
        "3^{2}",
        "(-2)^{2}",
        "(10^{8})^{2}",
        r"(2.5 \times 10^{7})^{2}",
    ]
    assert power(2.0, 10) == "2^{10}"


@pytest.mark.parametrize(
    "tex",
    [
        r"\text{<img src=x onerror=alert(1)>}",
        r"\href{javascript:alert(1)}{x}",
        r"\color{red}{x} + \mathcolor{red}{y}",
        r'\text{"><script>alert(1)</script>}',
    ],
)
def test_nothing_but_presentation_mathml_passes(tex: str):
    for math in _maths(tex):
        for e in math.iter():
            assert e.tag.startswith(M), e.tag
            assert not {"href", "mathcolor", "style"} & set(e.attrib), e.attrib
            assert not any(a.startswith("on") for a in e.attrib), e.attrib


def test_a_formula_that_cannot_be_written_shows_its_latex():
    whole, maths = _drawn(r"10^{8}^2 = x")  # a double superscript: not LaTeX
    assert whole.findtext(f"{M}mtext") == "10^{8}^2 = x"
    assert maths[0].findtext(f"{M}mtext") == "10^{8}^2 ="
    assert maths[1].findtext(f"{M}mrow/{M}mi") == "x"


def test_a_sign_is_part_of_its_number_and_a_minus_between_is_an_operation():
    whole, _ = _drawn(r"(-0.2) + x - 1 = -3 + (a) - 4 + [1,\ -5]")
    assert [n.text for n in whole.iter(f"{M}mn")] == [
        "\u22120.2",
        "1",
        "\u22123",
        "4",
        "1",
        "\u22125",
    ]
    assert [o.text for o in whole.iter(f"{M}mo")].count("\u2212") == 2
