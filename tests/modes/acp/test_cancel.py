"""Cancelling over ACP: mid-stream (answered ``cancelled`` quickly, the next prompt gets its own
answer), a prompt sent while the cancel settles, a prompt sent during a run (queued as steering, the
earlier prompt answered when it is delivered), and a cancel that withdraws a waiting approval."""

from __future__ import annotations

import time
from pathlib import Path

import acp
import anyio
import pytest

from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp.harness import Recorder, connected

pytestmark = pytest.mark.anyio


async def _open(conn: acp.ClientSideConnection, cwd: Path) -> str:
    await conn.initialize(protocol_version=1)
    return str((await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id)


def _output_shows(client: Recorder, sid: str, word: str) -> bool:
    """A command's output, as the client has been shown it, holds ``word``."""
    return any(
        word in c.content.text
        for u in client.of("tool_call_update", sid)
        for c in u.content or []
        if c.type == "content"
    )


async def test_cancel_mid_stream_then_a_fresh_prompt(tmp_path: Path) -> None:
    never = anyio.Event()
    model = ScriptedModel(
        [Step(text="one two three four", chunk=4, mid_gate=never), Step(text="second answer")]
    )
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        sid = await _open(conn, tmp_path)
        answers: list[str] = []

        async def first() -> None:
            answers.append((await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])).stop_reason)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await client.wait_for(lambda: client.of("agent_message_chunk", sid))
            began = time.monotonic()
            await conn.cancel(session_id=sid)
        assert answers == ["cancelled"] and time.monotonic() - began < 2
        second = await conn.prompt(session_id=sid, prompt=[acp.text_block("again")])
        assert second.stop_reason == "end_turn"
        assert client.text(sid).endswith("second answer")


async def test_prompt_while_the_cancel_settles(tmp_path: Path) -> None:
    stubborn = "trap '' TERM; echo started; sleep 30"  # the kill waits out its grace: ~2 s to settle
    model = ScriptedModel([Step(calls=[Call("bash", {"command": stubborn}, id="b1")]), Step(text="fresh")])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        sid = await _open(conn, tmp_path)
        answers: dict[str, str] = {}

        async def ask(name: str, words: str) -> None:
            answers[name] = (await conn.prompt(session_id=sid, prompt=[acp.text_block(words)])).stop_reason

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "old", "first")
            await client.wait_for(lambda: _output_shows(client, sid, "started"))
            await conn.cancel(session_id=sid)
            tg.start_soon(ask, "new", "second")  # arrives while the aborted run is still ending
    assert answers == {"old": "cancelled", "new": "end_turn"}
    assert model.calls == 2 and model.views[1][-1].text == "second"


async def test_prompt_during_a_run_is_steering(tmp_path: Path) -> None:
    gate, second_gate = anyio.Event(), anyio.Event()
    model = ScriptedModel(
        [Step(text="working on it", chunk=3, mid_gate=gate), Step(text="steered answer", gate=second_gate)]
    )
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        sid = await _open(conn, tmp_path)
        order: list[tuple[str, str]] = []

        async def ask(name: str, words: str) -> None:
            reason = (await conn.prompt(session_id=sid, prompt=[acp.text_block(words)])).stop_reason
            order.append((name, reason))
            client.changed.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "first", "start")
            await client.wait_for(lambda: client.of("agent_message_chunk", sid))
            tg.start_soon(ask, "second", "also this")
            await client.wait_for(
                lambda: any(m == "owltui/queue" and p["queue"]["steer"] for m, p in client.notices)
            )
            gate.set()
            await client.wait_for(lambda: order)  # answered once its steering was delivered ...
            assert order == [("first", "end_turn")] and model.calls == 2  # ... while the run goes on
            second_gate.set()
    assert order == [("first", "end_turn"), ("second", "end_turn")]
    assert "also this" in model.views[1][-1].text
    users = [u.content.text for u in client.of("user_message_chunk", sid)]
    assert any("also this" in t for t in users)


async def test_cancel_withdraws_a_waiting_approval(tmp_path: Path) -> None:
    model = ScriptedModel(
        [Step(calls=[Call("bash", {"command": "touch never-made"}, id="b1")]), Step(text="x")]
    )
    client = Recorder(hold_permission=anyio.Event())
    async with connected(tmp_path, lambda _ws: model, client=client) as (conn, client):
        sid = await _open(conn, tmp_path)
        answers: list[str] = []

        async def first() -> None:
            answers.append((await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])).stop_reason)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await client.wait_for(lambda: client.asked)
            await conn.cancel(session_id=sid)
        assert answers == ["cancelled"]
        assert client.hold_permission is not None
        client.hold_permission.set()  # a late "allow" changes nothing
        final = await client.wait_for(
            lambda: [
                u
                for u in client.of("tool_call_update", sid)
                if u.tool_call_id == "b1" and u.status == "failed"
            ]
        )
        assert final
    assert not (tmp_path / "never-made").exists()


async def test_cancel_stops_a_shell_command_typed_as_a_prompt(tmp_path: Path) -> None:
    async with connected(tmp_path, lambda _ws: ScriptedModel([])) as (conn, client):
        sid = await _open(conn, tmp_path)
        answers: list[str] = []

        async def run() -> None:
            prompt = [acp.text_block("!echo begun; sleep 30")]
            answers.append((await conn.prompt(session_id=sid, prompt=prompt)).stop_reason)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await client.wait_for(lambda: _output_shows(client, sid, "begun"))
            began = time.monotonic()
            await conn.cancel(session_id=sid)
        assert answers == ["cancelled"] and time.monotonic() - began < 5
