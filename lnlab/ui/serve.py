"""Start the app's server with the heavy modules already imported: `python -m lnlab.ui.serve`.

`streamlit run app.py` imports torch (3.6 s of CPU, +190 MiB) when the first visitor opens a
page that needs it, and every other session waits meanwhile. This launcher imports what the
pages need first, then hands its arguments to `streamlit run app.py` in the same process, so
the first visitor finds them loaded. It also makes the server mark the links it drops, so
that the page can say so (lnlab.ui.links.mark_dropped_links). Arguments are Streamlit's
(`--server.port 8502`).
"""

from __future__ import annotations

import ast
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("app.py", "pages/*.py")  # what `streamlit run app.py` runs


def script_imports(root: Path = ROOT) -> list[str]:
    """The modules the app's scripts import, in the order they name them ("lnlab.backend"
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
    """Import torch and every module the app's scripts import; the seconds it took.

    `from lnlab import backend` names a module; `from lnlab.parse import MAX_CHARS` names a
    constant, which is no module and is skipped."""
    start = time.perf_counter()
    import torch  # noqa: F401

    for name in script_imports(root):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:  # a module that is there but fails to import
                raise
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    """Warm, make the server mark the links it drops, then run `streamlit run app.py <argv>`."""
    from streamlit.web import cli

    from lnlab.ui.links import mark_dropped_links

    mark_dropped_links()
    print(f"lnlab: modules loaded in {warm():.1f} s", flush=True)
    sys.argv = ["streamlit", "run", "app.py", *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
