"""Server time per rerun of each page on its default example, measured with AppTest.

Run: `.venv/bin/python -m bench.pages` (or `make bench` for every benchmark). Prints a table
and appends it to bench/results/pages.md. The first run of each page (imports, caches) is
reported apart from the reruns, which is what a visitor waits for after each click. An edit
(new numbers, sentences or depth each time) misses every cache: that is what typing costs.
AppTest adds its own overhead (it recompiles the page each run), so a server is a little faster.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bench.report import record
from lnlab.ui import PAGES

RERUNS = 30
ROOT = Path(__file__).resolve().parent.parent
MINIMAL = "bench/minimal_app.py"  # one text area and a sum: the framework's floor
# page: (AppTest element kind, widget key, the k-th edit's value)
EDITS: dict[str, tuple[str, str, Callable[[int], object]]] = {
    "pages/step_through.py": ("text_area", "st_text", lambda k: f"1, 2, 3, 4, {k}"),
    "pages/padding.py": ("text_area", "pad_sentences", lambda k: f"Hi Nitish\nhow are you {k}"),
    "pages/transformer.py": ("slider", "tf_depth", lambda k: 1 + k % 48),
    "pages/conventions.py": ("text_area", "cv_text", lambda k: f"2, 4, 6, {k}"),
    "pages/gpu.py": ("text_area", "gpu_text", lambda k: f"1, 2, 3, {k}"),
    MINIMAL: ("text_area", "mini_text", lambda k: f"1, 2, 3, {k}"),
}
OPENED_AT = {"pages/transformer.py": {"v": "1", "s": "2"}}  # the section with the depth slider


def _timed(at: AppTest, change: Callable[[int], None] | None = None) -> list[float]:
    """Milliseconds of RERUNS reruns, each after `change(k)` if given."""
    samples = []
    for k in range(RERUNS):
        if change is not None:
            change(k)
        start = time.perf_counter()
        at.run()
        samples.append((time.perf_counter() - start) * 1e3)
        if at.exception:
            raise RuntimeError(f"rerun {k} raised: {at.exception[0].value}")
    return samples


def _median_p95(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered):.1f} / {ordered[int(0.95 * (len(ordered) - 1))]:.1f}"


def time_page(path: str) -> tuple[str, ...]:
    """The page, its first run, rerun and edit (median / p95), in milliseconds."""
    start = time.perf_counter()
    at = AppTest.from_file(str(ROOT / path), default_timeout=120)
    for name, value in OPENED_AT.get(path, {}).items():
        at.query_params[name] = value
    at.run()
    first = (time.perf_counter() - start) * 1e3
    if at.exception:
        raise RuntimeError(f"{path} raised: {at.exception[0].value}")
    reruns = _median_p95(_timed(at))
    if path not in EDITS:
        return path, f"{first:.0f}", reruns, "(no input)"
    kind, key, value = EDITS[path]
    edits = _timed(at, lambda k: getattr(at, kind)(key=key).set_value(value(k)))
    return path, f"{first:.0f}", reruns, _median_p95(edits)


def main() -> None:
    rows = [("page", "first run (ms)", "rerun median / p95 (ms)", "edit median / p95 (ms)")]
    rows += [time_page(path) for path in ["home.py", *(p.path for p in PAGES), MINIMAL]]
    record("pages", f"Server time per rerun (AppTest, default example, {RERUNS} runs)", rows)


if __name__ == "__main__":
    main()
