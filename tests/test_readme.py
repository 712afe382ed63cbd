"""The README's examples are true: its first lines, its config and rules examples, and the documents
it links to. (Key bindings and slash commands are checked against the UI's declarations in
tests/ui.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from owltui.agent.messages import ToolCall
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.session.config import load_config

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_first_lines_give_the_two_commands() -> None:
    head = README.split("```bash\n", 1)[1].split("```", 1)[0]
    run, test = head.splitlines()
    assert "owltui" in run and "python -m pytest" in test
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q -e '.[test]'" in ci and "python -m pytest" in ci
    assert "bash .ci/newcomer" in ci  # the two lines run as written, in a clean directory


def test_first_lines_work_with_an_externally_managed_python() -> None:
    """Each line makes its own virtual environment: Debian's and Ubuntu's system Python refuses a
    bare ``pip install`` (PEP 668), and the test line works without the run line before it."""
    head = README.split("```bash\n", 1)[1].split("```", 1)[0]
    for line in head.splitlines():
        command = line.split("#", 1)[0].strip()
        steps = [step.strip() for step in command.split("&&")]
        assert steps[0] == "python3 -m venv .venv", line
        assert all(step.split()[0].startswith(".venv/bin/") for step in steps[1:]), line


def test_config_example_loads(tmp_path: Path) -> None:
    (example,) = [b for b in _blocks("toml") if "provider =" in b]
    path = tmp_path / "config.toml"
    path.write_text(example)
    config = load_config({}, path=path)
    assert config.provider == "openai" and config.sandbox == "workspace-write"
    assert config.keys == {"pause": "ctrl+p"}


@pytest.mark.anyio
async def test_rules_example_decides_as_the_text_says(tmp_path: Path) -> None:
    (example,) = [b for b in _blocks("toml") if "[allow]" in b and "bash =" in b]
    assert tomllib.loads(example)
    (tmp_path / ".owltui").mkdir()
    (tmp_path / ".owltui" / "permissions.toml").write_text(example)
    policy = PermissionPolicy(tmp_path, "yolo", None)

    async def verdict(command: str) -> str | None:
        return await policy.check(ToolCall(id="c", name="bash", arguments={"command": command}), False)

    assert await verdict("git status") is None
    for spelling in (
        "touch x",
        "FOO=1 touch x",
        "/usr/bin/touch x",
        "\\touch x",
        "(touch x)",
        "bash -c 'touch x'",
        "env touch x",
        "xargs touch",
        "find . -exec touch {} +",
        "if true; then touch x; fi",
    ):
        assert await verdict(spelling) is not None, spelling  # deny wins over --yes
    read = ToolCall(id="r", name="read", arguments={"path": ".env"})
    (tmp_path / ".env").write_text("K=1\n")
    assert await policy.check(read, True) is not None


def test_linked_documents_exist() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
