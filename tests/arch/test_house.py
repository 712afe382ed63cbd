"""The shape of the tree a newcomer walks: small folders, small modules, a thin app, typed
capabilities instead of probing, typed services, docstrings on every package, the text leaf light,
and no comment that cites an issue or a document outside the repository."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "owltui"
MAX_SIDE_BY_SIDE = 16
MAX_LINES = 400
MAX_APP_LINES = 300
FOLDERS_EXCEPTED = {ROOT / "agent"}  # the loop's named pieces sit side by side on purpose


def modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def test_no_folder_holds_more_than_16_modules() -> None:
    crowded = {
        str(d.relative_to(ROOT)): n
        for d in {p.parent for p in modules()} - FOLDERS_EXCEPTED
        if (n := len(list(d.glob("*.py")))) > MAX_SIDE_BY_SIDE
    }
    assert not crowded, f"folders over {MAX_SIDE_BY_SIDE} modules: {crowded}"


def test_no_module_over_400_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_app_is_thin() -> None:
    assert len((ROOT / "ui" / "app.py").read_text().splitlines()) <= MAX_APP_LINES


def test_every_module_and_package_says_what_it_owns() -> None:
    bare = [str(p.relative_to(ROOT)) for p in modules() if not ast.get_docstring(ast.parse(p.read_text()))]
    assert not bare, f"modules without a docstring: {bare}"


def test_package_inits_import_nothing() -> None:
    eager = [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("__init__.py")
        if p.parent != ROOT
        and any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(ast.parse(p.read_text())))
    ]
    assert not eager, f"package __init__s that import: {eager}"


PROBE = re.compile(r"\bgetattr\(")


def test_no_probing_in_the_command_layer_and_the_ui() -> None:
    probes = [
        f"{p.relative_to(ROOT)}:{i}"
        for folder in (ROOT / "session" / "commands", ROOT / "ui")
        for p in sorted(folder.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if PROBE.search(line)
    ]
    assert not probes, f"getattr probes (declare the capability on the Host instead): {probes}"


def test_services_are_typed() -> None:
    untyped = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in modules()
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"services\b[^=\n]*:\s*(dict|Mapping)\[str, Any\]", line) or 'services["' in line
    ]
    assert not untyped, f"services as an untyped mapping: {untyped}"


CITES = re.compile(r"\b[Ii]ssues? ?\d+|CONTRACTS|\bsection \d+ of the contract")


def test_no_comment_cites_an_issue_or_an_outside_document() -> None:
    cited = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in modules()
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if CITES.search(line)
    ]
    assert not cited, f"say the reason itself, not where it was asked for: {cited}"


def test_the_text_leaf_loads_no_tool_provider_or_agent_module() -> None:
    code = (
        "import json, sys\nimport owltui.text.sanitize, owltui.text.codec, owltui.text.wirejson\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('owltui.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = json.loads(out.stdout)
    assert all(m.startswith("owltui.text") for m in loaded), loaded


def test_architecture_names_every_package_and_only_real_ones() -> None:
    text = (ROOT.parent / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"^\| `(owltui(?:/[a-z_]+)*)` \|", text, flags=re.M))
    real = {str(p.parent.relative_to(ROOT.parent)) for p in ROOT.rglob("__init__.py")} - {"owltui"}
    assert named - real == set(), f"ARCHITECTURE.md names packages that do not exist: {sorted(named - real)}"
    assert real - named == set(), f"packages ARCHITECTURE.md does not name: {sorted(real - named)}"
