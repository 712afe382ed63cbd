"""``/init`` (issue 13, item 1): a feature on the same loop - read-only tools plus ``write``, a per-file
read cap, one write of AGENTS.md through the permission policy, an existing AGENTS.md updated."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.events import Emitter, Event
from owltui.agent.messages import ToolCall, ToolResult, UserMessage
from owltui.agent.model import ForceTool
from owltui.features.init import READS_PER_FILE, TARGET, init_tools, run_init, system_prompt
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.session.commands.layer import Commands
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.registry import builtin_tools
from tests.session.test_command_layer import Front
from tests.tools.conftest import until

pytestmark = pytest.mark.anyio
NEW = "# Demo\n\nRun the tests with `pytest -q`.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Demo\nA demo project.\n")
    (ws / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    return ws


def policy(ws: Path, answers: list[str] | None = None, asked: list[str] | None = None) -> PermissionPolicy:
    """The real permission policy in ask mode; ``answers`` are what the user says, in turn."""

    async def ask(call: ToolCall, reason: str) -> Any:
        if asked is not None:
            asked.append(f"{call.name} {call.arguments.get('path')}")
        return (answers or ["allow"]).pop(0)

    return PermissionPolicy(ws, "ask", ask if answers is not None else None)


def results(model: ScriptedModel, i: int) -> list[ToolResult]:
    return [m for m in model.views[i] if isinstance(m, ToolResult)]


async def test_reads_then_one_approved_write(ws: Path) -> None:
    asked: list[str] = []
    model = ScriptedModel(
        [
            Step(calls=[Call("ls", {}), Call("read", {"path": "README.md"})]),
            Step(calls=[Call("read", {"path": "pyproject.toml"}), Call("grep", {"pattern": "name"})]),
            Step(calls=[Call("write", {"path": "AGENTS.md", "content": NEW})]),
            Step(text="AGENTS.md covers the test command."),
        ]
    )
    events: list[Event] = []
    emitter = Emitter()
    emitter.subscribe(events.append)
    done = await run_init(
        model, builtin_tools(), ws, permission=policy(ws, ["allow"], asked).check, emitter=emitter
    )
    assert done.written and not done.updated and done.lines == 3
    assert (ws / TARGET).read_text() == NEW
    assert (
        done.summary() == "/init wrote AGENTS.md (3 lines)"
        and done.text == "AGENTS.md covers the test command."
    )
    names = [t.name for t in model.requests[0].tools]
    assert names == ["find", "grep", "ls", "read", "read_result", "write"]  # read-only + write, no bash
    assert all([t.name for t in r.tools] == names for r in model.requests)  # one list on every round
    assert asked == ["write AGENTS.md"]  # only the write asks
    assert model.requests[-1].tool_choice == "none"  # after the write: the closing sentence only
    assert 'call `write` once, with path "AGENTS.md"' in model.requests[0].system
    assert {e.agent for e in events} == {"init"}  # kept out of the main conversation


async def test_an_existing_agents_md_is_in_the_prompt_and_updated(ws: Path) -> None:
    (ws / TARGET).write_text("# Old rules\nAlways use tabs.\n")
    assert "Always use tabs." in system_prompt(ws) and "Update it" in system_prompt(ws)
    model = ScriptedModel(
        [Step(calls=[Call("write", {"path": "./AGENTS.md", "content": NEW})]), Step(text="ok")]
    )
    done = await run_init(model, builtin_tools(), ws, permission=None)
    assert done.written and done.updated and done.summary() == "/init updated AGENTS.md (3 lines)"
    assert '<current path="AGENTS.md">\n# Old rules\nAlways use tabs.\n</current>' in model.requests[0].system


def test_claude_md_is_material_when_there_is_no_agents_md(ws: Path) -> None:
    (ws / "CLAUDE.md").write_text("Use uv.\n")
    prompt = system_prompt(ws)
    assert "There is no AGENTS.md, but CLAUDE.md" in prompt and "Use uv." in prompt


async def test_the_per_file_cap_and_the_only_target(ws: Path) -> None:
    reads = [
        Step(calls=[Call("read", {"path": "README.md" if i % 2 else "./README.md"})])
        for i in range(READS_PER_FILE + 1)
    ]
    model = ScriptedModel(
        [
            *reads,
            Step(calls=[Call("write", {"path": "docs/AGENTS.md", "content": "x"})]),
            Step(calls=[Call("write", {"path": "AGENTS.md", "content": NEW})]),
            Step(text="done"),
        ]
    )
    done = await run_init(model, builtin_tools(), ws, permission=None)
    assert done.written
    capped = results(model, READS_PER_FILE + 1)[-1]
    assert capped.status == "refused" and f"at most {READS_PER_FILE} times" in capped.content
    assert [r.status for r in results(model, READS_PER_FILE + 1)] == ["ok"] * READS_PER_FILE + ["refused"]
    elsewhere = results(model, READS_PER_FILE + 2)[-1]
    assert elsewhere.status == "refused" and "writes only AGENTS.md" in elsewhere.content
    assert not (ws / "docs" / "AGENTS.md").exists()


async def test_a_denied_write_ends_the_run(ws: Path) -> None:
    model = ScriptedModel(
        [Step(calls=[Call("write", {"path": "AGENTS.md", "content": NEW})]), Step(text="never asked for")]
    )
    done = await run_init(model, builtin_tools(), ws, permission=policy(ws, ["deny"]).check)
    assert not done.written and not (ws / TARGET).exists() and model.calls == 1
    assert done.summary().startswith("/init did not write AGENTS.md: Refused: the user denied")


async def test_with_nobody_to_ask_the_write_is_refused(ws: Path) -> None:
    model = ScriptedModel(
        [Step(calls=[Call("write", {"path": "AGENTS.md", "content": NEW})]), Step(text="x")]
    )
    done = await run_init(model, builtin_tools(), ws, permission=policy(ws).check)  # print mode, no --yes
    assert not done.written and not (ws / TARGET).exists() and model.calls == 1


async def test_near_the_round_limit_the_write_is_forced(ws: Path) -> None:
    for i in range(6):
        (ws / f"m{i}.py").write_text(f"x = {i}\n")
    model = ScriptedModel(
        [
            *(Step(calls=[Call("read", {"path": f"m{i}.py"})]) for i in range(3)),
            Step(calls=[Call("write", {"path": "AGENTS.md", "content": NEW})]),
            Step(text="written"),
        ]
    )
    done = await run_init(model, builtin_tools(), ws, permission=None, max_rounds=5)
    assert done.written
    assert model.requests[3].tool_choice == ForceTool(tool="write")
    assert any(isinstance(m, UserMessage) and "write AGENTS.md now" in m.text for m in model.views[3])


def test_tools_are_filtered_from_the_session(ws: Path) -> None:
    assert [t.name for t in init_tools(builtin_tools())] == ["find", "grep", "ls", "read", "write"]


async def test_slash_init_on_the_runtime(tmp_path: Path, ws: Path) -> None:
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", ""),
    }
    model = ScriptedModel(
        [
            Step(calls=[Call("read", {"path": "README.md"})]),
            Step(calls=[Call("write", {"path": "AGENTS.md", "content": NEW})]),
            Step(text="Wrote it."),
            Step(text="main answer"),
        ]
    )
    rt = build_runtime(Options(workspace=ws), model=model, env=env)
    events: list[Event] = []
    rt.emitter.subscribe(events.append)
    c = Commands(rt, Front())
    async with rt:
        reply = c.slash("/init")
        assert (
            reply is not None and reply.ok and reply.then is None and reply.text.startswith("/init: looking")
        )
        again = c.slash("/init")
        assert again is not None and not again.ok and again.text == "/init is already running"
        await until(rt.approvals.pending, 30)
        [pending] = rt.approvals.pending()
        assert pending.name == "write" and pending.arguments["path"] == "AGENTS.md"
        assert c.call("approve", call_id=pending.call_id, decision="allow").ok
        await until(lambda: "AGENTS.md" in str(rt.agent.history.items()[-1:]), 30)
        assert (ws / TARGET).read_text() == NEW
        c.send("thanks")
        await rt.wait_settled()
    tagged = {e.type for e in events if e.agent == "init"}
    assert {"agent_start", "tool_start", "tool_end", "agent_end"} <= tagged
    main_view = [getattr(m, "text", "") for m in model.views[3]]
    assert main_view[0].startswith("/init wrote AGENTS.md (3 lines). The system prompt still holds")
    assert main_view[1] == "thanks"
