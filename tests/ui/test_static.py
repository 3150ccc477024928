"""What the app serves from static/ (server.enableStaticServing): KaTeX as its npm package ships
it, at the version package.json pins, with every font a browser loads from its stylesheet."""

from __future__ import annotations

import json
import re
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


def test_every_font_a_browser_loads_is_there() -> None:
    """Each @font-face names its WOFF2 file first, which every browser Streamlit supports
    reads, so the WOFF and TTF fallbacks after it are never asked for (and not vendored)."""
    css = (KATEX / "katex.min.css").read_text()
    sources = re.findall(r"src:\s*url\(([^)]+)\)", css)
    assert len(sources) == 20, "one @font-face per KaTeX font"
    assert all(s.startswith("fonts/") and s.endswith(".woff2") for s in sources)
    missing = sorted(s for s in sources if not (KATEX / s).is_file())
    assert not missing, missing
    assert not re.search(r"url\((?:https?:)?//", css), "the stylesheet names another host"
