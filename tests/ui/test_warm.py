"""lnlab.ui.server.warm, the app's start: what it imports before the first visitor."""

from __future__ import annotations

import json
import subprocess
import sys

from lnlab.ui.server import warm as serve

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
    """In a fresh interpreter, as the app's lifespan runs it: afterwards every module the
    app's scripts name is loaded, torch included, and what a first call loads (sympy, by
    autograd's check), so no visitor waits for an import."""
    code = (
        "import json, sys; from lnlab.ui.server import warm; warm.warm(); "
        "print(json.dumps([sorted(sys.modules), True]))"
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
