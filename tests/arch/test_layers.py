"""Dependencies point down only: agent <- tools/providers <- features <- session <- ui/cli/modes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "owltui"

# package -> owltui packages it may import
ALLOWED: dict[str, set[str]] = {
    "agent": {"agent"},
    "tools": {"agent", "tools"},
    "providers": {"agent", "providers"},
    "features": {"agent", "features"},  # concrete tools and providers come in through config
    "session": {"agent", "tools", "providers", "features", "session"},
    "modes": {"agent", "tools", "features", "session", "modes"},
    "ui": {"agent", "tools", "features", "session", "ui"},  # never a provider
}


def owltui_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "owltui" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_layers_below(package: str) -> None:
    bad = {}
    for path in (ROOT / package).rglob("*.py"):
        extra = owltui_imports(path) - ALLOWED[package] - {"__init__"}
        if extra:
            bad[str(path.relative_to(ROOT))] = sorted(extra)
    assert not bad, f"imports against the layering: {bad}"


def test_agent_core_needs_only_anyio_and_pydantic() -> None:
    third_party: set[str] = set()
    for path in (ROOT / "agent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                third_party.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                third_party.update(a.name.split(".")[0] for a in node.names)
    import sys
    stdlib = set(sys.stdlib_module_names)
    assert third_party - stdlib - {"owltui"} <= {"anyio", "pydantic", "sniffio"}
