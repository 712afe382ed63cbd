"""``session/load``'s replay: a session file written by a real runtime (a turn with a read, an edit,
a command, a refused call and a ``!command``), resumed as ``--resume ID`` resumes it, as updates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from owltui.modes.acp.replay import replay_updates
from owltui.testing.scripted import Call, Step
from tests.modes.acp.kit import commands, runtime

pytestmark = pytest.mark.anyio


def dumped(updates: list[Any]) -> list[dict[str, Any]]:
    return [u.model_dump(by_alias=True, exclude_none=True) for u in updates]


async def test_a_saved_session_replays_in_order(tmp_path: Path) -> None:
    steps = [
        Step(thinking="look first", calls=[Call("read", {"path": "notes.txt"}, id="r1")]),
        Step(calls=[Call("edit", {"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}, id="e1")]),
        Step(calls=[Call("bash", {"command": "cat notes.txt"}, id="b1")]),
        Step(text="It says gamma now."),
    ]
    rt = runtime(tmp_path, steps, yes=True)
    (rt.workspace / "notes.txt").write_text("alpha\nbeta\n")
    async with rt:
        assert rt.agent.prompt("change beta")
        await rt.wait_settled()
        shell_done = anyio.Event()
        rt.emitter.subscribe(
            lambda ev: shell_done.set() if ev.type == "tool_end" and ev.wire()["name"] == "bash" else None
        )
        reply = commands(rt).call("shell", command="echo hi")
        assert reply.ok
        with anyio.fail_after(20):
            await shell_done.wait()
        session_id = rt.session_id
    assert session_id is not None

    resumed = runtime(tmp_path, [], resume=session_id)
    async with resumed:
        ws = resumed.workspace
        got = dumped(replay_updates(resumed.agent.history.items(), ws))
    kinds = [u["sessionUpdate"] for u in got]
    assert kinds[:3] == ["user_message_chunk", "agent_thought_chunk", "tool_call"]
    assert got[0]["content"]["text"] == "change beta" and got[1]["content"]["text"] == "look first"
    calls = {u["toolCallId"]: u for u in got if u["sessionUpdate"] == "tool_call"}
    finals = {u["toolCallId"]: u for u in got if u["sessionUpdate"] == "tool_call_update"}
    assert [calls[c]["kind"] for c in ("r1", "e1", "b1")] == ["read", "edit", "execute"]
    assert calls["r1"]["locations"] == [{"path": str(ws / "notes.txt")}]
    assert calls["e1"]["content"] == [
        {"type": "diff", "path": str(ws / "notes.txt"), "oldText": "beta", "newText": "gamma"}
    ]
    assert {c: finals[c]["status"] for c in ("r1", "e1", "b1")} == dict.fromkeys(
        ("r1", "e1", "b1"), "completed"
    )
    assert "content" not in finals["e1"]  # the diff stays what the client shows
    assert "alpha" in finals["b1"]["content"][0]["content"]["text"]
    answer = [u["content"]["text"] for u in got if u["sessionUpdate"] == "agent_message_chunk"]
    assert answer == ["It says gamma now."]
    shell = [u for u in got if u.get("toolCallId", "").startswith("shell-replay-")]
    assert shell and shell[0]["title"] == "bash echo hi" and shell[0]["status"] == "completed"
    # every call's update comes after its start
    order = [(u["sessionUpdate"], u.get("toolCallId")) for u in got]
    for c in ("r1", "e1", "b1"):
        assert order.index(("tool_call", c)) < order.index(("tool_call_update", c))


def test_refused_calls_steering_and_hidden_lanes(tmp_path: Path) -> None:
    items = [
        UserMessage(text='look\n\n<file path="a.txt">\nsecret\n</file>'),
        AssistantMessage(
            text="",
            tool_calls=[ToolCall(id="w1", name="write", arguments={"path": "a.txt", "content": "x"})],
            stop_reason="tool_use",
        ),
        ToolResult(call_id="w1", name="write", content="not allowed here", status="refused"),
        UserMessage(text="use b.txt", lane="steer"),
        UserMessage(text="call read", lane="reminder", source="system"),
        AssistantMessage(text="", error="provider failed", stop_reason="error"),
    ]
    got = dumped(replay_updates(items, tmp_path))
    assert got[0] == {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "look"}}
    assert got[1]["content"] == [{"type": "diff", "path": str(tmp_path / "a.txt"), "newText": "x"}]
    assert got[2] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "w1",
        "status": "failed",
        "content": [{"type": "content", "content": {"type": "text", "text": "refused: not allowed here"}}],
    }
    assert got[3]["content"]["text"] == "use b.txt"
    assert got[4] == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "(provider failed)"},
    }
    assert len(got) == 5
