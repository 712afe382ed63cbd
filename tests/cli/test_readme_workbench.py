"""The README's examples for ``fetch`` and ``apply_patch``, run as written: its rules block decides
which hosts ``fetch`` reaches, its patch applied by the tool to the files it names gives what it
says, and its ``edit_tool`` line chooses the edit tool of a session."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolCall
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.testing.scripted import ScriptedModel
from owltui.tools.patch.tool import ApplyPatchParams, ApplyPatchTool
from tests.cli.test_readme_extensions import blocks, section
from tests.tools.patch.test_runtime import names, runtime

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "decision"),
    [
        ("https://docs.python.org/3/library/asyncio.html", "allow"),
        ("https://api.github.com/repos/x/y", "allow"),
        ("https://ads.example.com/banner", "refuse"),
        ("https://example.org/", "ask"),
        ("http://localhost:8000/", "ask"),
    ],
)
def test_the_fetch_rules_block_decides_as_the_readme_says(tmp_path: Path, url: str, decision: str) -> None:
    (rules,) = [b for b in blocks(section("Web pages: `fetch`"), "toml") if "fetch =" in b]
    (tmp_path / ".owltui").mkdir()
    (tmp_path / ".owltui" / "permissions.toml").write_text(rules)
    policy = PermissionPolicy(tmp_path, "ask", config_dir=tmp_path / "cfg")
    call = ToolCall(id="c", name="fetch", arguments={"url": url})
    assert policy.review(call, True).decision == decision


async def test_the_patch_example_applies_as_described(tmp_path: Path) -> None:
    text = section("Edit formats: `apply_patch`")
    found = re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)
    (patch,) = [body for lang, body in found if not lang and "*** Begin Patch" in body]
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "docs").mkdir()
    (ws / "src" / "app.py").write_text('def main():\n    print("hi")\n')
    (ws / "old.txt").write_text("old\n")
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services())
    out = await ApplyPatchTool().run(ApplyPatchParams(input=patch), ctx)
    assert (ws / "docs" / "new.md").read_text() == "# New\n"
    assert (ws / "src" / "main.py").read_text() == 'def main():\n    print("hello")\n'
    assert not (ws / "src" / "app.py").exists() and not (ws / "old.txt").exists()
    assert out.content.startswith("Success.")


def test_the_edit_tool_line_chooses_the_sessions_edit_tool(tmp_path: Path) -> None:
    (line,) = [b for b in blocks(section("Edit formats: `apply_patch`"), "toml") if "edit_tool" in b]
    got = names(runtime(tmp_path, ScriptedModel(name="claude-sonnet-4-5"), line))
    assert "apply_patch" in got and "edit" not in got
