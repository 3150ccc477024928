"""axe-core's WCAG 2.2 A/AA violations (and headings out of order, unnamed table headers) on
every page as a student, a phone (light and dark) and a projector see it:
`python -m bench.axe`. Not a test (the browser tests fail on any serious or critical one:
tests/browser/axe.py says which): the figures per page, by impact, for the record.

Starts its own server as `make run` does and drives Debian's Chromium; axe-core comes from
node_modules (`npm ci`). Appends its table to bench/results/axe.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.report import load_average, record
from harness import chromium
from tests.browser.axe import ALSO, violations
from tests.browser.conftest import APP_PAGES, new_app_page, start_server, wait_for_app

VIEWS = (  # name, viewport, query, dark theme
    ("student 1366x768", {"width": 1366, "height": 768}, "", False),
    ("phone 390x844", {"width": 390, "height": 844}, "", False),
    ("phone 390x844 dark", {"width": 390, "height": 844}, "", True),
    ("presenter 1024x768", {"width": 1024, "height": 768}, "?v=1&present=1", False),
)
IMPACTS = ("critical", "serious", "moderate", "minor")


def main() -> None:
    before = os.getloadavg()
    rows = [["page", "view", *IMPACTS, "rules (elements)"]]
    totals: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        server = start_server(Path(tmp))
        browser = playwright.chromium.launch(
            executable_path=chromium.EXECUTABLE, headless=True, args=chromium.ARGS
        )
        try:
            for app_page in APP_PAGES:
                for view, size, query, dark in VIEWS:
                    page = new_app_page(browser, size, dark=dark)
                    try:
                        page.goto(server.page_url(app_page) + query)
                        wait_for_app(page)
                        found = violations(page)
                    finally:
                        page.context.close()
                    counts = Counter(v["impact"] for v in found)
                    totals.update(counts)
                    rules = ", ".join(f"{v['id']} ({len(v['nodes'])})" for v in found)
                    rows.append(
                        [app_page.name, view, *(str(counts[i]) for i in IMPACTS), rules or "-"]
                    )
                    print(rows[-1], file=sys.stderr)
        finally:
            browser.close()
            server.stop()
    views = len(rows) - 1
    notes = (
        f"{views} page views; violations (rules failed per view) in all: "
        + ", ".join(f"{totals[i]} {i}" for i in IMPACTS)
        + f". axe-core {_axe_version()}, tags WCAG 2.0-2.2 A and AA and the rules "
        f"{', '.join(ALSO)}, Chromium "
        f"({chromium.EXECUTABLE}). {load_average(before, os.getloadavg())}."
    )
    record("axe", "axe-core on every page", rows, notes)


def _axe_version() -> str:
    import json

    package = Path(__file__).resolve().parents[1] / "node_modules" / "axe-core" / "package.json"
    return json.loads(package.read_text())["version"]


if __name__ == "__main__":
    main()
