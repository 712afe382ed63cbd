"""apply_patch under the permission policy: each path a patch names is reviewed as a write of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.agent.messages import ToolCall
from owltui.policy.permissions.patch import patch_paths
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.tools.patch.parser import parse_patch
from tests.tools.test_tools_permissions import Asker

pytestmark = pytest.mark.anyio

THREE = (
    "*** Begin Patch\n*** Add File: src/new.py\n+x\n*** Delete File: old.txt\n"
    "*** Update File: src/a.py\n*** Move to: lib/a.py\n@@\n-a\n+b\n*** End Patch"
)


def patch_call(text: str) -> ToolCall:
    return ToolCall(id="c1", name="apply_patch", arguments={"input": text})


def test_the_policy_sees_every_path_the_parser_touches() -> None:
    assert patch_paths(THREE) == ["src/new.py", "old.txt", "src/a.py", "lib/a.py"]
    parsed = [p for h in parse_patch(THREE) for p in h.touched()]
    assert set(parsed) <= set(patch_paths(THREE))


async def test_a_patch_of_four_paths_asks_once_naming_each(ws: Path) -> None:
    asker = Asker()
    policy = PermissionPolicy(ws, "ask", asker)
    assert await policy.check(patch_call(THREE), read_only=False) is None
    [(name, reason)] = asker.asked
    assert name == "apply_patch"
    for path in ("src/new.py", "old.txt", "src/a.py", "lib/a.py"):
        assert path in reason
    assert policy.review(patch_call(THREE)).rules == ["src/new.py", "old.txt", "src/a.py", "lib/a.py"]


async def test_allow_rules_cover_some_paths_the_rest_still_ask(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\napply_patch = ["src/**"]\n')
    policy = PermissionPolicy(ws, "ask", None)
    verdict = policy.review(patch_call(THREE))
    assert verdict.decision == "ask"
    assert "old.txt" in verdict.reason and "lib/a.py" in verdict.reason and "src/" not in verdict.reason
    only_src = "*** Begin Patch\n*** Add File: src/x.py\n+x\n*** End Patch"
    assert policy.review(patch_call(only_src)).decision == "allow"


async def test_a_deny_rule_on_one_path_refuses_the_whole_patch(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[deny]\napply_patch = ["lib/**"]\n')
    verdict = await PermissionPolicy(ws, "yolo").check(patch_call(THREE), read_only=False)
    assert verdict is not None and "deny rule" in verdict


@pytest.mark.parametrize("mode", ["ask", "edits", "yolo"])
async def test_a_protected_path_asks_in_every_mode(ws: Path, mode: str) -> None:
    text = (
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: .git/hooks/pre-commit\n+evil\n*** End Patch"
    )
    asker = Asker("deny")
    verdict = await PermissionPolicy(ws, mode, asker).check(patch_call(text), read_only=False)
    assert verdict is not None and "denied" in verdict
    [(_, reason)] = asker.asked
    assert ".git/hooks/pre-commit" in reason
    refused = await PermissionPolicy(ws, mode, None).check(patch_call(text), read_only=False)
    assert refused is not None and "explicit approval" in refused
    assert '[allow] apply_patch = [".git/hooks/pre-commit"]' in refused


async def test_a_move_into_protected_configuration_is_seen(ws: Path) -> None:
    text = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .owltui/permissions.toml\n@@\n-a\n+b\n*** End Patch"
    verdict = PermissionPolicy(ws, "yolo").review(patch_call(text))
    assert verdict.decision == "ask" and verdict.forced and verdict.protected is not None


async def test_modes(ws: Path) -> None:
    assert PermissionPolicy(ws, "edits").review(patch_call(THREE)).decision == "allow"
    assert PermissionPolicy(ws, "yolo").review(patch_call(THREE)).decision == "allow"
    assert PermissionPolicy(ws, "read-only").review(patch_call(THREE)).decision == "refuse"
    assert PermissionPolicy(ws, "ask").review(patch_call(THREE)).decision == "ask"


async def test_always_saves_each_path(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", Asker("always"))
    assert await policy.check(patch_call(THREE), read_only=False) is None
    assert policy.rules.allow["apply_patch"] == ["src/new.py", "old.txt", "src/a.py", "lib/a.py"]
    assert PermissionPolicy(ws, "ask", None).review(patch_call(THREE)).decision == "allow"
