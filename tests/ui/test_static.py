"""What the app serves from static/ (server.enableStaticServing): KaTeX's script as its npm
package ships it, at the version package.json pins, and nothing of KaTeX's the pages never load
(they draw its MathML: no stylesheet, no fonts)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KATEX = ROOT / "static" / "katex"


def test_static_serving_is_on() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableStaticServing"] is True


def test_katex_is_the_pinned_version() -> None:
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]["katex"]
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/katex"]["version"] == pinned
    assert (KATEX / "VERSION").read_text().strip() == pinned
    assert f'version:"{pinned}"' in (KATEX / "katex.min.js").read_text()
    assert "MIT" in (KATEX / "LICENSE").read_text()


def test_only_what_the_pages_load_is_vendored() -> None:
    assert sorted(p.name for p in KATEX.iterdir()) == ["LICENSE", "VERSION", "katex.min.js"]
