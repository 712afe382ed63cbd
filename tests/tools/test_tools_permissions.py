import tomllib
from pathlib import Path

import pytest

from owltui.agent.messages import ToolCall
from owltui.tools.permissions import Answer, PermissionPolicy

pytestmark = pytest.mark.anyio

READ_ONLY = {"read", "ls", "grep", "find", "read_result", "job_output"}


class Asker:
    def __init__(self, answer: Answer = "allow") -> None:
        self.answer: Answer = answer
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, call: ToolCall, reason: str) -> Answer:
        self.asked.append((call.name, reason))
        return self.answer


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


CALLS = {
    "read": call("read", path="a.txt"),
    "ls": call("ls"),
    "grep": call("grep", pattern="x"),
    "find": call("find", pattern="*"),
    "read_result": call("read_result", result_id="r1"),
    "job_output": call("job_output", job_id="1"),
    "job_kill": call("job_kill", job_id="1"),
    "write": call("write", path="src/a.py", content=""),
    "edit": call("edit", path="src/a.py", old_text="a", new_text="b"),
    "bash": call("bash", command="make"),
}

# mode -> tools that run without asking; the rest ask (or are refused in read-only mode)
FREE = {
    "ask": READ_ONLY | {"job_kill"},
    "edits": READ_ONLY | {"job_kill", "write", "edit"},
    "yolo": set(CALLS),
    "read-only": READ_ONLY | {"job_kill"},
}


@pytest.mark.parametrize("mode", list(FREE))
@pytest.mark.parametrize("tool", list(CALLS))
async def test_permission_matrix(ws: Path, mode: str, tool: str) -> None:
    asker = Asker("allow")
    policy = PermissionPolicy(ws, mode, asker)
    verdict = await policy.check(CALLS[tool], read_only=tool in READ_ONLY)
    if tool in FREE[mode]:
        assert verdict is None and not asker.asked
    elif mode == "read-only":
        assert verdict is not None and "read-only mode" in verdict and not asker.asked
    else:
        assert verdict is None and [name for name, _ in asker.asked] == [tool]


async def test_nobody_to_ask_refuses_with_how_to_allow(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", None)
    verdict = await policy.check(call("bash", command="pytest -q"), read_only=False)
    assert verdict is not None
    assert "needs approval" in verdict and "--yes" in verdict and ".owltui/permissions.toml" in verdict
    assert await policy.check(call("read", path="x"), read_only=True) is None


async def test_denied_answer_is_a_refusal(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", Asker("deny"))
    verdict = await policy.check(call("bash", command="rm -rf build"), read_only=False)
    assert verdict is not None and "denied" in verdict and "rm -rf build" in verdict


async def test_always_is_saved_and_honoured(ws: Path) -> None:
    asker = Asker("always")
    policy = PermissionPolicy(ws, "ask", asker)
    assert await policy.check(call("bash", command="pytest -q"), read_only=False) is None
    assert await policy.check(call("write", path="src/x.py", content=""), read_only=False) is None
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved == {"allow": {"bash": ["pytest -q"], "write": ["src/x.py"]}}
    again = PermissionPolicy(ws, "ask", Asker("deny"))
    assert await again.check(call("bash", command="pytest -q"), read_only=False) is None
    assert await again.check(call("write", path="src/x.py", content="1"), read_only=False) is None
    assert await again.check(call("bash", command="pytest -x"), read_only=False) is not None


async def test_allow_and_deny_rules(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text(
        '[allow]\nbash = ["git status*", "pytest*", "git push*"]\nwrite = ["src/**"]\n'
        '[deny]\nbash = ["git push*"]\nwrite = ["src/secrets/*"]\n'
    )
    policy = PermissionPolicy(ws, "ask", None)
    ok = [
        call("bash", command="git status --short"),
        call("bash", command="pytest -q && git status"),
        call("write", path="src/pkg/mod.py", content=""),
    ]
    for c in ok:
        assert await policy.check(c, read_only=False) is None, c
    asks = [
        call("bash", command="git status; rm -rf /"),
        call("bash", command="pytest $(rm -rf /)"),
        call("bash", command="pytest > /etc/passwd"),
        call("write", path="docs/a.md", content=""),
    ]
    for c in asks:
        verdict = await policy.check(c, read_only=False)
        assert verdict is not None and "needs approval" in verdict, c
    for c in [call("bash", command="git push origin main"), call("bash", command="ls && git push -f")]:
        verdict = await policy.check(c, read_only=False)
        assert verdict is not None and "deny rule" in verdict, c
    verdict = await PermissionPolicy(ws, "yolo").check(call("write", path="src/secrets/k", content=""), False)
    assert verdict is not None and "deny rule" in verdict


async def test_outside_workspace_writes_always_ask(ws: Path, tmp_path: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[allow]\nwrite = ["*"]\nedit = ["**"]\n')
    outside = tmp_path / "elsewhere.txt"
    for mode in ("ask", "edits"):
        asker = Asker("always")
        policy = PermissionPolicy(ws, mode, asker)
        assert await policy.check(call("write", path=str(outside), content=""), read_only=False) is None
        assert (
            await policy.check(call("edit", path="../elsewhere.txt", old_text="a", new_text="b"), False)
            is None
        )
        assert [name for name, _ in asker.asked] == ["write", "edit"]
        assert "outside the workspace" in asker.asked[0][1]
    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved == {"allow": {"write": ["*"], "edit": ["**"]}}  # "always" outside is not saved
    assert (
        await PermissionPolicy(ws, "yolo").check(call("write", path=str(outside), content=""), False) is None
    )
    assert await PermissionPolicy(ws, "ask").check(call("read", path=str(outside)), True) is None


async def test_symlink_out_of_the_workspace_counts_as_outside(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (ws / "link").symlink_to(tmp_path / "out")
    asker = Asker("allow")
    assert (
        await PermissionPolicy(ws, "edits", asker).check(call("write", path="link/x", content=""), False)
        is None
    )
    assert asker.asked and "outside the workspace" in asker.asked[0][1]


async def test_malformed_rules_file_is_ignored(ws: Path) -> None:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text("[allow\nbash = ")
    verdict = await PermissionPolicy(ws, "ask").check(call("bash", command="ls"), read_only=False)
    assert verdict is not None and "needs approval" in verdict


def test_unknown_mode_rejected(ws: Path) -> None:
    with pytest.raises(ValueError, match="unknown permission mode"):
        PermissionPolicy(ws, "sometimes")
