"""``session/load``: a session the TUI's runtime wrote is replayed (user, agent and thought chunks,
tool calls with their final status) before the answer, continues with its history, and a session
left paused comes back paused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import acp
import pytest

from owltui.agent.pause import GATE
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp.harness import connected, env_for

pytestmark = pytest.mark.anyio


async def _tui_session(tmp_path: Path, ws: Path, *, pause: bool = False) -> str:
    """A session written as the TUI writes one: the runtime built from options, one turn, closed."""
    (ws / "data.txt").write_text("forty-two\n")
    model = ScriptedModel(
        [
            Step(thinking="let me look", calls=[Call("read", {"path": "data.txt"}, id="r1")]),
            Step(text="the answer is forty-two"),
        ]
    )
    runtime = build_runtime(Options(workspace=ws), model=model, env=env_for(tmp_path))
    async with runtime:
        runtime.agent.prompt("what is in data.txt?")
        await runtime.wait_settled()
        if pause:
            runtime.pause()
    assert runtime.session_id is not None
    return runtime.session_id


def _value(options: list[Any], wanted: str) -> Any:
    for o in options:
        o = o.root if hasattr(o, "root") else o
        if o.id == wanted:
            return o.current_value
    raise AssertionError(wanted)


async def test_load_replays_a_tui_session_then_continues(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = await _tui_session(tmp_path, ws)
    later = ScriptedModel([Step(text="still forty-two")])
    async with connected(tmp_path, lambda _ws: later) as (conn, client):
        await conn.initialize(protocol_version=1)
        loaded = await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert loaded is not None
        kinds = client.kinds(sid)  # all of it arrived before the answer
        assert "user_message_chunk" in kinds and "agent_message_chunk" in kinds and "tool_call" in kinds
        assert (
            kinds.index("user_message_chunk") < kinds.index("tool_call") < kinds.index("agent_message_chunk")
        )
        users = "".join(u.content.text for u in client.of("user_message_chunk", sid))
        assert "what is in data.txt?" in users
        assert "the answer is forty-two" in client.text(sid)
        assert "let me look" in "".join(u.content.text for u in client.of("agent_thought_chunk", sid))
        calls = [
            u
            for u in client.of("tool_call", sid) + client.of("tool_call_update", sid)
            if u.tool_call_id == "r1"
        ]
        assert calls[-1].status == "completed"
        answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("and now?")])
        assert answer.stop_reason == "end_turn"
    texts = [getattr(m, "text", "") for m in later.views[0]]
    assert "what is in data.txt?" in texts[0] and texts[-1] == "and now?"


async def test_a_paused_session_comes_back_paused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        sid = await _tui_session(tmp_path, ws, pause=True)
        GATE.resume()  # the process-wide gate: as a fresh process would start
        async with connected(tmp_path, lambda _ws: ScriptedModel([])) as (conn, _client):
            await conn.initialize(protocol_version=1)
            loaded = await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
            assert loaded is not None and loaded.config_options is not None
            assert _value(loaded.config_options, "paused") in ("on", True)
            state = await conn.ext_method("owltui/state", {"sessionId": sid})
            assert state["paused"] is True
    finally:
        GATE.resume()
