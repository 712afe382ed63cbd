"""Plan mode and the todo list over ACP: a presented plan is a permission request (accept into
``edits`` or ``ask``, keep planning), an accepted plan changes the ``mode`` option, a cancel
withdraws the question, a prompt sent while it waits refines the plan; the todo list is the
``plan`` update, live and after ``session/load``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import acp
import anyio
import pytest
from acp.schema import PermissionOption, ToolCallUpdate

from owltui.modes.acp.config_options import set_config_option
from owltui.modes.acp.plans import PLAN_TITLE
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp import kit
from tests.modes.acp.harness import Recorder, connected, env_for

pytestmark = pytest.mark.anyio

PLAN = "# Plan\n\n- write `b.txt`\n- check it"


def _plan_steps(after: list[Step]) -> list[Step]:
    """Read, a write refused in plan mode, the plan; then ``after``."""
    return [
        Step(calls=[Call("read", {"path": "a.txt"}, id="r1")]),
        Step(calls=[Call("write", {"path": "b.txt", "content": "early"}, id="w1")]),
        Step(calls=[Call("exit_plan", {"plan": PLAN}, id="p1")]),
        *after,
    ]


def _chooser(plan_choice: str | None) -> Any:
    def choose(call: ToolCallUpdate, _options: list[PermissionOption]) -> str | None:
        return plan_choice if call.title == PLAN_TITLE else "deny"

    return choose


def _mode(options: list[Any]) -> Any:
    for o in options:
        o = o.root if hasattr(o, "root") else o
        if o.id == "mode":
            return o.current_value
    raise AssertionError("no mode option")


def _final(client: Recorder, sid: str, call_id: str) -> Any:
    seen = [
        u
        for u in client.of("tool_call", sid) + client.of("tool_call_update", sid)
        if u.tool_call_id == call_id
    ]
    return seen[-1]


async def _prompt(conn: acp.ClientSideConnection, sid: str, words: str) -> str:
    with anyio.fail_after(30):  # a plan nobody answers would wait forever
        return str((await conn.prompt(session_id=sid, prompt=[acp.text_block(words)])).stop_reason)


async def _open(conn: acp.ClientSideConnection, cwd: Path) -> tuple[str, Any]:
    await conn.initialize(protocol_version=1)
    new = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return str(new.session_id), new


async def test_accepting_the_plan_into_edits_lets_the_next_write_run(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    model = ScriptedModel(
        _plan_steps(
            [Step(calls=[Call("write", {"path": "b.txt", "content": "planned"}, id="w2")]), Step(text="done")]
        )
    )
    client = Recorder(choose=_chooser("edits"))
    options = Options(workspace=tmp_path, permission_mode="plan")
    async with connected(tmp_path, lambda _ws: model, client=client, options=options) as (conn, _):
        sid, new = await _open(conn, tmp_path)
        assert new.config_options is not None and _mode(new.config_options) == "plan"
        assert await _prompt(conn, sid, "plan it") == "end_turn"
        assert [call.title for call, _ in client.asked] == [PLAN_TITLE]  # w2 ran without asking
        call, offered = client.asked[0]
        assert call.tool_call_id == "p1" and call.content is not None
        assert call.content[0].content.text == PLAN
        assert [(o.option_id, o.kind) for o in offered] == [
            ("edits", "allow_once"),
            ("ask", "allow_once"),
            ("keep_planning", "reject_once"),
        ]
        assert [o.name for o in offered][:2] == ["Yes, and allow edits", "Yes, ask before each change"]
        changes = [_mode(u.config_options) for u in client.of("config_option_update", sid)]
        assert changes == ["edits"]
        assert _final(client, sid, "r1").status == "completed"
        assert _final(client, sid, "w1").status == "failed"  # refused in plan mode
        assert _final(client, sid, "w2").status == "completed"
        order = [(u.session_update, getattr(u, "tool_call_id", None)) for s, u in client.updates if s == sid]
        assert order.index(("config_option_update", None)) < order.index(("tool_call", "w2"))
    assert (tmp_path / "b.txt").read_text() == "planned"


async def test_keep_planning_stays_in_plan_mode(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    model = ScriptedModel(_plan_steps([Step(text="waiting for you")]))
    client = Recorder(choose=_chooser("keep_planning"))
    async with connected(tmp_path, lambda _ws: model, client=client) as (conn, _):
        sid, _new = await _open(conn, tmp_path)
        set_to = await conn.set_config_option(config_id="mode", session_id=sid, value="plan")
        assert set_to is not None and _mode(set_to.config_options) == "plan"
        assert await _prompt(conn, sid, "plan it") == "end_turn"
        assert [call.title for call, _ in client.asked] == [PLAN_TITLE]
        assert client.of("config_option_update", sid) == []  # the set's response told the change
        state = await conn.ext_method("owltui/state", {"sessionId": sid})
        assert state["permission_mode"] == "plan"
        assert _final(client, sid, "p1").status == "failed"
    told = [m.content for m in model.views[3] if getattr(m, "call_id", None) == "p1"]
    assert told and "rejected the plan" in told[0]
    assert not (tmp_path / "b.txt").exists()


async def test_cancel_while_the_plan_waits(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    model = ScriptedModel(_plan_steps([Step(text="after the cancel")]))
    client = Recorder(choose=_chooser("edits"), hold_permission=anyio.Event())
    options = Options(workspace=tmp_path, permission_mode="plan")
    async with connected(tmp_path, lambda _ws: model, client=client, options=options) as (conn, _):
        sid, _new = await _open(conn, tmp_path)
        answers: list[str] = []

        async def ask() -> None:
            answers.append(await _prompt(conn, sid, "plan"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await client.wait_for(lambda: client.asked)
            await conn.cancel(session_id=sid)
        assert answers == ["cancelled"]
        state = await conn.ext_method("owltui/state", {"sessionId": sid})
        assert state["plans"] == [] and state["permission_mode"] == "plan"
        assert client.of("config_option_update", sid) == []
        assert _final(client, sid, "p1").status == "failed"
        assert client.hold_permission is not None
        client.hold_permission.set()  # the late answer finds no question: nothing changes
        assert await _prompt(conn, sid, "again") == "end_turn"
        assert client.text(sid).endswith("after the cancel")
        state = await conn.ext_method("owltui/state", {"sessionId": sid})
        assert state["permission_mode"] == "plan"


async def test_a_prompt_while_the_plan_waits_refines_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    model = ScriptedModel(_plan_steps([Step(text="a shorter plan then")]))
    client = Recorder(choose=_chooser("edits"), hold_permission=anyio.Event())
    options = Options(workspace=tmp_path, permission_mode="plan")
    async with connected(tmp_path, lambda _ws: model, client=client, options=options) as (conn, _):
        sid, _new = await _open(conn, tmp_path)
        answers: dict[str, str] = {}

        async def ask(name: str, words: str) -> None:
            answers[name] = await _prompt(conn, sid, words)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "plan", "plan it")
            await client.wait_for(lambda: client.asked)
            tg.start_soon(ask, "refine", "make it shorter")
        assert answers == {"plan": "end_turn", "refine": "end_turn"}
        assert client.text(sid).endswith("a shorter plan then")
        state = await conn.ext_method("owltui/state", {"sessionId": sid})
        assert state["permission_mode"] == "plan" and state["plans"] == []
        assert client.hold_permission is not None
        client.hold_permission.set()
    told = [m.content for m in model.views[3] if getattr(m, "call_id", None) == "p1"]
    assert told and "refined" in told[0] and "make it shorter" in told[0]


async def test_the_mode_option_remembers_the_mode_before_plan(tmp_path: Path) -> None:
    rt = kit.runtime(tmp_path, [])
    cmds = kit.commands(rt)
    async with rt:
        await set_config_option(cmds, "mode", "edits")
        await set_config_option(cmds, "mode", "plan")
        assert rt.plans is not None and rt.plans.before_plan == "edits"


TODO_1 = [{"content": "look around", "status": "in_progress"}, {"content": "write it", "status": "pending"}]
TODO_2 = [{"content": "look around", "status": "done"}, {"content": "write it", "status": "in_progress"}]


def _entries(update: Any) -> list[tuple[str, str, str]]:
    return [(e.content, e.status, e.priority) for e in update.entries]


async def test_each_todo_call_is_a_plan_update(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("todo", {"items": TODO_1}, id="t1")]),
            Step(calls=[Call("todo", {"items": TODO_2}, id="t2")]),
            Step(text="on it"),
        ]
    )
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        sid, _new = await _open(conn, tmp_path)
        assert await _prompt(conn, sid, "go") == "end_turn"
        plans = client.of("plan", sid)
        assert [_entries(p) for p in plans] == [
            [("look around", "in_progress", "medium"), ("write it", "pending", "medium")],
            [("look around", "completed", "medium"), ("write it", "in_progress", "medium")],
        ]


async def test_load_sends_the_saved_todo_list(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = [Step(calls=[Call("todo", {"items": TODO_2}, id="t1")]), Step(text="noted")]
    runtime = build_runtime(Options(workspace=ws), model=ScriptedModel(steps), env=env_for(tmp_path))
    async with runtime:
        runtime.agent.prompt("make a list")
        await runtime.wait_settled()
    sid = runtime.session_id
    assert sid is not None
    async with connected(tmp_path, lambda _ws: ScriptedModel([])) as (conn, client):
        await conn.initialize(protocol_version=1)
        await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        plans = client.of("plan", sid)
        assert [_entries(p) for p in plans] == [
            [("look around", "completed", "medium"), ("write it", "in_progress", "medium")]
        ]
        kinds = client.kinds(sid)
        assert kinds.index("plan") > kinds.index("agent_message_chunk")  # after the replay
