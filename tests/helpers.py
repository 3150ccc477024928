"""Shared by the tests: opening a page as the app serves it, checking a figure, and reading
the files its download buttons carry."""

import asyncio
import html
import io
import json
import re
import threading
from collections.abc import Coroutine, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import TypeVar

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from lnlab import supported_dtypes
from lnlab.serving import heavy_work
from lnlab.ui import state
from lnlab.ui.lesson import FORMULAS
from lnlab.ui.live import LiveLessons

ROOT = Path(__file__).resolve().parents[1]

# Where a GPU is lent, the CUDA cases run; CI has none, so they are skipped there.
HAS_CUDA = torch.cuda.is_available()
CUDA_BF16 = HAS_CUDA and "bfloat16" in supported_dtypes("cuda:0")
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU on this machine")

BROWSER_LESSONS = ("step_through", "padding")  # pages/*.py's ui.LiveSections modules


def app_test(path: str | Path, timeout: float = 60) -> AppTest:
    """An AppTest of the script `path`, not run yet. AppTest runs no JavaScript, so a lesson
    drawn in the browser (lnlab.ui.live) never shows: as for a browser whose lesson was slow,
    each page draws Python's lesson under it."""
    at = AppTest.from_file(str(path), default_timeout=timeout)
    at.session_state[state.key(LiveLessons)] = LiveLessons(slow=set(BROWSER_LESSONS))
    return at


def page_test(
    path: str, query: Mapping[str, str | list[str]] | None = None, timeout: float = 60
) -> AppTest:
    """An AppTest of page `path` (e.g. "pages/padding.py") with home.py as the entrypoint,
    opened from a link with the `query` parameters.

    Not run yet: set session state first if needed, then call `.run()`.
    """
    at = app_test(ROOT / "home.py", timeout)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.switch_page(path)


def question_key(at: AppTest, kind: str) -> str:
    """The widget key of the open question whose id starts with `kind` ("mean", "padbn"): its
    options, or its number box when it has none (a box beside options ends in _typed)."""
    widgets = [*at.radio, *at.text_input]
    return next(
        w.key
        for w in widgets
        if w.key and w.key.startswith(f"q_{kind}-") and not w.key.endswith("_typed")
    )


def validated(fig: go.Figure) -> go.Figure:
    """`fig` rebuilt by plotly with every property checked: ValueError names a wrong one.

    lnlab.teach.figures.figure skips that check to stay fast; the tests make it instead, and
    check that it changes nothing (it would turn a colour scale's name into its colours). The
    figures carry an empty template (Streamlit's theme styles them), which plotly fills with a
    placeholder scatter entry when it validates: that is not the figure's content.
    """
    checked = go.Figure(fig.to_plotly_json())
    assert _as_json(checked) == _as_json(fig)
    assert fig.layout.template.to_plotly_json() in (
        {},
        {"data": {"scatter": [{"type": "scatter"}]}},
    )
    return checked


def _as_json(fig: go.Figure) -> object:
    """The figure's JSON without its template (see validated)."""
    spec = json.loads(pio.to_json(fig, validate=False))
    spec["layout"].pop("template", None)
    return spec


def record_downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """From now on, keep every file a download button carries: {media file id: bytes}."""
    files: dict[str, bytes] = {}
    store = MemoryMediaFileStorage.load_and_get_id

    def keep(self, data, mimetype, kind, filename=None):
        file_id = store(self, data, mimetype, kind, filename)
        files[file_id] = data if isinstance(data, bytes) else data.encode()
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    return files


def downloaded(at: AppTest, key: str, files: dict[str, bytes]) -> str:
    """The text of the file behind download button `key` (recorded by record_downloads)."""
    (button,) = [b for b in at.get("download_button") if b.proto.id.endswith(f"-{key}")]
    file_id = button.proto.url.rsplit("/", 1)[1].split(".")[0]
    return files[file_id].decode()


def read_csv_exact(text: str) -> pd.DataFrame:
    """A downloaded CSV as a table, its numbers read by Python's int and float (correctly
    rounded: a number the app wrote reads back to its bits) rather than by pandas' own
    parser, whose reading of 17-digit numbers has changed between versions. A column whose
    every cell is a whole number is ints, else floats (an empty cell NaN), else text."""
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    for column in frame:
        for kind in (int, lambda cell: float(cell or "nan")):
            try:
                frame[column] = [kind(cell) for cell in frame[column]]
            except ValueError:
                continue
            break
    return frame


def frames(at: AppTest, *columns: str) -> list[pd.DataFrame]:
    """The tables whose first columns are `columns`, in page order."""
    found = [d.value for d in at.dataframe]
    return [f for f in found if tuple(f.columns[: len(columns)]) == columns]


def bn_means(at: AppTest) -> tuple[list[float], list[float]]:
    """The padding page's naive and masked Batch Norm means, feature by feature."""
    (table,) = html_frames(at, "feature", "μ, PAD included")
    return list(table["μ, PAD included"]), list(table["μ, masked"])


class _TableParser(HTMLParser):
    """The rows of an lnlab table (lnlab.teach.tables.table_html): a number cell's exact value is
    its title (the tooltip), a text cell's value its text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[object]] = []
        self._cell: list[str] | None = None
        self._title: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell, self._title = [], dict(attrs).get("title")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell)
            self.rows[-1].append(float(self._title) if self._title is not None else text)
            self._cell = None


def html_tables(at: AppTest) -> list[pd.DataFrame]:
    """The tables drawn by lnlab.ui.table (st.html), in page order, with exact numbers."""
    found = []
    for element in at.get("html"):
        if '<table class="lnlab-table"' not in element.proto.body:
            continue
        parser = _TableParser()
        parser.feed(element.proto.body)
        head, *rows = parser.rows
        found.append(pd.DataFrame(rows, columns=head))
    return found


def html_table(at: AppTest, column: str) -> pd.DataFrame:
    """The first ui.table with a column named `column`."""
    return next(t for t in html_tables(at) if column in t.columns)


def formulas(at: AppTest) -> list[str]:
    """Every formula on the page: st.latex, and the LaTeX of each MathML formula of
    ui.formulas (the data-tex of the HTML in its containers, keyed FORMULAS_...)."""
    drawn = [
        html.unescape(tex)
        for block in blocks(at.main)
        if FORMULAS in getattr(block.proto, "id", "")
        for h in block.get("html")
        for tex in re.findall(r'data-tex="([^"]*)"', h.proto.body)
    ]
    return [x.value for x in at.latex] + drawn


def blocks(node: Block) -> Iterator[Block]:
    """`node` and every container in it, in page order."""
    yield node
    for child in node.children.values():
        if isinstance(child, Block):
            yield from blocks(child)


def metric_value(at: AppTest, label: str) -> float:
    """The exact number behind the metric whose label starts with `label` (a metric shows it
    rounded, with the exact value in its help)."""
    m = next(m for m in at.metric if m.label.startswith(label))
    exact = re.search(r"Exact value: (\S+)", m.proto.help or "")
    return float(exact.group(1) if exact else m.value)


def html_frames(at: AppTest, *columns: str) -> list[pd.DataFrame]:
    """The ui.table tables whose first columns are `columns`, in page order."""
    return [t for t in html_tables(at) if tuple(t.columns[: len(columns)]) == columns]


@contextmanager
def front_of_line_held(owner: str = "another visitor") -> Iterator[None]:
    """Another visitor is at the front of the server's heavy-work line (lnlab.serving.heavy_work)
    meanwhile."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with heavy_work.front(owner):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        yield
    finally:
        release.set()
        holder.join(10)


def chart_contrast_problems(spec: Mapping) -> list[str]:
    """What in a chart (plotly JSON) falls under WCAG's contrast against Streamlit's light or
    dark page (lnlab.teach.figures.BACKGROUNDS): a trace's own colour (bars, lines, markers)
    under 3:1, a heatmap cell's number under 4.5:1 on its cell's colour (as drawn, under any
    wash: lnlab.teach.figures.cell_colours)."""
    from lnlab.teach.figures import BACKGROUNDS, cell_colours, contrast

    problems = []
    traces = spec.get("data", [])
    for trace in traces:
        for part in ("marker", "line"):
            colours = (trace.get(part) or {}).get("color")
            for colour in colours if isinstance(colours, list) else [colours]:
                if not isinstance(colour, str) or not colour.startswith(("#", "rgb(")):
                    continue
                worst = min(contrast(colour, b) for b in BACKGROUNDS)
                if worst < 3:
                    problems.append(f"{trace.get('name')}: {part} {colour} at {worst:.2f}:1")
    heat = next((t for t in traces if t.get("type") == "heatmap"), None)
    numbers = [t for t in traces if t.get("mode") == "text" and "textfont" in t]
    if heat is not None:
        z = pd.DataFrame(heat["z"]).astype(float).to_numpy()
        fill = cell_colours(z, float(heat["zmax"]), spec.get("layout", {}).get("shapes", []))
        columns, rows = list(heat["x"]), list(heat["y"])
        for t in numbers:
            for x, y, ink in zip(t["x"], t["y"], t["textfont"]["color"], strict=True):
                cell = "rgb({}, {}, {})".format(*fill[rows.index(y), columns.index(x)].round())
                if contrast(ink, cell) < 4.5:
                    problems.append(f"cell {y}, {x}: {ink} on {cell}")
    return problems


T = TypeVar("T")


def run_coroutine(coro: Coroutine[object, object, T]) -> T:
    """asyncio.run in a thread of its own: the browser tests' sync Playwright keeps an event
    loop running in the main thread for the whole session, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
