"""A repository's ``.claude/settings.json`` and ``settings.local.json`` hold hooks (commands Claude Code
runs, and OwlTUI too once the user approved them): protected configuration like ``.mcp.json``.
``write``/``edit`` and redirections into them ask in every mode (refused where nobody can approve);
sandboxed commands cannot change them (a read-only bind), as root and in a user namespace; with the
sandbox off every attempt works (so the test can fail)."""

from __future__ import annotations

import json

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.tools.exec.bash import BashParams, BashTool
from tests.security.test_mcp import USERNS, Tree, calls, needs_ns, tree

__all__ = ["tree"]  # the fixture
pytestmark = pytest.mark.anyio
FILES = (".claude/settings.json", ".claude/settings.local.json")
HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("mode", ["edits", "yolo"])
async def test_writing_claude_settings_asks_in_every_mode(tree: Tree, mode: str, name: str) -> None:
    (tree.ws / ".claude").mkdir()
    (tree.ws / ".claude" / "other.json").write_text("{}")
    policy = PermissionPolicy(tree.ws, mode, None)
    for call in calls(".claude/other.json"):  # the same calls on another file: the mode decides
        verdict = policy.review(call)
        assert not verdict.forced and (verdict.decision == "allow" or call.name == "bash"), call
    for path in (name, str(tree.ws / name)):  # it need not exist yet: creating it is writing it
        for call in calls(path):
            verdict = policy.review(call)
            assert verdict.decision == "ask" and verdict.forced, (call, verdict)
            assert "Claude Code's project settings" in " ".join([verdict.reason, *verdict.notes]), verdict
            refusal = await policy.check(call, read_only=False)
            assert refusal is not None and refusal.startswith("Refused"), (call, refusal)


@needs_ns
@USERNS
@pytest.mark.parametrize("name", FILES)
async def test_commands_cannot_change_claude_settings(tree: Tree, userns: bool, name: str) -> None:
    before = json.dumps(HOOKS)
    attempts = (
        f"echo '{{}}' > {name}",
        f"cp evil.json {name}",
        f"mv evil.json {name}",
        f"sed -i s/hooks/x/ {name}",
        f"python3 -c \"open('{name}', 'w').write('{{}}')\"",
    )
    (tree.ws / ".claude").mkdir()
    for sandbox in (tree.sandbox(mode="off"), tree.sandbox(userns)):
        for command in attempts:
            (tree.ws / name).write_text(before)
            (tree.ws / "evil.json").write_text('{"hooks": {"Stop": [{"hooks": [{"command": "sh"}]}]}}')
            ctx = ToolContext(workspace=tree.ws, cancel=CancelToken(), services=Services(sandbox=sandbox))
            out = await BashTool().run(BashParams(command=command), ctx)
            after = (tree.ws / name).read_text() if (tree.ws / name).exists() else None
            if sandbox.active:
                assert out.is_error and after == before, (command, out.content)
            else:
                assert after != before, command
