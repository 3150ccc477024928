"""Server time per rerun of each page on its default example, measured with AppTest.

Run: `.venv/bin/python -m bench.pages` (or `make bench` for every benchmark). Prints a table
and appends it to bench/results/pages.md. The first run of each page (imports, caches) is
reported apart from the reruns, which is what a visitor waits for after each click.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bench.report import record
from lnlab.ui import PAGES

RERUNS = 30
ROOT = Path(__file__).resolve().parent.parent


def time_page(path: str, reruns: int = RERUNS) -> tuple[float, float, float]:
    """(first run, median rerun, p95 rerun) in milliseconds."""
    start = time.perf_counter()
    at = AppTest.from_file(str(ROOT / path), default_timeout=120).run()
    first = (time.perf_counter() - start) * 1e3
    if at.exception:
        raise RuntimeError(f"{path} raised: {at.exception[0].value}")
    samples = []
    for _ in range(reruns):
        start = time.perf_counter()
        at.run()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return first, statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    rows = [("page", "first run (ms)", "rerun median (ms)", "rerun p95 (ms)")]
    for path in ["app.py", *(p.path for p in PAGES)]:
        first, median, p95 = time_page(path)
        rows.append((path, f"{first:.0f}", f"{median:.1f}", f"{p95:.1f}"))
    record("pages", "Server time per rerun (AppTest, default example)", rows)


if __name__ == "__main__":
    main()
