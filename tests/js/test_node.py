"""Runs the node tests of the page's JavaScript (tests/js/*.test.mjs) with node's own test
runner, on cases this process writes once (tests/js/cases.py), so that `make test` runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.js import cases

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        reason = "no node on PATH: the JavaScript tests need node 18 or later"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return node


def test_the_page_javascript_passes_its_node_tests(tmp_path: Path) -> None:
    node = _node()
    counts = cases.write(tmp_path)
    assert counts["tokens"] >= 100_000
    files = sorted(str(p.relative_to(ROOT)) for p in HERE.glob("*.test.mjs"))
    run = subprocess.run(
        [node, "--test", *files],
        cwd=ROOT,
        env=os.environ | {"LNLAB_JS_CASES": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
