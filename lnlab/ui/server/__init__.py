"""The app's server, on Streamlit's public ASGI seam: `st.App(script, middleware=, lifespan=)`.

app.py holds `app = st.App("home.py", middleware=middleware(), lifespan=lifespan)`, written out
there because Streamlit finds it by reading the file. `streamlit run app.py` finds it and serves it
with uvicorn, and so do `make run`, `uvicorn app:app`, the Docker image and every process of a
cluster: the same routes, headers, page shell and warm-up in every way the app is started.

- middleware (answered before Streamlit's own routes): every request's body within a
  deadline (`deadline.Deadline`, outermost: Streamlit's uploads too), the security headers
  (`headers.Headers`), the page's HTML with the app's CSS and scripts (`shell.Shell`), the
  static files gzipped once per process (`compress.Compress`), a
  class's pulse (`pulse.PulseRoute`, GET .../_lnlab/pulse/<code>), a phone's tap
  (`answers.AnswerRoute`, POST .../_lnlab/answer/<code>) and a lesson's step
  (`steps.StepRoute`, POST .../_lnlab/step/<token>). They are middleware, not routes, so
  that they answer under any base path (server.baseUrlPath, a proxy's prefix).
- lifespan: the patches of Streamlit's internals that the app cannot do without
  (lnlab.ui.runtime.install), torch and the pages' modules imported (`warm.warm`), large
  freed blocks returned to the system, the heavy-work worker started ahead; SIGUSR1 prints
  every thread's stack to the log.
"""

from __future__ import annotations

import faulthandler
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Before the server answers: Streamlit patched, the pages' modules loaded."""
    from lnlab.serving import worker
    from lnlab.ui import runtime
    from lnlab.ui.server import steps, warm

    runtime.install()
    _stacks_on_signal()
    steps.open_route()
    warm.return_large_blocks()
    print(f"lnlab: modules loaded in {warm.warm():.1f} s", flush=True)
    worker.HEAVY.ahead = True  # the training lab and the GPU page start it when opened
    yield


def _stacks_on_signal() -> None:
    """`kill -USR1 <pid>` prints every thread's stack to the server's log: what a stuck run
    waits on (the browser tests send it when one fails)."""
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def middleware() -> list[Any]:
    """The app's middleware, outermost first; Streamlit's own come after them."""
    from starlette.middleware import Middleware

    from lnlab.ui.server.answers import AnswerRoute
    from lnlab.ui.server.compress import Compress
    from lnlab.ui.server.deadline import Deadline
    from lnlab.ui.server.headers import Headers
    from lnlab.ui.server.pulse import PulseRoute
    from lnlab.ui.server.shell import Shell
    from lnlab.ui.server.steps import StepRoute

    return [
        Middleware(m)
        for m in (Deadline, Headers, Shell, Compress, PulseRoute, AnswerRoute, StepRoute)
    ]
