"""Start the app's server with the heavy modules already imported: `python -m lnlab.ui.serve`.

`streamlit run app.py` imports torch (3.6 s of CPU, +190 MiB) when the first visitor opens a
page that needs it, and every other session waits meanwhile. This launcher imports what the
pages need first, then hands its arguments to `streamlit run app.py` in the same process, so
the first visitor finds them loaded. Arguments are Streamlit's (`--server.port 8502`).
"""

from __future__ import annotations

import sys
import time


def warm() -> float:
    """Import what the pages need (torch, numpy, pandas, plotly, the lnlab pages' modules);
    the seconds it took."""
    start = time.perf_counter()
    import torch  # noqa: F401

    import lnlab
    import lnlab.lessons
    import lnlab.ui  # noqa: F401

    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    """Warm, then run `streamlit run app.py <argv>`."""
    from streamlit.web import cli

    from lnlab.ui import failover

    print(f"lnlab: modules loaded in {warm():.1f} s", flush=True)
    failover.install()  # a visitor moved here from another process: its first click works
    sys.argv = ["streamlit", "run", "app.py", *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
