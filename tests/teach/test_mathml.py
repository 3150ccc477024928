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


def _maths(tex: str) -> list[ET.Element]:
    """The MathML pieces of `tex`'s span, as the page draws them."""
    span = ET.fromstring(mathml(tex))
    assert span.tag == "span" and span.get("class") == "lnlab-math"
    assert span.get("data-tex") == span.text == tex.strip()
    return list(ET.fromstring(f"<p>{span.get('data-mathml')}</p>"))


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
        "3^2",
        "(-2)^2",
        "(10^{8})^2",
        r"(2.5 \times 10^{7})^2",
    ]
