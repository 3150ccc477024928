"""A lesson's figure as a static picture: what Plotly draws, with no JavaScript.

A page loads a chart library's code (Plotly's: 1.4 MiB gzipped) the first time it draws a
chart with it; a figure drawn as SVG costs its own few kilobytes and nothing else. So every
lesson figure is drawn here first (lnlab.ui.figures.chart), and the interactive chart, with
its zoom, hover and downloads, is one click away. `render` takes the figure's Plotly JSON
(lnlab.teach.figures builds every figure from plain JSON) and draws the subset of Plotly the
lessons use (lnlab.ui.svg.draw); `picture` puts it in an <img> with the figure's name as its
text alternative.

An <img>, not inline SVG: st.html keeps HTML alone (its sanitizer drops SVG), and inline SVG
in st.markdown costs the page the raw-HTML parser's 56 KiB of JavaScript. An image sees the
page's colour scheme (Streamlit's theme sets it) as its own, so its text and axes take the
theme's text colour; marks keep the figure's colours (chosen to stand 3:1 on both themes,
lnlab.teach.figures).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from lnlab.ui.svg.axes import Sizes, esc
from lnlab.ui.svg.draw import PLAIN, WIDTH, Drawing, render

URL_SAFE = " =:/,.;-_()'!*~@+$?[]{}|^`"  # left as they are in the picture's data: URL


def picture(
    spec: dict[str, Any],
    *,
    alt: str,
    width: int = WIDTH,
    max_height: int | None = None,
    sizes: Sizes = PLAIN,
    uid: str = "fig",
) -> str:
    """The figure as an <img> of its SVG (a data: URL), named `alt`; as wide as its column up
    to `width` px, its height following, so it takes its place before it is decoded."""
    drawn = render(spec, width=width, max_height=max_height, sizes=sizes, uid=uid)
    src = "data:image/svg+xml," + quote(drawn.svg, safe=URL_SAFE)
    return (
        f'<img class="lnlab-figure" src="{src}" alt="{esc(alt)}" width="{drawn.width}" '
        f'height="{round(drawn.height)}" style="width:100%;height:auto;max-width:{drawn.width}px;'
        'display:block">'
    )


__all__ = ["WIDTH", "Drawing", "Sizes", "picture", "render"]
