"""The layering of lnlab, read from every module's imports (README, "Layout").

core  <- teach <- labs/<lab>, classroom <- ui <- pages and app.py
core  <- serving <- labs/<lab>, classroom

- core imports nothing else of lnlab; teach only core; serving only core;
- a lab imports core, teach, serving and itself, never another lab; classroom the same three;
- only ui, the pages and app.py import Streamlit; the pages reach serving only through ui;
- within ui, only ui/runtime (at most six modules) imports Streamlit's internals (anything
  of streamlit but its public names: `streamlit`, `streamlit.errors`, `streamlit.starlette`,
  the DeltaGenerator type); no module of ui is over 500 lines;
- every module of lnlab sits in one of these folders, and no imports go round in a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

LIB = ROOT / "lnlab"
SCRIPTS = [ROOT / "app.py", ROOT / "home.py", *sorted((ROOT / "pages").glob("*.py"))]
UI = LIB / "ui"
RUNTIME = UI / "runtime"
PUBLIC_STREAMLIT = {"streamlit", "streamlit.errors", "streamlit.starlette"}
PUBLIC_STREAMLIT_TYPES = {"streamlit.delta_generator"}  # DeltaGenerator, in type hints
MAX_RUNTIME_MODULES = 6
MAX_UI_LINES = 500

# layer -> the layers it may import ("lab" stands for the importing lab's own folder)
ALLOWED = {
    "api": {"core"},  # lnlab/__init__.py: the math's public names
    "core": {"core"},
    "teach": {"core", "teach"},
    "serving": {"core", "serving"},
    "classroom": {"core", "teach", "serving", "classroom"},
    "lab": {"core", "teach", "serving", "lab"},
    "ui": {"api", "core", "teach", "serving", "classroom", "labs", "lab", "ui"},
    "pages": {"api", "core", "teach", "classroom", "labs", "lab", "ui"},
}
STREAMLIT_LAYERS = {"ui", "pages"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(LIB.rglob("*.py"))}


def layer(module: str) -> str:
    """The layer of an lnlab module, or of a page ("pages.x", "app")."""
    parts = module.split(".")
    if parts[0] in ("pages", "app"):
        return "pages"
    if module == "lnlab":
        return "api"
    if parts[1] == "labs":
        return "lab" if len(parts) > 2 else "labs"
    return parts[1]


def imports(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it (a function's imports count too)."""
    return imports_in(path.read_text(), str(path))


def imports_in(source: str, name: str = "<source>") -> set[str]:
    """The modules `source` imports; `from P import m` names module P.m when m is one."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in MODULES else node.module)
    return found


def lnlab_imports(path: Path) -> set[str]:
    return {m for m in imports(path) if m == "lnlab" or m.startswith("lnlab.")}


def wrong_imports(me: str, found: set[str]) -> list[str]:
    """What module `me` (an lnlab module, or "pages.x") may not import of the modules `found`."""
    mine = layer(me)
    wrong = []
    for target in sorted(m for m in found if m == "lnlab" or m.startswith("lnlab.")):
        theirs = layer(target)
        if mine == "lab" and theirs == "lab":
            if target.split(".")[2] != me.split(".")[2]:
                wrong.append(f"{target} (another lab)")
        elif theirs not in ALLOWED[mine]:
            wrong.append(f"{target} ({theirs})")
    if mine not in STREAMLIT_LAYERS and any(m.split(".")[0] == "streamlit" for m in found):
        wrong.append("streamlit (only ui and the pages may)")
    return wrong


def test_every_module_sits_in_a_layer():
    known = {"api", "core", "teach", "serving", "classroom", "labs", "lab", "ui"}
    strays = [m for m in MODULES if layer(m) not in known]
    assert not strays, f"modules outside the layout's folders: {strays}"
    assert set(MODULES).isdisjoint({"lnlab.lessons", "lnlab.plots"})


@pytest.mark.parametrize(
    "path", [*MODULES.values(), *SCRIPTS], ids=lambda p: str(p.relative_to(ROOT))
)
def test_imports_only_go_down(path: Path):
    me = module_name(path) if path.is_relative_to(LIB) else f"pages.{path.stem}"
    wrong = wrong_imports(me, imports(path))
    assert not wrong, f"{me} ({layer(me)}) may not import: {wrong}"


def test_no_circles():
    graph = {
        m: {t for t in lnlab_imports(p) if t in MODULES and t != m} for m, p in MODULES.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, f"imports in a circle: {circles}"


@pytest.mark.parametrize(
    ("me", "source"),
    [
        ("lnlab.core.x", "from lnlab.teach import quiz"),
        ("lnlab.core.x", "import lnlab.ui"),
        ("lnlab.teach.x", "from lnlab.labs.padding.batch import PaddingLab"),
        ("lnlab.serving.x", "from lnlab.labs.gpu import lesson"),
        ("lnlab.serving.x", "from lnlab.classroom.store import ClassStore"),
        ("lnlab.labs.gpu.x", "import lnlab.labs.padding.batch"),
        ("lnlab.classroom.x", "from lnlab.ui import page"),
        ("lnlab.teach.x", "import streamlit as st"),
        ("pages.x", "from lnlab.serving import worker"),
    ],
)
def test_the_check_catches_a_wrong_import(me: str, source: str):
    """The rules above, tried on made-up modules that break them."""
    assert wrong_imports(me, imports_in(source))


def internals(found: set[str]) -> list[str]:
    """The modules of Streamlit's internals among `found`."""
    public = PUBLIC_STREAMLIT | PUBLIC_STREAMLIT_TYPES
    return sorted(m for m in found if m.split(".")[0] == "streamlit" and m not in public)


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(UI.rglob("*.py")) if not p.is_relative_to(RUNTIME)] + SCRIPTS,
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_only_the_runtime_touches_streamlits_internals(path: Path):
    assert not internals(imports(path)), f"{path.name}: use lnlab.ui.runtime instead"


def test_the_runtime_is_one_small_folder():
    modules = sorted(p.name for p in RUNTIME.glob("*.py"))
    assert len(modules) <= MAX_RUNTIME_MODULES, modules
    assert not [p for p in RUNTIME.rglob("*.py") if p.parent != RUNTIME], "no subfolders"


@pytest.mark.parametrize("path", sorted(UI.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_ui_module_is_over_500_lines(path: Path):
    assert len(path.read_text().splitlines()) <= MAX_UI_LINES


@pytest.mark.parametrize(
    "source",
    [
        "from streamlit.runtime.scriptrunner import get_script_run_ctx",
        "from streamlit.proto.ForwardMsg_pb2 import ForwardMsg",
        "import streamlit.web.server",
    ],
)
def test_the_check_catches_an_internal_import(source: str):
    assert internals(imports_in(source))


@pytest.mark.parametrize(
    "path",
    sorted(p for d in ("tests", "checks", "harness") for p in (ROOT / d).rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_tests_and_checks_do_not_import_the_benchmarks(path: Path):
    """bench/ measures; what tests, checks/ and bench/ share is in harness/."""
    assert not [m for m in imports(path) if m.split(".")[0] == "bench"]
