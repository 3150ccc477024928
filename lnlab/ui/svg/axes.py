"""Text and axes for the static figures: Plotly's markup as plain lines, tick labels, and an
axis's scale (linear, log or category) from data units to pixels."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

GLYPH = 0.56  # average glyph width in ems: what a text box is sized by (no font metrics here)
LINE = 1.25  # line height in ems
TICK_SPACING = {"x": 70, "y": 45}  # px between a linear axis's ticks, about
MINUS = "\u2212"  # Plotly's minus sign
_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def esc(text: object) -> str:
    """Text for SVG markup (attributes too)."""
    return html.escape(str(text), quote=True)


def lines_of(text: object) -> list[str]:
    """Plotly's text markup as plain lines: split at <br>, other tags dropped, entities read
    (a label Plotly shows as `a<b` arrives as `a&lt;b`)."""
    return [html.unescape(_TAG.sub("", part)) for part in _BREAK.split(str(text))]


def width_of(text: str, size: float) -> float:
    """About how wide `text` is at font size `size`, in px."""
    return len(text) * size * GLYPH


def finite(value: Any) -> float | None:
    """`value` as a float, or None for None, text and non-finite numbers."""
    if value is None or isinstance(value, str | bytes):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def tick_text(value: float, step: float) -> str:
    """A linear tick's label: the decimals its step needs, Plotly's minus sign."""
    if abs(value) < abs(step) * 1e-9:
        return "0"
    size = max(abs(value), abs(step))
    if size >= 1e6 or abs(step) < 1e-5:
        text = f"{value:.3g}"
    else:
        decimals = max(0, -math.floor(math.log10(abs(step)) + 1e-9))
        text = f"{value:.{decimals}f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text  # 1.5, then 1, as Plotly
    return text.replace("-", MINUS)


def nice_step(span: float, count: float) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about `count` ticks over `span` (a
    few more rather than fewer, as Plotly's)."""
    raw = span / max(count, 2.0)
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw * 0.7)


@dataclass(frozen=True)
class Tick:
    at: float  # axis units
    text: str  # plain text
    power: str = ""  # a log axis's exponent, written 10 with it raised


@dataclass
class Axis:
    """One of a figure's axes: "x", "x2", "y", ... with its layout entry."""

    name: str
    spec: dict[str, Any] = field(default_factory=dict)
    kind: str = "linear"  # "linear", "log" or "category"
    categories: list[str] = field(default_factory=list)
    lo: float = 0.0  # the range in axis units: log10 on a log axis, the index on a category one
    hi: float = 1.0
    a: float = 0.0  # the pixel of `lo` (x: left; y: bottom, unless reversed)
    b: float = 1.0  # the pixel of `hi`

    @property
    def letter(self) -> str:
        return self.name[0]

    @property
    def domain(self) -> tuple[float, float]:
        lo, hi = self.spec.get("domain") or (0.0, 1.0)
        return float(lo), float(hi)

    @property
    def visible(self) -> bool:
        return self.spec.get("visible", True) is not False

    @property
    def labelled(self) -> bool:
        return self.visible and self.spec.get("showticklabels", True) is not False

    @property
    def reversed(self) -> bool:
        return self.spec.get("autorange") == "reversed"

    @property
    def title(self) -> str:
        title = self.spec.get("title")
        text = title.get("text") if isinstance(title, dict) else title
        return str(text) if text else ""

    def units(self, value: Any) -> float | None:
        """A data value in axis units (a category's index), or None where it cannot be drawn."""
        if self.kind == "category" and isinstance(value, str):
            try:
                return float(self.categories.index(value))
            except ValueError:
                return None
        number = finite(value)
        if number is None or self.kind != "log":
            return number
        return math.log10(number) if number > 0 else None

    def px(self, value: Any) -> float | None:
        """A data value's pixel."""
        return self.at(self.units(value))

    def at(self, units: float | None) -> float | None:
        """A position in axis units as a pixel."""
        if units is None:
            return None
        span = (self.hi - self.lo) or 1.0
        return self.a + (units - self.lo) / span * (self.b - self.a)

    def fraction(self, f: float) -> float:
        """A share of the axis's length as a pixel ("x domain" references)."""
        lo, hi = sorted((self.a, self.b)) if self.letter == "x" else sorted((self.b, self.a))
        return lo + f * (hi - lo) if self.letter == "x" else hi - f * (hi - lo)

    @property
    def step(self) -> float:
        """One category (or one unit) in pixels."""
        return abs(self.b - self.a) / ((self.hi - self.lo) or 1.0)

    def ticks(self) -> list[Tick]:
        """The labelled ticks: the layout's tickvals, each category, decades on a log axis, or
        a nice step on a linear one."""
        spec = self.spec
        if spec.get("tickvals") is not None:
            texts = spec.get("ticktext") or [str(v) for v in spec["tickvals"]]
            pairs = zip(spec["tickvals"], texts, strict=False)
            return [
                Tick(u, " ".join(lines_of(t)))
                for v, t in pairs
                if (u := self.units(v)) is not None and self._inside(u)
            ]
        if self.kind == "category":
            return [Tick(float(i), " ".join(lines_of(c))) for i, c in enumerate(self.categories)]
        length = abs(self.b - self.a)
        if self.kind == "log":
            return self._decades(length)
        step = nice_step(self.hi - self.lo, length / TICK_SPACING[self.letter])
        first = math.ceil(self.lo / step - 1e-9)
        count = math.floor(self.hi / step + 1e-9) - first + 1
        return [Tick((first + k) * step, tick_text((first + k) * step, step)) for k in range(count)]

    def _inside(self, u: float) -> bool:
        low, high = sorted((self.lo, self.hi))
        margin = (high - low) * 1e-6
        return low - margin <= u <= high + margin

    def _decades(self, length: float) -> list[Tick]:
        power = self.spec.get("exponentformat") == "power"
        low, high = math.ceil(self.lo - 1e-9), math.floor(self.hi + 1e-9)
        if high - low >= 1:
            stride = max(1, math.ceil((high - low + 1) / max(length / 40, 2)))
            return [
                Tick(float(k), "10" if power else _decade(k), str(k).replace("-", MINUS) * power)
                for k in range(low, high + 1, stride)
            ]
        ticks = []  # under two decades: 1, 2 and 5 times each power of ten inside
        for k in range(math.floor(self.lo) - 1, math.ceil(self.hi) + 1):
            for m in (1, 2, 5):
                u = math.log10(m) + k
                if self._inside(u):
                    ticks.append(Tick(u, f"{m * 10.0**k:g}".replace("-", MINUS)))
        return ticks

    def tick_width(self, size: float) -> float:
        """The widest tick label's width in px (a y axis's labels stand left of it)."""
        if not self.labelled:
            return 0.0
        widths = [width_of(t.text + t.power, size) for t in self.ticks()]
        return max(widths, default=0.0)


def _decade(k: int) -> str:
    return f"{10.0**k:g}".replace("-", MINUS)


def shown(trace: dict[str, Any]) -> bool:
    """Whether a trace is drawn (not hidden, nor in the legend alone)."""
    return trace.get("visible", True) not in (False, "legendonly")


def is_text(values: Iterable[Any]) -> bool:
    """Whether coordinates are categories (text that is not a number), as Plotly guesses."""
    for v in values:
        if isinstance(v, str):
            try:
                float(v)
            except ValueError:
                return True
    return False


def autorange(values: Sequence[float], *, log: bool, bars: bool, pad: float = 0.05) -> list[float]:
    """A range over `values` (axis units) with `pad` of its span either side; bars keep 0 on a
    linear axis and add room only away from it."""
    if not values:
        return [0.0, 1.0]
    lo, hi = min(values), max(values)
    if bars and not log:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = hi - lo
    if span == 0:
        span = abs(hi) or 1.0
        return [lo - span / 2, hi + span / 2]
    low = lo if bars and not log and lo == 0 else lo - pad * span
    high = hi if bars and not log and hi == 0 else hi + pad * span
    return [low, high]


@dataclass(frozen=True)
class Sizes:
    """Font sizes in px: text and legend, the title, tick labels, a heatmap's numbers."""

    font: float = 13
    title: float = 16
    ticks: float = 13
    cells: float = 13


@dataclass
class Frame:
    """The plot area in px (inside the margins): what "paper" coordinates span."""

    left: float
    right: float
    top: float
    bottom: float

    def x(self, f: float) -> float:
        return self.left + f * (self.right - self.left)

    def y(self, f: float) -> float:
        return self.bottom - f * (self.bottom - self.top)
