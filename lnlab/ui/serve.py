"""Start the app's server with the heavy modules already imported: `python -m lnlab.ui.serve`.

`streamlit run app.py` imports torch (3.6 s of CPU, +190 MiB) when the first visitor opens a
page that needs it, and every other session waits meanwhile. This launcher imports what the
pages need first, then hands its arguments to `streamlit run app.py` in the same process, so
the first visitor finds them loaded. It also makes the server mark the links it drops, so
that the page can say so (lnlab.ui.links.mark_dropped_links), and serve the page's HTML with
the app's CSS and the assist script in it (lnlab.ui.shell). Arguments are Streamlit's
(`--server.port 8502`).
"""

from __future__ import annotations

import ast
import ctypes
import ctypes.util
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("app.py", "pages/*.py")  # what `streamlit run app.py` runs


def script_imports(root: Path = ROOT) -> list[str]:
    """The modules the app's scripts import, in the order they name them ("lnlab.core.backend"
    for `from lnlab import backend`; "torch" for `import torch`)."""
    names: list[str] = []
    for pattern in SCRIPTS:
        for script in sorted(root.glob(pattern)):
            for node in ast.walk(ast.parse(script.read_text(), str(script))):
                if isinstance(node, ast.Import):
                    names += [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.append(node.module)
                    names += [f"{node.module}.{alias.name}" for alias in node.names]
    return list(dict.fromkeys(n for n in names if n != "__future__"))


def warm(root: Path = ROOT) -> float:
    """Import torch and every module the app's scripts import, and do once what costs more the
    first time; the seconds it took.

    `from lnlab import backend` names a module; `from lnlab.core.parse import MAX_CHARS` names a
    constant, which is no module and is skipped. The first autograd check imports sympy (0.5 s)
    and the first element drawn reads the whole call stack's source (Streamlit's check for a
    REPL, 0.17 s): a process's first page paid both, which is the page of a teacher moved here
    when their process died (lnlab.serving.cluster)."""
    start = time.perf_counter()
    import numpy as np
    import streamlit.delta_generator

    from lnlab.core.backward import autograd_check

    for name in script_imports(root):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:  # a module that is there but fails to import
                raise
    autograd_check(np.ones((1, 2)), np.ones((1, 2)), np.ones(2), 1e-5)
    # Streamlit warns (once) when an element is drawn outside `streamlit run`; the launcher
    # runs it, so the check is skipped
    streamlit.delta_generator._use_warning_has_been_displayed = True
    return time.perf_counter() - start


MMAP_THRESHOLD = 128 * 1024  # glibc's starting value, which it then raises up to 32 MiB
M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def return_large_blocks() -> bool:
    """Keep glibc's threshold for allocating a block by itself (mmap) at 128 KiB; True if set.

    glibc raises it after each large block freed, after which large blocks come from the
    heap and their memory stays with the process: every wave of 8 sessions sending 0.45 MB
    values left about 30 MiB more behind (bench/results/oversized.md). Held fixed, a large
    block goes back to the system when freed. Elsewhere than glibc this does nothing.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False


class NoReferrer:
    """ASGI middleware: every HTTP response says `Referrer-Policy: no-referrer`."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"referrer-policy", b"no-referrer"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


def no_referrer() -> None:
    """Every response of the server says `Referrer-Policy: no-referrer`: no request a page
    makes carries its address (a teacher link's secret, a class code) to anyone, from the
    first script the page loads (a proxy in front may say the same). Streamlit 1.67 serves
    through Starlette: its middleware list gets one more."""
    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app

    original = starlette_app.create_streamlit_middleware
    if getattr(original, "lnlab_no_referrer", False):
        return

    def middleware() -> list[Middleware]:
        return [*original(), Middleware(NoReferrer)]

    middleware.lnlab_no_referrer = True  # type: ignore[attr-defined]
    starlette_app.create_streamlit_middleware = middleware


def main(argv: list[str]) -> int:
    """Warm, make the server mark the links it drops and leave out stale widget values
    (lnlab.ui.stale), share the process's runs fairly (lnlab.ui.rerun), answer class pulses
    (lnlab.ui.pulse),
    serve the page with lnlab.ui.shell and return large freed blocks, then run
    `streamlit run app.py <argv>`."""
    from streamlit.web import cli

    from lnlab.serving import worker
    from lnlab.ui import failover, pulse, rerun, shell, stale, step_route
    from lnlab.ui.links import mark_dropped_links

    mark_dropped_links()
    stale.install()  # a value a page sent before it saw the server's is not the visitor's
    rerun.install()  # runs take turns while the process is busy: the least served go first
    no_referrer()
    pulse.install()  # GET /_lnlab/pulse/<code>: a class's devices follow it without script runs
    step_route.install()  # POST /_lnlab/step/<token>: a lesson's Next without a script run
    shell.install()  # the page's HTML carries the app's CSS and the assist script
    return_large_blocks()
    print(f"lnlab: modules loaded in {warm():.1f} s", flush=True)
    failover.install()  # a visitor moved here from another process: its first click works
    worker.HEAVY.ahead = True  # the training lab and the GPU page start it when opened
    sys.argv = ["streamlit", "run", "app.py", *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
