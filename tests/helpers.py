"""Shared by the tests: opening a page as the app serves it, checking a figure, and reading
the files its download buttons carry."""

import html
import json
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_test(
    path: str, query: Mapping[str, str | list[str]] | None = None, timeout: float = 60
) -> AppTest:
    """An AppTest of page `path` (e.g. "pages/padding.py") with app.py as the entrypoint,
    opened from a link with the `query` parameters.

    Not run yet: set session state first if needed, then call `.run()`.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.switch_page(path)


def validated(fig: go.Figure) -> go.Figure:
    """`fig` rebuilt by plotly with every property checked: ValueError names a wrong one.

    lnlab.plots.common.figure skips that check to stay fast; the tests make it instead, and
    check that it changes nothing (it would turn a colour scale's name into its colours).
    """
    checked = go.Figure(fig.to_plotly_json())
    assert _as_json(checked) == _as_json(fig)
    return checked


def _as_json(fig: go.Figure) -> object:
    return json.loads(pio.to_json(fig, validate=False))


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


def frames(at: AppTest, *columns: str) -> list[pd.DataFrame]:
    """The tables whose first columns are `columns`, in page order."""
    found = [d.value for d in at.dataframe]
    return [f for f in found if tuple(f.columns[: len(columns)]) == columns]


def bn_means(at: AppTest) -> tuple[list[float], list[float]]:
    """The padding page's naive and masked Batch Norm means, feature by feature."""
    (table,) = html_frames(at, "feature", "μ, PAD included")
    return list(table["μ, PAD included"]), list(table["μ, masked"])


def html_frames(at: AppTest, *columns: str) -> list[pd.DataFrame]:
    """The HTML tables (ui.table, drawn with st.html) whose first columns are `columns`, in
    page order. Numbers are read exactly, from each cell's tooltip; labels unescaped."""
    found = []
    for element in at.get("html"):
        body = element.proto.body
        if "<tbody>" not in body:
            continue
        head = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", body)]
        rows = [
            [
                float(title) if title else html.unescape(label)
                for title, label in re.findall(
                    r'<td (?:title="([^"]*)"|class="label")>(.*?)</td>', row
                )
            ]
            for row in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1])
        ]
        frame = pd.DataFrame(rows, columns=head)
        if tuple(frame.columns[: len(columns)]) == columns:
            found.append(frame)
    return found
