"""Icons the app ships itself, so that no page asks an outside host for one.

Streamlit draws `:material/name:` icons inside a page (buttons, alerts, links) from the Material
Symbols font it bundles and serves itself. The page icon is the exception: for
`st.set_page_config(page_icon=":material/name:")` its frontend points the favicon at
fonts.gstatic.com, so every visit tells Google the visitor's address, and behind a firewall the
tab shows no icon. A path to an SVG file instead is read on the server and sent inline as a
`data:` URL: no request at all (tests/browser/test_offline.py checks every page).

assets/functions.svg is Material Symbols Rounded "functions" (weight 400, fill 0, grade 0,
opsz 48) from the npm package @material-symbols/svg-400 0.48.2, the same glyph Streamlit
fetched; Apache License 2.0, copy in assets/LICENSE-material-symbols.txt.
"""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"

# For st.set_page_config(page_icon=...): Streamlit inlines a local .svg file as a data: URL.
PAGE_ICON = ASSETS / "functions.svg"
