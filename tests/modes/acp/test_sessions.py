"""Sessions over ACP: two sessions with different cwds in one process keep their files, rules and
queues apart; set_config_option; every ``_owltui/*`` extension; list and close; a missing key is
``auth_required``; the project's ``.mcp.json`` is asked about once."""

from __future__ import annotations

import json
from pathlib import Path

import acp
import anyio
import pytest
from acp import RequestError

from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp.harness import Recorder, connected

pytestmark = pytest.mark.anyio


def _ws(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    ws.mkdir()
    return ws


async def test_two_sessions_keep_files_rules_and_queues_apart(tmp_path: Path) -> None:
    a, b = _ws(tmp_path, "a"), _ws(tmp_path, "b")
    (a / "secret.txt").write_text("only in a\n")
    (a / ".owltui").mkdir()
    (a / ".owltui" / "permissions.toml").write_text('[allow]\nbash = ["echo hi"]\n')
    gate = anyio.Event()
    models = {
        a: ScriptedModel(
            [
                Step(
                    calls=[
                        Call("read", {"path": "secret.txt"}, id="ra"),
                        Call("bash", {"command": "echo hi"}, id="ba"),
                    ]
                ),
                Step(text="a is slow", chunk=2, mid_gate=gate),
                Step(text="a done"),
            ]
        ),
        b: ScriptedModel(
            [
                Step(
                    calls=[
                        Call("read", {"path": "secret.txt"}, id="rb"),
                        Call("bash", {"command": "echo hi"}, id="bb"),
                    ]
                ),
                Step(text="b done"),
            ]
        ),
    }
    client = Recorder(choose=lambda _call, _options: "deny")
    async with connected(tmp_path, lambda ws: models[ws], client=client) as (conn, client):
        await conn.initialize(protocol_version=1)
        sa = (await conn.new_session(cwd=str(a), mcp_servers=[])).session_id
        sb = (await conn.new_session(cwd=str(b), mcp_servers=[])).session_id
        assert sa != sb
        reasons: list[str] = []

        async def ask(sid: str, words: str) -> None:
            reasons.append((await conn.prompt(session_id=sid, prompt=[acp.text_block(words)])).stop_reason)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, sa, "in a")
            await client.wait_for(lambda: client.of("agent_message_chunk", sa))
            tg.start_soon(ask, sa, "queued in a")
            await client.wait_for(
                lambda: any(p.get("sessionId") == sa and p["queue"]["steer"] for m, p in client.notices)
            )
            state_b = await conn.ext_method("owltui/state", {"sessionId": sb})
            state_a = await conn.ext_method("owltui/state", {"sessionId": sa})
            assert state_b["queue"]["steer"] == [] and state_b["running"] is False
            assert [i["text"] for i in state_a["queue"]["steer"]] == ["queued in a"]
            assert (
                await conn.prompt(session_id=sb, prompt=[acp.text_block("in b")])
            ).stop_reason == "end_turn"
            gate.set()
    assert reasons == ["end_turn", "end_turn"]
    asked = {call.tool_call_id for call, _options in client.asked}
    assert "bb" in asked and "ba" not in asked  # a's rule allows it; b has no such rule
    final = {u.tool_call_id: u for u in client.of("tool_call_update") if u.status in ("completed", "failed")}
    assert final["ra"].status == "completed" and final["rb"].status == "failed"
    outputs = [
        c.content.text
        for u in client.of("tool_call_update", sb)
        for c in u.content or []
        if c.type == "content"
    ]
    assert not any("only in a" in t for t in outputs)


async def test_set_config_option_and_updates(tmp_path: Path) -> None:
    async with connected(tmp_path, lambda _ws: ScriptedModel([])) as (conn, client):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = new.session_id
        ids = {o.root.id if hasattr(o, "root") else o.id for o in new.config_options or []}
        assert {"mode", "model", "steering", "paused"} <= ids
        got = await conn.set_config_option(config_id="mode", session_id=sid, value="edits")
        assert got is not None
        current = {
            (o.root if hasattr(o, "root") else o).id: (o.root if hasattr(o, "root") else o).current_value
            for o in got.config_options
        }
        assert current["mode"] == "edits"
        with pytest.raises(RequestError):
            await conn.set_config_option(config_id="bogus", session_id=sid, value="x")
        await conn.ext_method("owltui/pause", {"sessionId": sid})
        try:
            updates = await client.wait_for(lambda: client.of("config_option_update", sid))
            paused = {
                (o.root if hasattr(o, "root") else o).id: (o.root if hasattr(o, "root") else o).current_value
                for o in updates[-1].config_options
            }
            assert paused["paused"] in ("on", True)
            await client.wait_for(lambda: any(m == "owltui/paused" for m, _p in client.notices))
        finally:
            await conn.ext_method("owltui/resume", {"sessionId": sid})


async def test_every_extension(tmp_path: Path) -> None:
    gate = anyio.Event()
    model = ScriptedModel([Step(text="busy", chunk=1, mid_gate=gate), Step(text="after")])
    ws = _ws(tmp_path, "ws")  # not the directory holding the data dir (and its checkpoints)
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        s = {"sessionId": sid}
        reasons: list[str] = []

        async def ask() -> None:
            reasons.append(
                (await conn.prompt(session_id=sid, prompt=[acp.text_block("start it")])).stop_reason
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await client.wait_for(lambda: client.of("agent_message_chunk", sid))
            one = (await conn.ext_method("owltui/follow_up", {**s, "text": "later one"}))["queue_id"]
            two = (await conn.ext_method("owltui/steer", {**s, "text": "steer two"}))["queue_id"]
            edited = await conn.ext_method("owltui/queue_edit", {**s, "id": two, "text": "steer edited"})
            assert edited["item"]["text"] == "steer edited"
            moved = await conn.ext_method("owltui/queue_move", {**s, "id": one, "lane": "steer"})
            assert moved["lane"] == "steer"
            assert (await conn.ext_method("owltui/queue_remove", {**s, "id": one}))["item"]["id"] == one
            assert (await conn.ext_method("owltui/require_tool", {**s, "tool": "read"}))["ok"] is True
            await conn.ext_method("owltui/require_tool", {**s, "tool": "off"})
            assert (await conn.ext_method("owltui/pause", s))["changed"] is True
            assert (await conn.ext_method("owltui/state", s))["paused"] is True
            assert (await conn.ext_method("owltui/resume", s))["changed"] is True
            state = await conn.ext_method("owltui/state", s)
            assert [i["text"] for i in state["queue"]["steer"]] == ["steer edited"]
            gate.set()
        assert reasons == ["end_turn"] and "after" in client.text(sid)
        assert "steer edited" in model.views[1][-1].text
        checkpoints = (await conn.ext_method("owltui/checkpoints", s))["checkpoints"]
        assert isinstance(checkpoints, list)
        if checkpoints:  # git is there: rewinding the first turn
            rewound = await conn.ext_method("owltui/rewind", {**s, "id": checkpoints[0]["id"], "files": True})
            assert rewound["ok"] is True
        with pytest.raises(RequestError):
            await conn.ext_method("owltui/queue_edit", {**s, "id": "deadbeef", "text": "x"})
        with pytest.raises(RequestError):
            await conn.ext_method("owltui/nothing", s)
        with pytest.raises(RequestError):
            await conn.ext_method("owltui/state", {"sessionId": "no-such-session"})


async def test_list_and_close(tmp_path: Path) -> None:
    async with connected(tmp_path, lambda _ws: ScriptedModel([Step(text="answer")])) as (conn, _client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("remember me")])
        listed = await conn.list_sessions(cwd=str(tmp_path))
        assert sid in [i.session_id for i in listed.sessions]
        assert any(i.title == "remember me" for i in listed.sessions)
        await conn.close_session(session_id=sid)
        with pytest.raises(RequestError):
            await conn.prompt(session_id=sid, prompt=[acp.text_block("gone")])


async def test_missing_key_is_auth_required(tmp_path: Path) -> None:
    async with connected(tmp_path, options=Options(workspace=tmp_path, provider="anthropic")) as (
        conn,
        _client,
    ):
        await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as caught:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert caught.value.code == -32000 and "ANTHROPIC_API_KEY" in json.dumps(caught.value.data)
        with pytest.raises(RequestError) as again:
            await conn.authenticate(method_id="env")
        assert again.value.code == -32000


async def test_project_mcp_json_is_asked_once(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "ws")
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"tools": {"command": "no-such-mcp-server"}}}))
    client = Recorder(choose=lambda _call, _options: "mcp-decline")
    async with connected(
        tmp_path, lambda _ws: ScriptedModel([Step(text="a"), Step(text="b")]), client=client
    ) as (
        conn,
        client,
    ):
        await conn.initialize(protocol_version=1)
        first = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.prompt(session_id=first, prompt=[acp.text_block("one")])
        second = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.prompt(session_id=second, prompt=[acp.text_block("two")])
    questions = [call for call, _options in client.asked if call.tool_call_id == "owltui-mcp-project"]
    assert len(questions) == 1 and ".mcp.json" in json.dumps(questions[0].raw_input)


async def test_the_clients_mcp_servers_count_as_approved(tmp_path: Path) -> None:
    import sys

    from acp.schema import McpServerStdio

    ws = _ws(tmp_path, "ws")
    server = McpServerStdio(
        name="time", command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[]
    )
    model = ScriptedModel(
        [
            Step(calls=[Call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}, id="t1")]),
            Step(text="late"),
        ]
    )
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
        assert (await conn.prompt(session_id=sid, prompt=[acp.text_block("time?")])).stop_reason == "end_turn"
    assert not [c for c, _o in client.asked if c.tool_call_id == "owltui-mcp-project"]
    final = [
        u for u in client.of("tool_call_update", sid) if u.tool_call_id == "t1" and u.status == "completed"
    ]
    assert final and "+09:00" in json.dumps([c.model_dump() for c in final[-1].content or []])


async def test_config_options_change_mid_run(tmp_path: Path) -> None:
    gate = anyio.Event()
    model = ScriptedModel([Step(text="thinking slowly", chunk=2, mid_gate=gate)])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        reasons: list[str] = []

        async def ask() -> None:
            reasons.append((await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])).stop_reason)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await client.wait_for(lambda: client.of("agent_message_chunk", sid))
            got = await conn.set_config_option(config_id="steering", session_id=sid, value="immediate")
            assert got is not None
            values = {
                (o.root if hasattr(o, "root") else o).id: (o.root if hasattr(o, "root") else o).current_value
                for o in got.config_options
            }
            assert values["steering"] == "immediate" and {"mode", "model", "paused"} <= set(values)
            assert reasons == []  # the run goes on
            gate.set()
    assert reasons == ["end_turn"]


async def test_bad_requests_are_one_sentence(tmp_path: Path) -> None:
    async with connected(tmp_path) as (conn, _client):
        await conn.initialize(protocol_version=1)
        for cwd in ("relative/dir", str(tmp_path / "missing")):
            with pytest.raises(RequestError) as caught:
                await conn.new_session(cwd=cwd, mcp_servers=[])
            assert caught.value.code == -32602 and "cwd" in json.dumps(caught.value.data)
        with pytest.raises(RequestError) as caught:
            await conn.load_session(cwd=str(tmp_path), session_id="no-such-session", mcp_servers=[])
        assert "no-such-session" in json.dumps(caught.value.data)
        with pytest.raises(RequestError):
            await conn.prompt(session_id="nobody", prompt=[acp.text_block("hi")])


async def test_an_answer_given_while_paused_takes_effect_on_resume(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "ws")
    model = ScriptedModel([Step(calls=[Call("bash", {"command": "touch made"}, id="b1")]), Step(text="ok")])
    client = Recorder(hold_permission=anyio.Event())
    async with connected(tmp_path, lambda _ws: model, client=client) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        s = {"sessionId": sid}
        reasons: list[str] = []

        async def ask() -> None:
            reasons.append((await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])).stop_reason)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                await client.wait_for(lambda: client.asked)
                await conn.ext_method("owltui/pause", {**s, "freeze": False})
                assert client.hold_permission is not None
                client.hold_permission.set()  # "allow", while paused
                for _ in range(100):
                    if not (await conn.ext_method("owltui/state", s))["approvals"]:
                        break
                assert not (ws / "made").exists() and reasons == []
                await conn.ext_method("owltui/resume", s)
        finally:
            from owltui.agent.pause import GATE

            GATE.resume()
    assert reasons == ["end_turn"] and (ws / "made").exists()
