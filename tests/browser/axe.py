"""axe-core in the page: WCAG 2.2 A and AA rules, run by the browser tests on what they open.

axe-core comes from npm (package.json pins it; `make test` runs `npm ci`), and its script is
put into the page from node_modules: no page fetches it from anywhere. `serious_problems`
lists every violation axe rates serious or critical, and any of headings out of order or an
unnamed table header; the tests fail on any.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# WCAG 2.0, 2.1 and 2.2, levels A and AA (axe's tags); of axe's best practices, the two that
# 1.3.1 needs here and axe files under neither: headings in order, every table header named
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
ALSO = ["heading-order", "empty-table-header"]  # failing at any impact
FAILING = ("serious", "critical")
STUDENT = {"width": 1366, "height": 768}  # a laptop; a phone is test_phone.PHONE, a projector
# slides.PROJECTORS[0]
MAX_LAYOUT_SHIFT = 0.1  # Lighthouse's "good" CLS; conftest.layout_shift sums every shift

RUN_JS = """async ([tags, also]) => {
    const rules = Object.fromEntries(also.map(id => [id, {enabled: true}]));
    const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, rules,
                                            resultTypes: ['violations']});
    return result.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary,
                                  html: n.html.slice(0, 160)})),
    }));
}"""


def require_axe() -> Path:
    """axe-core's script; without it, skip locally and fail in CI (as require_chromium)."""
    if AXE_JS.is_file():
        return AXE_JS
    reason = f"no axe-core at {AXE_JS} (run `npm ci`, as make test does)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def violations(page: Page) -> list[dict]:
    """Every WCAG 2.2 A/AA violation axe finds on the page as it is now (and ALSO's)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(require_axe()))
    return page.evaluate(RUN_JS, [TAGS, ALSO])


def serious_problems(page: Page, where: str = "") -> list[str]:
    """The serious and critical violations, one line per element: rule, element, why."""
    out = []
    for v in violations(page):
        if v["impact"] not in FAILING and v["id"] not in ALSO:
            continue
        for n in v["nodes"]:
            out.append(f"{where}{v['id']} ({v['impact']}) at {n['target']}: {n['summary']}")
    return out


def assert_accessible(page: Page, where: str = "") -> None:
    """No serious or critical WCAG violation on the page as it is now."""
    problems = serious_problems(page, f"{where}: " if where else "")
    assert not problems, f"axe: {len(problems)} serious or critical:\n" + "\n".join(problems)
