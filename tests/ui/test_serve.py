"""lnlab.ui.serve, the launcher `make run` uses: what it imports before the first visitor."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import run_coroutine

from lnlab.ui import serve

ROOT = serve.ROOT


def test_the_scripts_imports_include_every_page_module():
    names = serve.script_imports()
    for module in (
        "lnlab.ui",
        "lnlab.labs.gpu.lesson",
        "lnlab.labs.gpu.benchmark",
        "lnlab.labs.padding.lesson",
    ):
        assert module in names


def test_warm_loads_torch_and_every_module_the_pages_import():
    """In a fresh interpreter, as the launcher runs it: afterwards every module the app's
    scripts name is loaded, torch included, and what a first call loads (sympy, by autograd's
    check), so no visitor waits for an import; Streamlit's once-per-process check for a REPL
    is done with."""
    code = (
        "import json, sys; from lnlab.ui import serve; serve.warm(); "
        "import streamlit.delta_generator as dg; "
        "print(json.dumps([sorted(sys.modules), dg._use_warning_has_been_displayed]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    modules, warned = json.loads(out.stdout)
    loaded = set(modules)
    assert "torch" in loaded and "sympy" in loaded and warned
    # a name is a module, or a name in a module (`from lnlab.core.parse import MAX_CHARS`)
    names = serve.script_imports()
    assert not [n for n in names if n not in loaded and n.rsplit(".", 1)[0] not in loaded]
    assert "lnlab.labs.gpu.lesson" in loaded and "lnlab.labs.gpu.plots" in loaded


def test_large_freed_blocks_go_back_to_the_system():
    """On glibc (this project's Debian), mallopt takes the fixed threshold."""
    assert serve.return_large_blocks()


def test_every_response_says_no_referrer():
    """The launcher's middleware adds Referrer-Policy to HTTP responses (a teacher link's
    secret or a class code never leaves in a Referer) and leaves websockets alone."""

    sent: list[dict] = []

    async def app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"a", b"b")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def record(message) -> None:
        sent.append(message)

    run_coroutine(serve.NoReferrer(app)({"type": "http"}, None, record))
    assert sent[0]["headers"] == [(b"a", b"b"), (b"referrer-policy", b"no-referrer")]
    assert sent[1]["body"] == b"ok"
    serve.no_referrer()
    serve.no_referrer()  # once: the middleware list gets it one time
    from streamlit.web.server.starlette import starlette_app

    names = [m.cls for m in starlette_app.create_streamlit_middleware()]
    assert names.count(serve.NoReferrer) == 1
