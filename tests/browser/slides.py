"""What a projector shows: measuring a presenter-mode slide in the DOM.

`measure` returns the facts the presenter tests assert on a slide: how far its content reaches
below the screen, what sticks out at the right edge, and the smallest text, table cell and
chart text on it. `fit_on_projectors` measures one slide at every projector size by resizing
the window: Streamlit's server never learns the window's size, so a slide drawn at one size
and resized is the slide a projector of the other size shows, without running it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Page

PROJECTORS = (
    {"width": 1024, "height": 768},
    {"width": 1280, "height": 720},
    {"width": 1920, "height": 1080},
)
MIN_TEXT_PX = 16  # text, table cells and heatmap numbers
MIN_CHART_TEXT_PX = 12
SETTLE_POLL_MS = 100
SETTLE_TIMEOUT_S = 20.0

MEASURE_JS = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const vw = window.innerWidth, vh = window.innerHeight;
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  let bottom = 0;
  const wide = [];
  for (const e of main.querySelectorAll('*')) {
    if (!visible(e)) continue;
    // inside a chart's SVG, shapes are clipped to the chart (bars from 0 on a log axis reach
    // far below it): the chart's own box counts, its clipped parts do not
    if (e.closest('svg') && !e.matches('svg.main-svg')) continue;
    const r = e.getBoundingClientRect();
    bottom = Math.max(bottom, r.bottom);
    // KaTeX's MathML copy and a formula's copy for screen readers are clipped out of sight,
    // and KaTeX's root signs are wide SVG paths clipped by their box: none is drawn past the edge
    const unseen = '.katex-mathml, .lnlab-sr-only, .katex svg, [data-testid="stTooltipIcon"]';
    if (e.closest(unseen)) continue;
    if (r.right > vw + 1) {
      const t = e.closest('[data-testid]');
      wide.push(`${e.tagName} in ${t ? t.dataset.testid : '?'} to ${Math.round(r.right)}`);
    }
  }
  const cut = [];
  const boxes = '.katex, .lnlab-formula, .lnlab-table-wrap, [data-testid="stMarkdownContainer"]';
  for (const e of main.querySelectorAll(boxes)) {
    if (visible(e) && e.scrollWidth > e.clientWidth + 1) cut.push(e.textContent.slice(0, 60));
  }
  const scroller = document.querySelector('[data-testid="stMain"]');
  let smallestText = 999, smallestWhat = '';
  for (const e of main.querySelectorAll('p, li, td, th, h1, h2, h3, label, span, div')) {
    if (!visible(e) || e.closest('.katex, svg, [data-testid="stTooltipIcon"]')) continue;
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const size = parseFloat(getComputedStyle(e).fontSize);
    if (size < smallestText) {
      smallestText = size;
      smallestWhat = e.textContent.trim().slice(0, 40);
    }
  }
  let smallestChart = 999, smallestCell = 999;
  for (const t of main.querySelectorAll('.main-svg text')) {
    if (!t.textContent.trim() || !visible(t)) continue;
    const size = parseFloat(getComputedStyle(t).fontSize);
    smallestChart = Math.min(smallestChart, size);
    if (t.closest('.heatmaplayer, .textpoint')) smallestCell = Math.min(smallestCell, size);
  }
  return {
    overflowY: Math.max(0, Math.round(bottom - vh), scroller.scrollHeight - scroller.clientHeight),
    wide, cut, smallestText, smallestWhat, smallestChart, smallestCell,
  };
}"""


@dataclass(frozen=True)
class SlideFit:
    overflow_y: int  # px of content below the screen
    wide: list[str]  # elements whose right edge is past the screen
    cut: list[str]  # formulas, tables or text cut (scrolling sideways)
    smallest_text: float
    smallest_what: str
    smallest_chart: float  # 999 when no chart text
    smallest_cell: float  # heatmap numbers; 999 when none

    def problems(self) -> list[str]:
        out = []
        if self.overflow_y > 0:
            out.append(f"scrolls {self.overflow_y} px")
        if self.wide:
            out.append(f"past the right edge: {self.wide[:3]}")
        if self.cut:
            out.append(f"cut at the right: {self.cut[:3]}")
        if self.smallest_text < MIN_TEXT_PX:
            out.append(f"text {self.smallest_text} px: {self.smallest_what!r}")
        if self.smallest_chart < MIN_CHART_TEXT_PX:
            out.append(f"chart text {self.smallest_chart} px")
        if self.smallest_cell < MIN_TEXT_PX:
            out.append(f"heatmap numbers {self.smallest_cell} px")
        return out


def measure(page: Page) -> SlideFit:
    m = page.evaluate(MEASURE_JS)
    return SlideFit(
        m["overflowY"],
        m["wide"],
        m["cut"],
        m["smallestText"],
        m["smallestWhat"],
        m["smallestChart"],
        m["smallestCell"],
    )


# What moves while a resized page settles: the window, the content's height, each chart's box
# and the width its drawing was made for.
LAYOUT_JS = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const charts = [...main.querySelectorAll('[data-testid="stPlotlyChart"]')].map(c => {
    const svg = c.querySelector('.main-svg');
    return [Math.round(c.getBoundingClientRect().width), svg ? svg.getAttribute('width') : null];
  });
  return {vw: window.innerWidth, vh: window.innerHeight, height: main.scrollHeight, charts};
}"""


def settle(page: Page) -> None:
    """Return once the layout holds still: after a resize, Plotly redraws each chart for its
    new width a moment later. So every chart's drawing must be as wide as its box, and two
    looks a polling interval apart must agree (past the deadline, the test measures as is)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    last = page.evaluate(LAYOUT_JS)
    while time.monotonic() < deadline:
        page.wait_for_timeout(SETTLE_POLL_MS)  # the polling interval of a bounded loop
        now = page.evaluate(LAYOUT_JS)
        if now == last and all(abs(box - float(w)) <= 2 for box, w in now["charts"] if w):
            return
        last = now


def size_name(size: dict[str, int]) -> str:
    return f"{size['width']}x{size['height']}"


def fit_on_projectors(
    page: Page,
    sizes: tuple[dict[str, int], ...] = PROJECTORS,
    screenshot: Path | None = None,
    check: Callable[[Page], list[str]] | None = None,
) -> dict[str, list[str]]:
    """The slide on screen measured at each size: the problems of each size that has any.

    It starts at the window's present size and leaves the window at the last one measured,
    so stepping through slides resizes twice per slide, not three times; `screenshot` is
    taken, and `check` (axe, say) adds its problems, at the first of `sizes`."""
    now = page.viewport_size
    order = sorted(sizes, key=lambda size: size != now)  # the present size first
    problems = {}
    for size in order:
        if size != page.viewport_size:
            page.set_viewport_size(size)
        settle(page)
        fit = measure(page).problems()
        if check and size == sizes[0]:
            fit += check(page)
        if fit:
            problems[size_name(size)] = fit
        if screenshot and size == sizes[0]:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=screenshot)
    return problems
