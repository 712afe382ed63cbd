"""ACP over a pipe with the SDK's own client: initialize, session/new, prompts with a streamed answer,
a read, an approved edit (diff content), a command (output content), slash commands, attachments,
set_config_option and every extension method."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest
from acp.schema import ClientCapabilities, FileSystemCapabilities, TextResourceContents

from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp.harness import Recorder, connected

pytestmark = pytest.mark.anyio


def text(t: str) -> acp.schema.TextContentBlock:
    return acp.text_block(t)


async def test_initialize_answers_version_one_and_capabilities(tmp_path: Path) -> None:
    async with connected(tmp_path) as (conn, _client):
        for asked in (1, 7):
            init = await conn.initialize(protocol_version=asked)
            assert init.protocol_version == 1
        caps = init.agent_capabilities
        assert caps is not None and caps.load_session is True
        assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context is True
        assert caps.prompt_capabilities.image is True  # a model without vision refuses them, with a note
        assert caps.mcp_capabilities is not None and caps.mcp_capabilities.http is True
        assert caps.session_capabilities is not None
        assert caps.session_capabilities.list is not None and caps.session_capabilities.close is not None
        assert init.agent_info is not None and init.agent_info.name == "owltui"
        assert [m.id for m in init.auth_methods or []] == ["env"]
        assert init.field_meta is not None and "_owltui/steer" in init.field_meta["owltui"]["extensions"]


async def test_streamed_answer_and_commands_after_new(tmp_path: Path) -> None:
    model = ScriptedModel([Step(text="hello there from the owl", chunk=4)])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = new.session_id
        assert new.config_options
        await client.wait_for(lambda: client.of("available_commands_update", sid))
        kinds = [
            m.get("params", {}).get("update", {}).get("sessionUpdate") or m.get("result", {})
            for m in client.incoming
        ]
        answered = next(i for i, m in enumerate(kinds) if isinstance(m, dict) and m.get("sessionId") == sid)
        assert kinds.index("available_commands_update") > answered  # after the session/new response
        names = {c.name for c in client.of("available_commands_update", sid)[0].available_commands}
        assert {"pause", "resume", "model", "rewind"} <= names
        answer = await conn.prompt(session_id=sid, prompt=[text("hi")])
        assert answer.stop_reason == "end_turn"
        chunks = client.of("agent_message_chunk", sid)
        assert len(chunks) > 1 and client.text(sid) == "hello there from the owl"
        usage = client.of("usage_update", sid)
        assert usage and usage[-1].used > 0


async def test_read_edit_and_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    model = ScriptedModel(
        [
            Step(calls=[Call("read", {"path": "notes.txt"}, id="r1")]),
            Step(
                calls=[Call("edit", {"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}, id="e1")]
            ),
            Step(calls=[Call("bash", {"command": "echo from-the-shell"}, id="b1")]),
            Step(text="done"),
        ]
    )
    client = Recorder(choose=lambda _call, _options: "allow")
    async with connected(tmp_path, lambda _ws: model, client=client) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text("work")])
        assert answer.stop_reason == "end_turn"
    assert (ws / "notes.txt").read_text() == "alpha\ngamma\n"
    starts = {u.tool_call_id: u for u in client.of("tool_call", sid)}
    assert starts["r1"].kind == "read" and starts["e1"].kind == "edit" and starts["b1"].kind == "execute"
    assert starts["r1"].locations and starts["r1"].locations[0].path == str(ws / "notes.txt")
    asked = {call.tool_call_id for call, _options in client.asked}
    assert "e1" in asked and "r1" not in asked  # reads never ask
    progress = client.of("tool_call_update", sid)
    final = {u.tool_call_id: u for u in progress if u.status in ("completed", "failed")}
    assert final["r1"].status == final["e1"].status == final["b1"].status == "completed"
    diffs = [
        c
        for u in [starts["e1"], *progress]
        if u.tool_call_id == "e1"
        for c in u.content or []
        if c.type == "diff"
    ]
    assert diffs and diffs[0].new_text.endswith("gamma\n")
    out = [
        c.content.text
        for u in progress
        if u.tool_call_id == "b1"
        for c in u.content or []
        if c.type == "content"
    ]
    assert any("from-the-shell" in t for t in out)


async def test_rejected_and_always(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = ScriptedModel(
        [
            Step(calls=[Call("bash", {"command": "touch made-by-bash"}, id="b1")]),
            Step(calls=[Call("bash", {"command": "git status"}, id="b2")]),
            Step(text="ok"),
        ]
    )
    choices = iter(["deny", "always"])
    client = Recorder(choose=lambda _call, _options: next(choices))
    async with connected(tmp_path, lambda _ws: model, client=client) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        assert (await conn.prompt(session_id=sid, prompt=[text("go")])).stop_reason == "end_turn"
    assert not (ws / "made-by-bash").exists()
    first, second = client.asked
    assert first[1][0].option_id == "allow" and first[1][-1].kind == "reject_once"
    always = [o for o in second[1] if o.kind == "allow_always"]
    assert always and "git status" in always[0].name and "permissions.toml" in always[0].name
    final = {u.tool_call_id: u for u in client.of("tool_call_update") if u.status in ("completed", "failed")}
    assert final["b1"].status == "failed"
    assert "git status" in (ws / ".owltui" / "permissions.toml").read_text()


async def test_slash_command_and_attachments(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    model = ScriptedModel([Step(text="seen")])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text("/help")])
        assert answer.stop_reason == "end_turn" and "/pause" in client.text(sid)
        assert model.calls == 0
        blocks = [
            text("look at"),
            acp.resource_link_block("a.py", f"file://{ws / 'a.py'}"),
            acp.resource_link_block("a.py", f"file://{ws / 'a.py'}#L10-12"),
            acp.resource_block(TextResourceContents(uri=f"file://{ws / 'b.md'}", text="embedded words")),
        ]
        assert (await conn.prompt(session_id=sid, prompt=blocks)).stop_reason == "end_turn"
    sent = model.views[0][-1].text
    assert sent.startswith("look at @a.py")
    assert '<file path="a.py">' in sent and "line 30" in sent
    assert 'lines="10-12"' in sent and "line 11" in sent
    assert '<file path="b.md">\nembedded words' in sent


async def test_editor_writes_through_the_client(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = ScriptedModel(
        [Step(calls=[Call("write", {"path": "new.txt", "content": "hi\n"}, id="w1")]), Step(text="ok")]
    )
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
        await conn.initialize(protocol_version=1, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        assert (await conn.prompt(session_id=sid, prompt=[text("write")])).stop_reason == "end_turn"
    assert client.writes == [(str(ws / "new.txt"), "hi\n")]
    assert (ws / "new.txt").read_text() == "hi\n"


def test_permission_options_say_what_they_do() -> None:
    from owltui.modes.acp.permissions import options_for, question
    from owltui.session.approvals import Pending

    rerun = Pending("c1", "bash", {"command": "make", "sandbox": "off", "reason": "write outside"})
    options = options_for(rerun, rerun.name, rerun.arguments)
    assert [(o.option_id, o.kind) for o in options] == [("allow", "allow_once"), ("deny", "reject_once")]
    assert "without the sandbox" in options[0].name
    shown = question(rerun, "c1", rerun.name, rerun.arguments, Path("/tmp"))
    assert shown.title is not None and "WITHOUT the sandbox" in shown.title
    plain = Pending("c2", "write", {"path": "x.txt", "content": "x"})
    assert [o.option_id for o in options_for(plain, plain.name, plain.arguments)] == ["allow", "deny"]


async def test_follow_up_lane_and_slash_escape(tmp_path: Path) -> None:
    import anyio

    gate = anyio.Event()
    model = ScriptedModel([Step(text="first", chunk=2, mid_gate=gate), Step(text="then the follow-up")])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        reasons: list[str] = []

        async def ask(words: str, **meta: object) -> None:
            reasons.append((await conn.prompt(session_id=sid, prompt=[text(words)], **meta)).stop_reason)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "go")
            await client.wait_for(lambda: client.of("agent_message_chunk", sid))
            tg.start_soon(lambda: ask("//not a command", owltui={"lane": "follow_up"}))
            await client.wait_for(
                lambda: any(m == "owltui/queue" and p["queue"]["follow_up"] for m, p in client.notices)
            )
            gate.set()
    assert reasons == ["end_turn", "end_turn"]
    assert model.views[1][-1].text == "/not a command"


async def test_custom_commands_are_offered_and_run(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".owltui" / "commands").mkdir(parents=True)
    (ws / ".owltui" / "commands" / "review.md").write_text("Review $ARGUMENTS carefully.\n")
    model = ScriptedModel([Step(text="reviewed")])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        listed = await client.wait_for(lambda: client.of("available_commands_update", sid))
        assert "review" in {c.name for c in listed[0].available_commands}
        answer = await conn.prompt(session_id=sid, prompt=[text("/review the parser")])
        assert answer.stop_reason == "end_turn" and client.text(sid).endswith("reviewed")
    assert "Review the parser carefully." in model.views[0][-1].text
