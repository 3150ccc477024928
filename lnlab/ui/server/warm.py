"""The server's start: what the pages import, loaded before the first visitor.

A plain Streamlit server imports torch (3.6 s of CPU, +190 MiB) when the first visitor opens a
page that needs it, and every other session waits meanwhile. The app's lifespan
(lnlab.ui.server) calls `warm()` before the server answers, so the first visitor finds them
loaded, and `return_large_blocks()` once.
"""

from __future__ import annotations

import ast
import ctypes
import ctypes.util
import importlib
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ("home.py", "pages/*.py")  # the app's pages


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
    REPL, 0.17 s, which lnlab.ui.runtime skips): a process's first page paid both, which is the
    page of a teacher moved here when their process died (lnlab.serving.cluster)."""
    start = time.perf_counter()
    import numpy as np

    from lnlab.core.backward import autograd_check

    for name in script_imports(root):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:  # a module that is there but fails to import
                raise
    autograd_check(np.ones((1, 2)), np.ones((1, 2)), np.ones(2), 1e-5)
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
