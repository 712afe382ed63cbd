"""The process-wide pause gate and soft tool requirements."""

from __future__ import annotations

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolResult
from owltui.agent.model import ForceTool
from owltui.agent.pause import PauseGate
from owltui.agent.requirement import RequirementSlot
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Blocker, Echo, check_history, make_agent

pytestmark = pytest.mark.anyio


# ---- pause gate -----------------------------------------------------------------------------


async def test_gate_pause_resume_values_and_listeners() -> None:
    gate = PauseGate()
    heard: list[tuple[bool, float | None]] = []
    gate.subscribe(lambda p, s: heard.append((p, s)))
    gate.subscribe(lambda p, s: 1 / 0)  # a broken listener never breaks the gate
    assert gate.resume() is None
    assert gate.pause() is True and gate.paused and gate.paused_at is not None
    assert gate.pause() is False
    secs = gate.resume()
    assert secs is not None and secs >= 0 and not gate.paused and gate.paused_at is None
    assert [p for p, _ in heard] == [True, False]


async def test_pause_parks_before_model_call() -> None:
    gate = PauseGate()
    gate.pause()
    agent, model, _ = make_agent([Step(text="hi")], gate=gate)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        assert model.calls == 0 and gate.parked == {"main": "model"}
        gate.resume()
    assert model.calls == 1 and gate.parked == {}


async def test_pause_during_stream_lets_it_finish_then_parks_before_tool_start() -> None:
    mid = anyio.Event()
    echo = Echo()
    gate = PauseGate()
    agent, model, events = make_agent(
        [Step(text="abc def", chunk=3, mid_gate=mid, calls=[Call("echo", {"text": "x"})]), Step(text="done")],
        [echo],
        gate=gate,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        gate.pause()  # mid-stream
        mid.set()
        await anyio.wait_all_tasks_blocked()
        assert any(e.type == "message_end" for e in events)  # the stream finished
        assert echo.ran == [] and gate.parked == {"main": "tool"}
        gate.resume()
    assert echo.ran == ["x"] and model.calls == 2


async def test_pause_never_kills_running_tool() -> None:
    blk = Blocker()
    gate = PauseGate()
    agent, model, _ = make_agent([Step(calls=[Call("block", {})]), Step(text="done")], [blk], gate=gate)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        gate.pause()
        blk.release.set()
        await anyio.wait_all_tasks_blocked()
        assert not blk.cancelled
        assert [i.status for i in agent.history.items() if isinstance(i, ToolResult)] == ["ok"]
        assert model.calls == 1 and gate.parked == {"main": "model"}  # parked before the next call
        gate.resume()
    assert model.calls == 2


async def test_abort_releases_parked_run_but_gate_stays_paused() -> None:
    gate = PauseGate()
    gate.pause()
    agent, model, events = make_agent([Step(text="hi")], gate=gate)
    other, other_model, _ = make_agent([Step(text="other")], gate=gate, name="sub")
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        tg.start_soon(other.run, "go")
        await anyio.wait_all_tasks_blocked()
        assert gate.parked == {"main": "model", "sub": "model"}
        agent.abort()
        await agent.wait_idle()
        await anyio.wait_all_tasks_blocked()
        assert not agent.running and gate.paused
        assert gate.parked == {"sub": "model"} and other.running  # the other agent stays frozen
        gate.resume()
    assert model.calls == 0 and other_model.calls == 1
    assert events[-1].type == "agent_end" and events[-1].reason == "aborted"


async def test_wait_until_resumed_returns_on_cancel_without_releasing() -> None:
    gate = PauseGate()
    gate.pause()
    token = CancelToken()
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.wait_until_resumed, token)
        await anyio.wait_all_tasks_blocked()
        token.cancel()
    assert gate.paused


async def test_resume_then_repause_in_same_tick_reparks() -> None:
    gate = PauseGate()
    gate.pause()
    agent, model, _ = make_agent([Step(text="hi")], gate=gate)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        gate.resume()
        gate.pause()  # same tick: the parked run must stay parked
        await anyio.wait_all_tasks_blocked()
        assert model.calls == 0 and gate.parked == {"main": "model"}
        gate.resume()
    assert model.calls == 1


# ---- soft tool requirement ------------------------------------------------------------------


def req_events(events):
    return [(e.tool, e.escalation) for e in events if e.type == "requirement"]


async def test_requirement_complied_first_time() -> None:
    slot = RequirementSlot()
    slot.set("echo", "confirm the file")
    echo = Echo()
    agent, model, events = make_agent([Step(calls=[Call("echo", {"text": "x"})]), Step(text="done")], [echo])
    agent.requirement = slot
    changes: list[str] = []
    slot.subscribe(lambda what, req: changes.append(what))
    out = await agent.run("go")
    assert out.reason == "done" and echo.ran == ["x"]
    assert req_events(events) == [("echo", 0)]
    assert model.requests[0].tool_choice == "auto"
    reminder = model.views[0][-1]
    assert reminder.lane == "reminder" and "`echo`" in reminder.text and "confirm the file" in reminder.text
    assert slot.current is None and changes == ["satisfied"]


async def test_requirement_detour_skipped_then_forced() -> None:
    slot = RequirementSlot()
    slot.set("echo")
    other = Blocker()
    echo = Echo()
    agent, model, events = make_agent(
        [Step(calls=[Call("block", {})]), Step(calls=[Call("echo", {"text": "y"})]), Step(text="done")],
        [other, echo],
    )
    agent.requirement = slot
    out = await agent.run("go")
    assert out.reason == "done" and other.runs == 0 and echo.ran == ["y"]
    rs = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert rs[0].status == "skipped" and "call `echo` first" in rs[0].content
    assert model.requests[1].tool_choice == ForceTool(tool="echo")
    assert model.requests[2].tool_choice == "auto"
    assert req_events(events) == [("echo", 0), ("echo", 1)]
    check_history(agent)


async def test_requirement_bare_text_is_forced() -> None:
    slot = RequirementSlot()
    slot.set("echo")
    agent, model, events = make_agent(
        [Step(text="I won't"), Step(calls=[Call("echo", {"text": "ok"})]), Step(text="done")], [Echo()]
    )
    agent.requirement = slot
    out = await agent.run("go")
    assert out.text == "done" and model.calls == 3
    assert model.requests[1].tool_choice == ForceTool(tool="echo")
    assert model.views[1][-1].lane == "reminder"  # keeps user/assistant alternation


async def test_requirement_three_escalations_then_failure() -> None:
    slot = RequirementSlot()
    slot.set("echo", "must")
    agent, model, events = make_agent([Step(text="no")] * 10, [Echo()])
    agent.requirement = slot
    out = await agent.run("go")
    assert out.reason == "error" and "`echo`" in (out.error or "") and "3 forced turns" in (out.error or "")
    assert model.calls == 4  # 1 + 3
    assert req_events(events) == [("echo", 0), ("echo", 1), ("echo", 2), ("echo", 3)]
    assert events[-1].type == "agent_end" and events[-1].reason == "error"


async def test_requirement_reminder_once_per_id_and_counter_resets_on_new_id() -> None:
    slot = RequirementSlot()
    req = slot.set("echo")
    agent, model, events = make_agent([Step(text="a"), Step(text="b"), Step(text="c")], [Echo()])
    agent.requirement = slot
    agent.config.max_rounds = 40

    # first run: escalates twice then we clear it from the UI mid-run
    def script(request):
        n = len(model.requests)
        if n == 3:
            slot.clear()
        return Step(text="no")

    model._fn = script
    out = await agent.run("go")
    assert out.reason == "done"
    assert req_events(events) == [("echo", 0), ("echo", 1), ("echo", 2)]
    # same id again: no second reminder
    slot.current = req
    events.clear()
    model._fn = lambda r: (
        Step(calls=[Call("echo", {"text": "z"})]) if len(model.requests) == 4 else Step(text="ok")
    )
    await agent.run("again")
    assert req_events(events) == []


async def test_abort_while_parked_keeps_prompt_and_requeues_taken_steering() -> None:
    gate = PauseGate()
    gate.pause()
    agent, model, _ = make_agent([Step(text="hi")], gate=gate)
    agent.steer("taken at run start")
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "the prompt")
        await anyio.wait_all_tasks_blocked()
        agent.abort()
    gate.resume()
    assert model.calls == 0
    assert [(i.lane, i.text) for i in agent.history.items()] == [("user", "the prompt")]
    assert agent.inbox.texts("steer") == ["taken at run start"]
