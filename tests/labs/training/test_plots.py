"""The training lab's charts: a variant keeps its colour, dash and marker on every chart."""

from __future__ import annotations

from helpers import validated

from lnlab.labs.training.plots import ORDER, lines


def _styles(fig) -> dict[str, tuple]:
    return {t.name: (t.line.color, t.line.dash, t.marker.symbol) for t in validated(fig).data}


def test_a_variant_looks_the_same_on_every_chart():
    xy = ([0, 1], [1.0, 0.5])
    every = _styles(lines(dict.fromkeys(ORDER, xy), "all", "step", "loss"))
    assert len(set(every.values())) == len(ORDER)  # seven variants, seven looks
    for shown in (ORDER[1:3], ORDER[4:6], (ORDER[2], ORDER[5], ORDER[1]), ORDER[6:]):
        some = _styles(lines(dict.fromkeys(shown, xy), "some", "step", "loss"))
        assert some == {name: every[name] for name in shown}


def test_series_named_after_a_variant_take_its_look_then_distinct_ones():
    xy = ([0, 1], [1.0, 0.5])
    post = ORDER[1]
    styles = _styles(lines({f"{post}, warm-up": xy, f"{post}, no warm-up": xy}, "w", "s", "l"))
    every = _styles(lines(dict.fromkeys(ORDER, xy), "all", "step", "loss"))
    assert styles[f"{post}, warm-up"] == every[post]
    assert styles[f"{post}, no warm-up"] != every[post]
