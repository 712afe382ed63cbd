"""Lane timing made exact (issue 14 item 5), steer now per message (item 6), results saved when
their tool ends (issue 11 item 4) and the gate's clock of unfrozen time (item 1, agent side)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.events import Event
from owltui.agent.history import MemoryHistory
from owltui.agent.hooks import Directive, Hooks
from owltui.agent.inbox import NotQueued, Queued
from owltui.agent.messages import ToolResult, UserMessage
from owltui.agent.pause import PauseGate
from owltui.agent.requirement import RequirementSlot
from owltui.session.store.store import SessionStore
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.agent.helpers import Blocker, Echo, ReadBlocker, check_history, make_agent, types, user_texts

pytestmark = pytest.mark.anyio


def inputs(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.lane, e.text) for e in events if e.type == "input"]  # type: ignore[attr-defined]


def assert_turns_paired(events: list[Event]) -> None:
    open_turn: int | None = None
    for ev in events:
        if ev.type == "turn_start":
            assert open_turn is None, "turn_start inside a turn"
            open_turn = ev.round  # type: ignore[attr-defined]
        elif ev.type == "turn_end":
            assert open_turn == ev.round, (open_turn, ev)  # type: ignore[attr-defined]
            open_turn = None
        elif ev.type == "agent_end":
            assert open_turn is None, "agent_end with a turn left open"


def last_user(view: list) -> list[tuple[str, str]]:
    """The user messages at the end of a request's messages."""
    out: list[tuple[str, str]] = []
    for item in reversed(view):
        if not isinstance(item, UserMessage):
            break
        out.insert(0, (item.lane, item.text))
    return out


# ---- a queued message stays queued until delivered ---------------------------------------------

Parked = tuple[Agent, ScriptedModel, list[Event], PauseGate, Queued]


@asynccontextmanager
async def steered_then_parked(text: str) -> AsyncIterator[Parked]:
    """A run whose first batch blocks; ``text`` is steered during it, the gate closes and the batch is
    let go: the body runs while the run is parked before its next model call, the steer still queued.
    Leaving waits for the run (the body resumes the gate)."""
    blk = Blocker()
    gate = PauseGate()
    agent, model, events = make_agent([Step(calls=[Call("block", {})]), Step(text="done")], [blk], gate=gate)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        queued = agent.steer(text)
        gate.pause()
        blk.release.set()
        await anyio.wait_all_tasks_blocked()
        yield agent, model, events, gate, queued


async def test_steer_queued_during_batch_stays_listed_and_editable_while_parked() -> None:
    async with steered_then_parked("use tabs") as (agent, model, events, gate, queued):
        assert gate.parked == {"main": "model"} and model.calls == 1
        # still listed, no input event yet, and editable
        assert agent.inbox.snapshot()["steer"] == [{"id": queued.id, "text": "use tabs", "source": "user"}]
        assert ("steer", "use tabs") not in inputs(events)
        agent.inbox.edit(queued.id, "use spaces")
        extra = agent.steer("and wrap at 100")
        agent.inbox.move(extra.id, before=queued.id)
        gate.resume()
    assert last_user(model.views[1]) == [("steer", "and wrap at 100"), ("steer", "use spaces")]
    with pytest.raises(NotQueued):  # delivered meanwhile: refused cleanly
        agent.inbox.edit(queued.id, "too late")
    with pytest.raises(NotQueued):
        agent.inbox.remove(extra.id)
    check_history(agent)


async def test_steer_removed_while_parked_is_never_delivered() -> None:
    async with steered_then_parked("never mind") as (agent, model, events, gate, queued):
        agent.inbox.remove(queued.id)
        gate.resume()
    assert model.calls == 2 and inputs(events) == [("user", "go")]
    assert not any(isinstance(i, UserMessage) and i.text == "never mind" for i in model.views[1])


async def test_prompt_while_paused_keeps_queued_steering_editable_until_the_park_ends() -> None:
    gate = PauseGate()
    gate.pause()
    agent, model, _ = make_agent([Step(text="hi")], gate=gate)
    queued = agent.steer("first this")
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        assert gate.parked == {"main": "model"}
        agent.inbox.edit(queued.id, "first that")
        gate.resume()
    assert user_texts(agent) == [("user", "go"), ("steer", "first that")]


async def test_woken_run_while_paused_with_everything_withdrawn_ends_without_a_call() -> None:
    gate = PauseGate()
    gate.pause()
    agent, model, events = make_agent([Step(text="never")], gate=gate)
    async with anyio.create_task_group() as tg:
        agent.bind(tg)
        f = agent.follow_up("maybe later")  # wakes the idle agent, which parks
        await anyio.wait_all_tasks_blocked()
        assert agent.running and gate.parked == {"main": "model"}
        assert agent.inbox.snapshot()["follow_up"][0]["id"] == f.id
        agent.inbox.remove(f.id)
        gate.resume()
        await agent.wait_idle()
        tg.cancel_scope.cancel()
    assert model.calls == 0 and agent.history.items() == []
    assert events[-1].type == "agent_end" and events[-1].reason == "done"  # type: ignore[attr-defined]
    assert_turns_paired(events)


async def test_follow_up_queued_while_paused_waits_at_the_stop_boundary() -> None:
    gate = PauseGate()
    started = anyio.Event()
    release = anyio.Event()
    agent, model, events = make_agent(
        [Step(text="answer", started=started, gate=release), Step(text="second answer")], gate=gate
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await started.wait()
        f = agent.follow_up("then this")
        gate.pause()  # during the final answer
        release.set()
        await anyio.wait_all_tasks_blocked()
        assert gate.parked == {"main": "model"} and model.calls == 1
        assert agent.inbox.texts("follow_up") == ["then this"]
        agent.inbox.move(f.id, lane="steer")
        agent.inbox.edit(f.id, "now this")
        gate.resume()
    assert last_user(model.views[1]) == [("steer", "now this")]
    assert types(events).count("agent_start") == 1
    assert_turns_paired(events)


# ---- steering first, follow-ups one per stop -----------------------------------------------


async def test_steer_and_follow_up_queued_during_the_final_answer_are_two_requests() -> None:
    started = anyio.Event()
    release = anyio.Event()
    agent, model, events = make_agent(
        [Step(text="answer", started=started, gate=release), Step(text="steered"), Step(text="followed")]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await started.wait()
        agent.steer("s")
        agent.follow_up("f")
        release.set()
    assert model.calls == 3
    assert last_user(model.views[1]) == [("steer", "s")]
    assert last_user(model.views[2]) == [("follow_up", "f")]  # after the steer was answered
    assert model.views[2][-2].text == "steered"
    assert_turns_paired(events)


async def test_three_follow_ups_are_three_turns_in_order() -> None:
    agent, model, events = make_agent([Step(text="a0"), Step(text="a1"), Step(text="a2"), Step(text="a3")])
    turns: list[int] = []

    async def before_yield(state):
        if state.total_rounds == 1:
            for t in ("f1", "f2", "f3"):
                agent.follow_up(t)
        return None

    async def turn_end(state):
        turns.append(state.total_rounds)
        return None

    agent.config.hooks = Hooks(before_yield=before_yield, turn_end=turn_end)
    out = await agent.run("go")
    assert out.text == "a3" and model.calls == 4
    assert [last_user(v) for v in model.views[1:]] == [
        [("follow_up", "f1")],
        [("follow_up", "f2")],
        [("follow_up", "f3")],
    ]
    assert types(events).count("agent_start") == 1
    assert_turns_paired(events)


async def test_follow_up_mode_all_merges_them() -> None:
    agent, model, _ = make_agent([Step(text="a0"), Step(text="a1")], follow_up_mode="all")

    async def before_yield(state):
        if state.total_rounds == 1:
            for t in ("f1", "f2", "f3"):
                agent.follow_up(t)
        return None

    agent.config.hooks = Hooks(before_yield=before_yield)
    await agent.run("go")
    assert model.calls == 2
    assert last_user(model.views[1]) == [("follow_up", "f1"), ("follow_up", "f2"), ("follow_up", "f3")]


async def test_idle_agent_woken_by_follow_ups_takes_one_per_turn() -> None:
    agent, model, _ = make_agent([Step(text="a1"), Step(text="a2")])
    agent.follow_up("f1")
    agent.follow_up("f2")
    await agent.run(wake=True)
    assert model.calls == 2
    assert [last_user(v) for v in model.views] == [[("follow_up", "f1")], [("follow_up", "f2")]]


async def test_steering_stays_merged() -> None:
    agent, model, _ = make_agent([Step(text="a0"), Step(text="a1")])

    async def before_yield(state):
        if state.total_rounds == 1:
            agent.steer("s1")
            agent.steer("s2")
        return None

    agent.config.hooks = Hooks(before_yield=before_yield)
    await agent.run("go")
    assert model.calls == 2 and last_user(model.views[1]) == [("steer", "s1"), ("steer", "s2")]


# ---- every turn_start has its turn_end ------------------------------------------------------


async def test_turns_paired_on_model_error() -> None:
    agent, _, events = make_agent([Step(text="part", error="stream cut")])
    out = await agent.run("go")
    assert out.reason == "error"
    assert types(events)[-3:] == ["message_end", "turn_end", "agent_end"]
    assert_turns_paired(events)


async def test_turns_paired_on_abort_mid_tool_and_while_parked() -> None:
    blk = Blocker()
    agent, _, events = make_agent([Step(calls=[Call("block", {})])], [blk])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.abort()
    assert types(events)[-3:] == ["tool_end", "turn_end", "agent_end"]
    assert_turns_paired(events)

    gate = PauseGate()
    gate.pause()
    agent, _, events = make_agent([Step(text="x")], gate=gate)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        agent.abort()
    assert types(events) == ["agent_start", "turn_start", "input", "turn_end", "agent_end"]
    check_history(agent)


async def test_turns_paired_when_a_hook_or_the_requirement_ends_the_run() -> None:
    async def round_start(state):
        return Directive(end_with="stopped by the feature")

    agent, _, events = make_agent([Step(text="never")], hooks=Hooks(round_start=round_start))
    out = await agent.run("go")
    assert out.text == "stopped by the feature"
    assert_turns_paired(events)

    slot = RequirementSlot()
    slot.set("echo")
    agent, _, events = make_agent([Step(text="no")] * 5, [Echo()])
    agent.requirement = slot
    out = await agent.run("go")
    assert out.reason == "error"
    assert_turns_paired(events)


# ---- steer now, per message ----------------------------------------------------------------


async def test_immediate_steer_skips_the_rest_of_the_batch_for_this_message_only() -> None:
    blk = Blocker()
    echo = Echo()
    agent, model, events = make_agent(
        [
            Step(calls=[Call("block", {}), Call("echo", {"text": "a"})]),
            Step(calls=[Call("block", {}), Call("echo", {"text": "b"})]),
            Step(text="done"),
        ],
        [blk, echo],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.steer("stop that", source="rpc", immediate=True)
        blk.release.set()
    rs = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert rs[1].status == "skipped" and "from the rpc" in rs[1].content
    assert agent.config.steering == "batch"  # the default is unchanged
    # the second batch: a plain steer waits for the batch, every call runs
    assert echo.ran == ["b"]
    check_history(agent)


async def test_plain_steer_with_batch_config_skips_nothing() -> None:
    blk = Blocker()
    echo = Echo()
    agent, _, _ = make_agent(
        [Step(calls=[Call("block", {}), Call("echo", {"text": "a"})]), Step(text="ok")], [blk, echo]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.steer("later is fine")
        blk.release.set()
    assert echo.ran == ["a"]


# ---- results saved when their tool ends ---------------------------------------------------------


class RecordingHistory(MemoryHistory):
    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events
        self.early: list[tuple[str, int]] = []  # (call id, events emitted before it was saved)

    def record_result_early(self, result: ToolResult) -> bool:
        self.early.append((result.call_id, len(self.events)))
        return True


async def test_each_result_of_a_concurrent_group_is_saved_before_its_tool_end() -> None:
    slow = ReadBlocker()
    events: list[Event] = []
    history = RecordingHistory(events)
    model = ScriptedModel(
        [
            Step(calls=[Call("rblock", {}, id="slow"), Call("echo", {"text": "x"}, id="fast")]),
            Step(text="done"),
        ]
    )
    agent = Agent(LoopConfig(model=model, tools=[slow, Echo()]), history, gate=PauseGate())
    agent.emitter.subscribe(events.append)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await slow.started.wait()
        await anyio.wait_all_tasks_blocked()
        # the fast read ended while the slow one runs: saved already, and before its tool_end
        assert [c for c, _ in history.early] == ["fast"]
        ends = [i for i, e in enumerate(events) if e.type == "tool_end"]
        assert len(ends) == 1 and history.early[0][1] == ends[0]
        assert not any(isinstance(i, ToolResult) for i in history.items())  # appended later
        slow.release.set()
    assert [c for c, _ in history.early] == ["fast", "slow"]
    assert [i.call_id for i in history.items() if isinstance(i, ToolResult)] == ["slow", "fast"]  # call order
    check_history(agent)


async def test_session_file_holds_a_finished_result_while_its_group_still_runs(tmp_path: Path) -> None:
    slow = ReadBlocker()
    store = SessionStore.create(tmp_path, tmp_path, "m")
    model = ScriptedModel(
        [
            Step(calls=[Call("rblock", {}, id="slow"), Call("echo", {"text": "kept"}, id="fast")]),
            Step(text="done"),
        ]
    )
    agent = Agent(LoopConfig(model=model, tools=[slow, Echo()]), store, gate=PauseGate())
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await slow.started.wait()
        await anyio.wait_all_tasks_blocked()
        # what a kill -9 now would leave: the file already has the fast result
        on_disk = [json.loads(line) for line in store.path.read_text().splitlines()[1:]]
        saved = [r["item"] for r in on_disk if r.get("type") == "message" and r["item"].get("role") == "tool"]
        assert [(r["call_id"], r["content"]) for r in saved] == [("fast", "kept")]
        slow.release.set()
    store.close()
    loaded = SessionStore.open(store.path)
    assert [i.call_id for i in loaded.items() if isinstance(i, ToolResult)] == ["slow", "fast"]
    loaded.close()


# ---- the gate's clock of unfrozen time ---------------------------------------------------------


async def test_gate_clock_stands_while_frozen_and_not_while_only_paused() -> None:
    gate = PauseGate()
    heard: list[bool] = []
    gate.on_freeze(heard.append)
    t0 = gate.clock()
    gate.pause()  # freezing by default
    assert gate.frozen and gate.paused
    frozen_at = gate.clock()
    await anyio.sleep(0.05)
    assert gate.clock() == frozen_at and gate.frozen_total() >= 0.05
    gate.resume()
    assert not gate.frozen and heard == [True, False]
    assert gate.clock() - t0 < 0.04  # the frozen 50 ms are not counted
    gate.pause(freeze=False)  # park-only: the clock runs, freeze listeners hear nothing
    before = gate.clock()
    await anyio.sleep(0.02)
    assert gate.clock() - before >= 0.02 and not gate.frozen and heard == [True, False]
    gate.pause(freeze=True)  # a park-only pause can become freezing
    assert gate.frozen and heard == [True, False, True]
    gate.resume()
    assert heard == [True, False, True, False]


async def test_gate_sleep_is_extended_by_a_freeze() -> None:
    gate = PauseGate()
    t0 = time.monotonic()

    async def freeze_for_a_while() -> None:
        await anyio.sleep(0.05)
        gate.pause()
        await anyio.sleep(0.2)
        gate.resume()

    async with anyio.create_task_group() as tg:
        tg.start_soon(freeze_for_a_while)
        await gate.sleep(0.1)
        took = time.monotonic() - t0
    assert took >= 0.29  # 0.1 s of unfrozen time plus the 0.2 s freeze
