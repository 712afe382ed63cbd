"""Dependencies point down only: text/files <- agent <- policy <- tools, providers <- features
<- session <- ui/modes <- cli, and ``testing`` on top, imported by no product module.

Every import counts: module level, ``if TYPE_CHECKING:`` blocks and imports deferred into function
bodies alike. No import may close a circle (a circle hidden in a function body is still two modules
that need each other), and every one obeys the layering. Relative imports are resolved like absolute
ones (the tree uses absolute imports only; ruff's TID252 keeps it so).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "owltui"

# package (or top-level module) -> owltui packages it may import
LEAVES = {"text", "files", "_startup"}  # _startup: the process-wide start-up tricks, standard library only
ALLOWED: dict[str, set[str]] = {
    "_startup": {"_startup"},
    "text": {"text"},
    "files": {"text", "files"},
    "agent": {"agent", *LEAVES},
    "policy": {"agent", "policy", *LEAVES},
    "tools": {"agent", "policy", "tools", *LEAVES},
    "providers": {"agent", "providers", *LEAVES},
    "features": {"agent", "features", *LEAVES},  # concrete tools and providers come in through config
    "session": {"agent", "policy", "tools", "providers", "features", "session", *LEAVES},
    "modes": {"agent", "policy", "tools", "features", "session", "modes", *LEAVES},
    "ui": {"agent", "policy", "tools", "features", "session", "ui", *LEAVES},  # never a provider
}
ALLOWED["cli"] = set(ALLOWED)  # the entry point sits on top and may import every product package
ALLOWED["testing"] = {*ALLOWED, "testing"}  # test doubles sit above everything; nothing imports them


def module_name(path: Path) -> str:
    parts = ("owltui", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


FILES: dict[str, Path] = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _statements(body: list[ast.AST], module_level: bool) -> Iterator[ast.AST]:
    """Every statement; with ``module_level``, only those run on import (not in function bodies)."""
    for node in body:
        yield node
        if module_level and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements(inner, module_level)


def imports(path: Path, module_level: bool = False, name: str | None = None) -> set[str]:
    """The owltui modules ``path`` (module ``name``) imports, relative imports resolved."""
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(list(ast.parse(path.read_text()).body), module_level):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "owltui")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module:
                target = node.module
            else:
                continue
            if target.split(".")[0] != "owltui":
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & FILES.keys()
            found.update(subs if subs and len(subs) == len(node.names) else {target, *subs})
    return found


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_relative_imports_are_resolved() -> None:
    loop = imports(FILES["owltui.agent.agent"], module_level=True)
    assert "owltui.agent.loop" in loop and "owltui.agent.events" in loop


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_layers_below(package: str) -> None:
    module = ROOT / f"{package}.py"  # a top-level module (cli, _startup) or a package
    paths = [module] if module.exists() else sorted((ROOT / package).rglob("*.py"))
    bad = {}
    for path in paths:
        extra = {_group(m) for m in imports(path)} - ALLOWED[package] - {""}
        if extra:
            bad[str(path.relative_to(ROOT))] = sorted(extra)
    assert not bad, f"imports against the layering: {bad}"


def test_every_package_has_a_layer() -> None:
    groups = {_group(m) for m in FILES} - {""}
    assert groups <= set(ALLOWED), f"packages without a layer in ALLOWED: {sorted(groups - set(ALLOWED))}"


def import_circles() -> list[list[str]]:
    """Strongly connected components (more than one module, or a self-import) of the import graph,
    deferred imports included."""
    graph = {m: sorted(imports(p) & FILES.keys()) for m, p in FILES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                circles.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in graph:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return circles


def test_no_import_circles() -> None:
    assert import_circles() == [], "modules that import each other (deferred imports included)"


def test_circle_detection_sees_relative_and_type_checking_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .loop import RunState\n"
        "def f():\n    from ..tools.exec import bash\n"
    )
    eager = imports(probe, module_level=True, name="owltui.agent.probe")
    assert eager == {"owltui.agent.loop"}
    assert imports(probe, name="owltui.agent.probe") == {"owltui.agent.loop", "owltui.tools.exec.bash"}


def test_agent_core_needs_only_anyio_and_pydantic() -> None:
    third_party: set[str] = set()
    for path in (ROOT / "agent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                third_party.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                third_party.update(a.name.split(".")[0] for a in node.names)
    stdlib = set(sys.stdlib_module_names)
    assert third_party - stdlib - {"owltui"} <= {"anyio", "pydantic", "sniffio"}
