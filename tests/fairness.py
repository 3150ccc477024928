"""Is a question fair? What a slide shows before its answer must not give it away, and the
grader must tell every offered mistake from the answer (issue 21).

Before the answer a slide shows its title, callouts, explanation and formulas, then the
question's stem (lnlab.ui.lesson.show_section); the finding, worked formulas, numbers, figure
and detail come after. A give-away is, before the answer:

* any formula: on a slide that asks, a formula is the rule that computes the answer;
* the answer's value: a number there that shows as the answer does (for a short answer such as
  "0" or "5", only where something is said to equal it: "= 0", "sums to 0"), settings such as
  "β = 0" or "D − 1 = 0" aside;
* the rule that tells the answer from an offered mistake (GIVE_AWAY: "divide by D" where
  dividing by D - 1 is offered, "√(σ² + ε)" where forgetting ε is, ...), in the stem too.

The lesson's context line (the example's inputs, above every slide) is not searched: it holds
the numbers a question is asked about.
"""

from __future__ import annotations

import math
import re

from lnlab.teach.lesson import Lesson, Section
from lnlab.teach.quiz import RIGHT, Question, diagnose, options

_D_RULE = (
    r"divid\w*( the \w+)? by \$?D\$?(?!\s*[−-])",
    r"\\[dt]?frac\{1\}\{D\}",
    r"\b1\s*/\s*D\b",
    r"not \$?D\s*[−-]\s*1",
    r"Bessel",
)
_EPS_RULE = (
    r"\\sqrt\{\\sigma\^2\s*\+\s*\\epsilon\}",
    r"√\(?σ²\s*\+\s*ε\)?",
    r"(inside|under|in) the (square )?root",
    r"to the variance",
)
GIVE_AWAY: dict[str, tuple[str, ...]] = {
    "d_minus_1": _D_RULE,
    "no_eps": _EPS_RULE,
    "eps_outside": _EPS_RULE,
    "across_batch": (
        r"own (\$?D\$? |\d+ )?features",
        r"across (its|a|the) row",
        r"one token at a time",
        r"token's own",
        r"PAD (zeros|rows) included",  # Batch Norm's column holds them, a token's row does not
        r"zeros pull",
    ),
    "pad_as_tokens": (
        r"real tokens only",
        r"statistics come from the real",
        r"PAD (rows|positions|zeros) (are )?(left out|excluded|ignored|not counted)",
    ),
    "gamma_beta_swap": (
        r"\\gamma_?\{?i?\}?\s*\\hat\{x\}_?\{?i?\}?\s*\+\s*\\beta",
        r"γ\s*x̂\S*\s*\+\s*β",
        r"γ\W*(\w+\W+){0,3}scales",
        r"β\W*(\w+\W+){0,3}shifts",
    ),
    "post_ln_uniform": (
        r"(large|larger|largest) (in the blocks )?(next to|near) the output",
        r"grow\w* towards the output",
    ),
    "placement_irrelevant": (r"post-LN's .{0,40}larger than pre-LN's", r"\dx pre-LN's"),
    "depth_irrelevant": (r"part further", r"shrinks? with depth", r"the deeper"),
    "bn_ignores_padding": (
        r"padd\w+ (ones |positions |zeros )?included",
        r"PAD zeros included",
        r"counts? the (padding|PAD)",
        r"zeros pull",
        r"share of padding moves",
    ),
    "running_is_batch": (r"running (statistics|averages)",),
}
_INPUT = re.compile(r"\b(?:[γβεD]|D\s*[−-]\s*1)\s*=\s*[−-]?[\d.]+(?:e[−+-]?\d+)?")
_NUMBER = re.compile(r"(?<![\w.])[−-]?\d+(?:\.\d+)?(?:e[−+-]?\d+)?(?![\w.])")
_STATED = r"(=|sums? to|is|are|equals?|becomes?)\s*\$?\s*"


def before_answer(section: Section) -> str:
    """Everything a slide shows before its question is answered, the stem last."""
    parts = [section.title, *(c.text for c in section.callouts), section.explanation]
    parts += list(section.formulas)
    if section.question is not None:
        parts.append(section.question.prompt)
    return "\n".join(parts)


def give_aways(section: Section) -> list[str]:
    """What on `section` before its answer gives the answer away (empty: nothing)."""
    q = section.question
    if q is None:
        return []
    found = [f"a formula before the answer: {f}" for f in section.formulas]
    shown = before_answer(section)
    for w in q.wrong:
        for pattern in GIVE_AWAY.get(w.misconception, ()):
            if match := re.search(pattern, shown):
                found.append(f"the rule against {w.misconception}: {match.group()!r}")
    if not q.choices:
        found += _value_shown(q, _INPUT.sub("", shown))
    return found


def _value_shown(q: Question, shown: str) -> list[str]:
    answer = q.text(q.answer)
    if answer in ("NaN", "∞", "−∞"):
        stated = re.search(_STATED + re.escape(answer), shown)
        return [f"the answer {answer} stated: {stated.group()!r}"] if stated else []
    digits = sum(ch.isdigit() for ch in answer.lstrip("0.-−"))
    if digits < 3:  # a short number: only where something is said to equal it
        stated = re.search(_STATED + re.escape(answer) + r"(?![\d.])", shown)
        return [f"the answer {answer} stated: {stated.group()!r}"] if stated else []
    found = []
    for token in _NUMBER.findall(shown):
        value = float(token.replace("−", "-"))
        if math.isfinite(value) and q.text(value) == answer:
            found.append(f"the answer's value {answer} shown as {token}")
    return found


def indistinct(q: Question) -> list[str]:
    """Mistakes the grader cannot tell from the answer or from each other (empty: none):
    every option must read back as its own group, typed as shown or at full precision."""
    texts = options(q)
    found = [] if len(set(texts)) == len(texts) else [f"options print alike: {texts}"]
    groups = {q.text(q.answer): RIGHT, **{q.text(w.answer): w.misconception for w in q.wrong}}
    for text, group in groups.items():
        if diagnose(q, text, picked=True).group != group:
            found.append(f"option {text} is not marked {group}")
    if q.choices:
        return found

    def typed(v: float) -> str:  # every digit: "1.0000000000000000e+00", not "1.0"
        return f"{float(v):.16e}"

    exact = {typed(q.answer): RIGHT} if math.isfinite(float(q.answer)) else {}
    exact |= {typed(w.answer): w.misconception for w in q.wrong}
    for text, group in exact.items():
        if diagnose(q, text).group != group:
            found.append(f"{text} typed is not marked {group}")
    for w in q.wrong if math.isfinite(float(q.answer)) else ():
        if not abs(float(w.answer) - float(q.answer)) > q.unit:
            found.append(f"{w.misconception} within one unit of the answer")
    return found


def unfair(lesson: Lesson) -> list[str]:
    """Every give-away and indistinct option of a lesson's questions, named by section."""
    return [
        f"{lesson.key}/{s.key}: {problem}"
        for s in lesson.sections
        if s.question is not None
        for problem in (*give_aways(s), *indistinct(s.question))
    ]
