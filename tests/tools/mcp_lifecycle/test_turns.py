"""The tool list changes only at a turn boundary: ``tools/list_changed`` with a new list (said once,
what changed), with the same list (silent), and a ``.mcp.json`` approved after the list was fixed
(its server starts at once; one notice; its tools in the next turn's requests). ``/mcp`` and
``mcp_status`` say each state truly, before approval included."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.mcp.source import McpSource
from owltui.tools.mcp.wiring import decide, describe, mcp_source, status
from tests.tools.mcp_lifecycle.helpers import SERVER, entry, running, session, specs

pytestmark = pytest.mark.anyio


def changed_event(src: McpSource) -> anyio.Event:
    """Set each time the source reports a change (after the runtime's handler ran)."""
    event = anyio.Event()
    inner = src.on_change
    assert inner is not None

    def both() -> None:
        inner()
        event.set()

    src.on_change = both
    return event


def names(model: ScriptedModel, i: int) -> list[str]:
    return [t.name for t in model.requests[i].tools]


async def test_a_changed_list_joins_at_the_next_turn_and_is_said_once(ws: Path) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("mcp__life__relist", {"mode": "same"})]),
            Step(calls=[Call("mcp__life__relist", {"mode": "add"})]),
            Step(text="announced twice"),
            Step(text="second turn"),
        ]
    )
    async with running(specs(ws, {"life": entry()}), ws) as (src, warnings):
        agent = await session(ws, model, src)
        changed = changed_event(src)
        assert (await agent.run("change your tools")).reason == "done"
        with anyio.fail_after(10):
            await changed.wait()
        assert (await agent.run("and now?")).reason == "done"
    first = names(model, 0)
    assert names(model, 1) == first and names(model, 2) == first  # never within a turn
    assert "mcp__life__extra" not in first
    assert names(model, 3) == sorted([*first, "mcp__life__extra"])
    assert warnings == [
        "MCP server 'life' changed its tools (added mcp__life__extra): the new list applies from the next turn"
    ]
    assert src.servers[0].list_changed  # the one server


async def test_a_mcp_json_approved_mid_session_starts_at_once_and_joins_the_next_turn(
    ws: Path, tmp_path: Path
) -> None:
    (ws / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"life": {"command": SERVER[0], "args": SERVER[1:]}}})
    )
    warnings: list[str] = []
    src = mcp_source(ws, None, None, dict(os.environ), warnings.append, tmp_path / "data")
    assert src.servers == []
    listing = describe(src)
    assert "No MCP servers are configured" not in listing
    assert "awaiting approval (life)" in listing and "/mcp approve" in listing
    assert status(src) == [
        {
            "name": "life",
            "state": "awaiting_approval",
            "tools": [],
            "file": str(ws / ".mcp.json"),
            "approve": "/mcp approve",
        }
    ]
    model = ScriptedModel([Step(text="no MCP yet"), Step(text="now with MCP")])
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        agent = await session(ws, model, src)
        assert (await agent.run("hello")).reason == "done"
        changed = changed_event(src)
        said = decide(src, True)
        assert "starting its MCP servers (life) now" in said
        with anyio.fail_after(20):
            await changed.wait()
        after = describe(src)
        entry_now = status(src)[0]
        assert (await agent.run("again")).reason == "done"
        await src.aclose()
        tg.cancel_scope.cancel()
    assert not any(n.startswith("mcp__") for n in names(model, 0))
    assert "mcp__life__hang" in names(model, 1) and names(model, 1) == sorted(names(model, 1))
    assert "/mcp approve" in warnings[0]  # at start: the file waits for approval
    assert warnings[1:] == ["MCP server 'life' connected: its 5 tools are available from the next turn"]
    assert after.startswith("life: connected, 5 tools (stdio:")
    assert entry_now["state"] == "connected" and "mcp__life__hang" in entry_now["tools"]
    assert "awaiting" not in after


async def test_mcp_says_each_state_in_words(ws: Path) -> None:
    servers = specs(ws, {"life": entry(), "ghost": {"command": "owltui-no-such-server-4711"}})
    src = McpSource(servers, workspace=ws, warn=lambda _line: None)
    assert "life: configured, not started yet (stdio:" in describe(src)
    async with running(servers, ws) as (src, _warnings):
        text = describe(src)
        assert "life: connected, 5 tools" in text
        assert "ghost: failed (stdio:" in text and "error: command not found" in text
        (life,) = [s for s in src.servers if s.name == "life"]
        life.stop()
        with anyio.fail_after(10):
            await life.finished.wait()
        final = describe(src)
        assert "life: stopped (stdio:" in final, final
