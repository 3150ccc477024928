"""How this project launches Debian's Chromium, used by the browser tests and the benchmarks.

LNLAB_CHROMIUM names another executable (as for scripts/ensure-chromium).
"""

import os

EXECUTABLE = os.environ.get("LNLAB_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
