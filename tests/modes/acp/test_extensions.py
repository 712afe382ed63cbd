"""``_owltui/*`` extension methods answer like their RPC twins, on a real runtime's command layer."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import RequestError

from owltui.modes.acp.extensions import EXTENSIONS, call_extension
from owltui.testing.scripted import Call, Step
from tests.modes.acp.kit import commands, runtime

pytestmark = pytest.mark.anyio


def test_the_names() -> None:
    assert {
        "steer",
        "follow_up",
        "queue_edit",
        "queue_remove",
        "queue_move",
        "pause",
        "resume",
        "require_tool",
        "checkpoints",
        "rewind",
        "state",
    } == EXTENSIONS


async def test_queue_extensions_while_a_run_goes(tmp_path: Path) -> None:
    hold = anyio.Event()
    rt = runtime(tmp_path, [Step(text="first", gate=hold), Step(text="second"), Step(text="third")])
    cmds = commands(rt)
    async with rt:
        assert rt.agent.prompt("go")
        steer = await call_extension(cmds, "steer", {"text": "use tabs"})
        follow = await call_extension(cmds, "_owltui/follow_up", {"text": "then test"})
        assert steer["ok"] and isinstance(steer["queue_id"], str)
        state = await call_extension(cmds, "state", {})
        assert state["ok"] and state["running"] is True
        assert [i["text"] for i in state["queue"]["steer"]] == ["use tabs"]
        edited = await call_extension(cmds, "queue_edit", {"id": steer["queue_id"], "text": "use spaces"})
        assert edited["item"]["text"] == "use spaces" and edited["lane"] == "steer"
        moved = await call_extension(cmds, "queue_move", {"id": follow["queue_id"], "lane": "steer"})
        assert moved["lane"] == "steer"
        removed = await call_extension(cmds, "queue_remove", {"id": steer["queue_id"]})
        assert removed["item"]["id"] == steer["queue_id"]
        with pytest.raises(RequestError) as gone:
            await call_extension(cmds, "queue_remove", {"id": steer["queue_id"]})
        assert gone.value.code == -32602 and gone.value.data is not None and gone.value.data["reason"]
        hold.set()
        await rt.wait_settled()
        texts = [
            getattr(i, "text", None) for i in rt.agent.history.items() if getattr(i, "role", "") == "user"
        ]
        assert "then test" in texts and "use spaces" not in texts


async def test_pause_resume_require(tmp_path: Path) -> None:
    rt = runtime(tmp_path, [])
    cmds = commands(rt)
    async with rt:
        try:
            paused = await call_extension(cmds, "pause", {"freeze": False})
            assert paused == {"ok": True, "changed": True, "frozen": False}
            assert (await call_extension(cmds, "state", {}))["paused"] is True
        finally:
            resumed = await call_extension(cmds, "resume", {})
        assert resumed == {"ok": True, "changed": True}
        assert (await call_extension(cmds, "require_tool", {"tool": "read", "reason": "look first"}))["ok"]
        assert (await call_extension(cmds, "state", {}))["requirement"] == "read"
        with pytest.raises(RequestError) as bad:
            await call_extension(cmds, "require_tool", {"tool": "no_such_tool"})
        assert "unknown tool" in bad.value.data["reason"]  # type: ignore[index]


async def test_checkpoints_and_rewind(tmp_path: Path) -> None:
    steps = [Step(calls=[Call("write", {"path": "a.txt", "content": "new"})]), Step(text="written")]
    rt = runtime(tmp_path, steps, yes=True)
    (rt.workspace / "a.txt").write_text("old")
    cmds = commands(rt)
    async with rt:
        assert rt.agent.prompt("write it")
        await rt.wait_settled()
        assert (rt.workspace / "a.txt").read_text() == "new"
        listed = await call_extension(cmds, "checkpoints", {})
        assert listed["ok"] and len(listed["checkpoints"]) == 1
        cp = listed["checkpoints"][0]["id"]
        back = await call_extension(cmds, "rewind", {"id": cp, "conversation": False})
        assert back["ok"] and back["restored"]
        assert (rt.workspace / "a.txt").read_text() == "old"


async def test_unknown_and_malformed(tmp_path: Path) -> None:
    rt = runtime(tmp_path, [])
    cmds = commands(rt)
    async with rt:
        with pytest.raises(RequestError) as unknown:
            await call_extension(cmds, "frobnicate", {})
        assert unknown.value.code == -32601
        with pytest.raises(RequestError) as bad:
            await call_extension(cmds, "steer", {"text": 3})
        assert bad.value.code == -32602 and "'text'" in bad.value.data["reason"]  # type: ignore[index]
