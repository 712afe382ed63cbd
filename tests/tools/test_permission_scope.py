"""Policy everywhere (issue 10, item 6): read deny rules through symlinks and hard links for read, grep
and find; the task subagent under the parent's policy; read-only not widened by --yes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from owltui.agent.agent import Agent
from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolCall, ToolResult
from owltui.agent.pause import PauseGate
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolError
from owltui.features.chat import chat_config
from owltui.features.subagent import TaskTool
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.files.tools import ReadParams, ReadTool
from owltui.tools.registry import builtin_tools
from owltui.tools.search.tools import FindParams, FindTool, GrepParams, GrepTool

pytestmark = pytest.mark.anyio
SECRET = "sk-very-secret-value"


@pytest.fixture
def secrets_ws(ws: Path, tmp_path: Path) -> Path:
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[deny]\nread = [".env", "private/**"]\n')
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".env").write_text(f"NESTED={SECRET}\n")
    (ws / "private").mkdir()
    (ws / "private" / "key.txt").write_text(f"{SECRET}\n")
    (ws / "innocent.txt").symlink_to(ws / ".env")
    os.link(ws / ".env", ws / "notes.txt")  # a hard link: another name for the same inode
    (ws / "readme.md").write_text("the API_KEY lives in the environment\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "link-target").symlink_to(ws / "private" / "key.txt")
    return ws


def ctx_for(ws: Path, policy: PermissionPolicy) -> ToolContext:
    return ToolContext(workspace=ws, cancel=CancelToken(), services=Services(read_filter=policy.read_denied))


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


async def test_read_deny_follows_symlinks_and_hard_links(secrets_ws: Path, tmp_path: Path) -> None:
    policy = PermissionPolicy(secrets_ws, "yolo", None)
    for path in (
        ".env",
        "sub/.env",
        "private/key.txt",
        "innocent.txt",
        "notes.txt",
        "./private/../.env",
        str(tmp_path / "outside" / "link-target"),
    ):
        verdict = await policy.check(call("read", path=path), read_only=True)
        assert verdict is not None and verdict.startswith("Refused"), path
    assert await policy.check(call("read", path="readme.md"), read_only=True) is None
    for name in ("grep", "find"):
        verdict = await policy.check(call(name, pattern="x", path="private"), read_only=True)
        assert verdict is not None, name


async def test_read_tool_refuses_a_denied_file_itself(secrets_ws: Path) -> None:
    """Defence in depth: the tool asks the read_filter service too (a link swapped after the check)."""
    policy = PermissionPolicy(secrets_ws, "ask", None)
    tool = ReadTool()
    for path in ("notes.txt", "innocent.txt", ".env"):
        with pytest.raises(ToolError, match="Refused"):
            await tool.run(ReadParams.model_validate({"path": path}), ctx_for(secrets_ws, policy))
    out = await tool.run(ReadParams.model_validate({"path": "readme.md"}), ctx_for(secrets_ws, policy))
    assert "API_KEY lives" in out.content


async def test_grep_and_find_leave_denied_files_out(secrets_ws: Path) -> None:
    policy = PermissionPolicy(secrets_ws, "ask", None)
    ctx = ctx_for(secrets_ws, policy)
    out = await GrepTool().run(GrepParams.model_validate({"pattern": "API_KEY|NESTED|sk-"}), ctx)
    assert "readme.md" in out.content
    assert SECRET not in out.content and "notes.txt" not in out.content and ".env" not in out.content
    assert "more matching lines" not in out.content  # the denied matches are not even counted
    out = await GrepTool().run(GrepParams.model_validate({"pattern": SECRET}), ctx)
    assert SECRET not in out.content
    found = await FindTool().run(FindParams.model_validate({"pattern": "*"}), ctx)
    names = found.content.splitlines()
    assert "readme.md" in names
    for hidden in (".env", "sub/.env", "private/key.txt", "notes.txt", "innocent.txt"):
        assert hidden not in names, hidden
    # without rules nothing is filtered
    (secrets_ws / ".owltui" / "permissions.toml").write_text("")
    free = ctx_for(secrets_ws, PermissionPolicy(secrets_ws, "ask", None))
    assert SECRET in (await GrepTool().run(GrepParams.model_validate({"pattern": SECRET}), free)).content


async def test_task_subagent_runs_under_the_parents_policy(secrets_ws: Path) -> None:
    policy = PermissionPolicy(secrets_ws, "yolo", None)
    children: list[ScriptedModel] = []

    def factory() -> ScriptedModel:
        m = ScriptedModel(
            [
                Step(
                    calls=[
                        Call("read", {"path": ".env"}),
                        Call("read", {"path": "notes.txt"}),
                        Call("grep", {"pattern": "sk-"}),
                    ]
                ),
                Step(text="report: nothing found"),
            ]
        )
        children.append(m)
        return m

    gate = PauseGate()
    base = builtin_tools()
    task = TaskTool(factory, base, secrets_ws, gate=gate)
    parent = ScriptedModel([Step(calls=[Call("task", {"prompt": "find the key"})]), Step(text="done")])
    services = Services(permissions=policy, read_filter=policy.read_denied)
    cfg = chat_config(parent, [*base, task], workspace=secrets_ws, permission=policy.check, services=services)
    agent = Agent(cfg, gate=gate)
    out = await agent.run("go")
    assert out.text == "done"
    (report,) = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert report.content == "report: nothing found"
    child_results = [m for m in children[0].requests[1].messages if isinstance(m, ToolResult)]
    assert [r.status for r in child_results][:2] == ["refused", "refused"]
    assert all(SECRET not in r.content for r in child_results)


async def test_task_subagent_takes_an_explicit_policy(secrets_ws: Path) -> None:
    policy = PermissionPolicy(secrets_ws, "ask", None)
    model = ScriptedModel([Step(calls=[Call("read", {"path": "sub/.env"})]), Step(text="report")])
    task = TaskTool(lambda: model, builtin_tools(), secrets_ws, gate=PauseGate(), permission=policy.check)
    ctx = ToolContext(workspace=secrets_ws, cancel=CancelToken())
    from owltui.features.subagent import TaskParams

    out = await task.run(TaskParams.model_validate({"prompt": "read it"}), ctx)
    assert out.content == "report"
    (result,) = [m for m in model.requests[1].messages if isinstance(m, ToolResult)]
    assert result.status == "refused" and SECRET not in result.content


def test_read_only_is_not_widened_by_yes(tmp_path: Path) -> None:
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options

    ws = tmp_path / "ws"
    ws.mkdir()
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": os.environ.get("PATH", ""),
    }
    model = ScriptedModel([Step(text="hi")])
    for mode, expected in (("read-only", "read-only"), ("ask", "yolo"), (None, "yolo")):
        options = Options(yes=True, permission_mode=mode, workspace=ws, interactive=False, no_session=True)
        runtime = build_runtime(options, model=model, env=env, warn=lambda _t: None)
        assert runtime.permissions is not None and runtime.permissions.mode == expected, mode
        assert runtime.agent.config.services.permissions is runtime.permissions
        assert runtime.agent.config.services.read_filter == runtime.permissions.read_denied
    assert runtime.permissions is not None
    review = runtime.permissions.review(call("bash", command="ls"))
    assert review.decision in ("allow", "ask")  # yolo: allowed, or asks when there is no sandbox
    options = Options(yes=True, permission_mode="read-only", workspace=ws, interactive=False, no_session=True)
    runtime = build_runtime(options, model=model, env=env, warn=lambda _t: None)
    assert runtime.permissions is not None
    for c in (
        call("bash", command="ls"),
        call("write", path="a", content=""),
        call("edit", path="a", old_text="a", new_text="b"),
    ):
        assert runtime.permissions.review(c, read_only=False).decision == "refuse"
