"""Lighthouse on every page, served as a course is served: `python -m bench.lighthouse`.

A local cluster (lnlab.serving.cluster: 2 app processes behind HAProxy, as `make cluster`
runs it) on free ports; Lighthouse (npm, pinned in package.json; `npm ci`) drives Debian's
Chromium with its desktop preset (`--mobile`: its phone profile) and reports, per page, the
performance score, the paint and layout-shift figures, the JavaScript it sent and whether the
text responses came compressed. Each page is opened once before it is measured (the server's
first run of a page fills caches no student after the first waits for). The median of
`--runs` runs (by score) is kept. `--gzip` has HAProxy compress text responses, to see what
compression gives while the proxy's configuration does not. Appends its table to
bench/results/lighthouse.md. Timings depend on the machine's load, which the notes give: never
pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from bench.report import load_average, record
from harness import chromium
from lnlab.serving import haproxy
from lnlab.serving.cluster import Cluster, free_port
from tests.browser.conftest import APP_PAGES, wait_for_app

ROOT = Path(__file__).resolve().parents[1]
LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
RUN_TIMEOUT_S = 240
TRIES = 3
WARM_TIMEOUT_MS = 180_000
MIB = 1024 * 1024
# the simulated students all come from 127.0.0.1: HAProxy's per-address limits out of the way
UNLIMITED = haproxy.Limits(10**6, 10**6, 10**6)


@dataclass(frozen=True)
class Figures:
    """What one Lighthouse run says about one page."""

    score: int  # performance, 0-100
    fcp_s: float  # first contentful paint
    lcp_s: float  # largest contentful paint
    tbt_ms: float  # total blocking time
    cls: float  # cumulative layout shift
    si_s: float  # speed index
    requests: int
    js_mib: float  # JavaScript as sent (transfer size)
    total_mib: float  # everything as sent
    compressed: bool  # Lighthouse's "text compression" audit passed
    compression_saves_mib: float  # what compressing would save, by Lighthouse's estimate


def _figures(report: dict) -> Figures:
    audits = report["audits"]

    def value(name: str) -> float:
        return float(audits[name].get("numericValue") or 0.0)

    items = audits["network-requests"]["details"]["items"]
    js = sum(i.get("transferSize", 0) for i in items if i.get("resourceType") == "Script")
    total = sum(i.get("transferSize", 0) for i in items)
    text = audits["uses-text-compression"]
    saves = (text.get("details") or {}).get("overallSavingsBytes", 0) or 0
    return Figures(
        score=round(100 * (report["categories"]["performance"]["score"] or 0)),
        fcp_s=value("first-contentful-paint") / 1000,
        lcp_s=value("largest-contentful-paint") / 1000,
        tbt_ms=value("total-blocking-time"),
        cls=value("cumulative-layout-shift"),
        si_s=value("speed-index") / 1000,
        requests=len(items),
        js_mib=js / MIB,
        total_mib=total / MIB,
        compressed=(text.get("score") or 0) >= 0.9,
        compression_saves_mib=saves / MIB,
    )


def lighthouse(url: str, out: Path, mobile: bool) -> Figures | None:
    """One Lighthouse run of `url`, performance only, tried up to TRIES times; None if every
    try failed. The full report is kept in `out`."""
    command = [
        "node",
        str(LIGHTHOUSE),
        url,
        "--only-categories=performance",
        "--output=json",
        f"--output-path={out}",
        "--quiet",
        "--max-wait-for-load=90000",
        "--chrome-flags=" + " ".join(["--headless=new", *chromium.ARGS]),
    ]
    if not mobile:
        command.append("--preset=desktop")
    env = os.environ | {"CHROME_PATH": chromium.EXECUTABLE}
    for attempt in range(1, TRIES + 1):
        try:
            subprocess.run(command, check=True, env=env, timeout=RUN_TIMEOUT_S, cwd=ROOT)
            return _figures(json.loads(out.read_text()))
        except (subprocess.SubprocessError, OSError, KeyError, ValueError) as err:
            # a loaded machine: Lighthouse's own DevTools calls time out now and then
            print(f"Lighthouse failed on {url} (try {attempt} of {TRIES}): {err}", flush=True)
    return None


# --gzip: what compressing text at HAProxy would give, where the configuration does not yet
# (compressing the proxy's responses is lnlab.serving.haproxy's business, not this bench's)
COMPRESSION = (
    "    compression algo gzip\n"
    "    compression type text/html text/css text/javascript application/javascript "
    "application/json image/svg+xml\n"
)


class GzipCluster(Cluster):
    """The cluster with HAProxy compressing text responses (unless its config already does)."""

    def config(self) -> str:
        text = super().config()
        if "compression algo" in text:
            return text
        return text.replace("backend app\n", "backend app\n" + COMPRESSION, 1)


def _warm(urls: list[str]) -> None:
    """Open each page once in Chromium and wait until it is drawn: the server's first run of a
    page fills caches that no later visitor waits for."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium.EXECUTABLE, headless=True, args=chromium.ARGS
        )
        for url in urls:
            page = browser.new_page()
            page.goto(url)
            try:
                wait_for_app(page, WARM_TIMEOUT_MS)
            except PlaywrightError as err:  # a busy machine: measured cold, and said so
                print(f"{url} was not drawn in {WARM_TIMEOUT_MS / 1000:.0f} s: {err}", flush=True)
            page.close()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median is kept")
    parser.add_argument("--mobile", action="store_true", help="Lighthouse's phone profile")
    parser.add_argument("--pages", nargs="*", help="page names (default: every page)")
    parser.add_argument("--gzip", action="store_true", help="HAProxy compresses text (what if)")
    args = parser.parse_args()
    if not LIGHTHOUSE.is_file():
        raise SystemExit(f"no Lighthouse at {LIGHTHOUSE}: run `npm ci` first")
    pages = [p for p in APP_PAGES if not args.pages or p.name in args.pages]
    before = os.getloadavg()
    rows = [
        [
            "page",
            "score",
            "FCP s",
            "LCP s",
            "TBT ms",
            "CLS",
            "SI s",
            "requests",
            "JS MiB sent",
            "all MiB sent",
            "compressed",
            "compression would save MiB",
            "scores of all runs",
        ]
    ]
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        kind = GzipCluster if args.gzip else Cluster
        with kind(
            2, free_port(), "127.0.0.1", [free_port(), free_port()], UNLIMITED, run_dir
        ) as cluster:
            _warm([cluster.url + p.path for p in pages])
            for app_page in pages:
                url = cluster.url + app_page.path
                tried = [
                    lighthouse(url, run_dir / f"{app_page.name}-{k}.json", args.mobile)
                    for k in range(args.runs)
                ]
                runs = [r for r in tried if r is not None]
                if not runs:
                    rows.append([app_page.name, *["failed"] * (len(rows[0]) - 1)])
                    continue
                f = sorted(runs, key=lambda f: f.score)[len(runs) // 2]  # the median by score
                rows.append(
                    [
                        app_page.name,
                        str(f.score),
                        f"{f.fcp_s:.1f}",
                        f"{f.lcp_s:.1f}",
                        f"{f.tbt_ms:.0f}",
                        f"{f.cls:.3f}",
                        f"{f.si_s:.1f}",
                        str(f.requests),
                        f"{f.js_mib:.2f}",
                        f"{f.total_mib:.2f}",
                        "yes" if f.compressed else "no",
                        f"{f.compression_saves_mib:.2f}",
                        ", ".join(str(r.score) if r else "failed" for r in tried),
                    ]
                )
                print(rows[-1], flush=True)
    version = json.loads((LIGHTHOUSE.parents[1] / "package.json").read_text())["version"]
    notes = (
        f"Lighthouse {version}, {'its phone profile' if args.mobile else 'desktop preset'} "
        f"(simulated throttling), Chromium {chromium.EXECUTABLE}; through HAProxy in front of "
        f"2 app processes (lnlab.serving.cluster, as `make cluster`)"
        + (", HAProxy compressing text (--gzip)" if args.gzip else "")
        + f"; median of {args.runs} run(s) by score. {load_average(before, os.getloadavg())}."
    )
    record("lighthouse", "Lighthouse per page" + (" (phone)" if args.mobile else ""), rows, notes)


if __name__ == "__main__":
    main()
