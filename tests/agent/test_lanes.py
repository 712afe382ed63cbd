"""Input lanes: steering, follow-ups, asides; poll points; abort keeps the queue; waking."""

from __future__ import annotations

import anyio
import pytest

from owltui.agent.hooks import Directive, Hooks
from owltui.agent.inbox import Inbox
from owltui.agent.messages import ToolResult, UserMessage
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Blocker, Echo, check_history, make_agent, types, user_texts

pytestmark = pytest.mark.anyio


def inputs(events):
    return [(e.lane, e.text) for e in events if e.type == "input"]


async def test_inbox_fifo_peek_pop_last_clear_and_observe() -> None:
    box = Inbox()
    seen: list[tuple[str, str]] = []
    box.subscribe(lambda action, lane, entry: seen.append((action, lane)))
    box.push("steer", "one")
    box.push("follow_up", "two")
    box.push("steer", "three")
    assert box.texts("steer") == ["one", "three"]
    assert [m.text for m in box.peek("steer")] == ["one", "three"]  # peek does not consume
    last = box.pop_last()
    assert last is not None and last.text == "three"
    assert box.pop_last().text == "two"  # type: ignore[union-attr]
    assert [m.text for m in box.take("steer")] == ["one"]
    assert box.pop_last() is None
    box.push("aside", "x")
    box.clear()
    assert len(box) == 0
    assert ("push", "steer") in seen and ("pop", "follow_up") in seen and ("clear", "aside") in seen


async def test_steering_during_batch_delivered_after_the_batch() -> None:
    blk = Blocker()
    echo = Echo()
    agent, model, events = make_agent(
        [Step(calls=[Call("block", {}), Call("echo", {"text": "second"})]), Step(text="done")], [blk, echo]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.steer("use tabs")
        blk.release.set()
    assert echo.ran == ["second"]  # batch mode: the rest of the batch still ran
    assert inputs(events) == [("user", "go"), ("steer", "use tabs")]
    # delivered before the second model call, after both results
    assert [type(i).__name__ for i in model.views[1]][-3:] == ["ToolResult", "ToolResult", "UserMessage"]
    check_history(agent)


async def test_steering_immediate_skips_calls_not_started_naming_source() -> None:
    blk = Blocker()
    echo = Echo()
    agent, _, events = make_agent(
        [Step(calls=[Call("block", {}), Call("echo", {"text": "second"})]), Step(text="done")],
        [blk, echo],
        steering="immediate",
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.steer("stop, do something else")
        blk.release.set()
    assert echo.ran == []
    rs = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert rs[0].status == "ok"  # the running tool was not killed
    assert rs[1].status == "skipped" and "from the user" in rs[1].content and "retried" in rs[1].content
    assert ("steer", "stop, do something else") in inputs(events)
    check_history(agent)


async def test_follow_up_only_at_stop_boundary() -> None:
    blk = Blocker()
    agent, model, events = make_agent(
        [
            Step(calls=[Call("block", {})]),
            Step(calls=[Call("echo", {"text": "x"})]),
            Step(text="first answer"),
            Step(text="follow-up answer"),
        ],
        [blk, Echo()],
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.follow_up("then write docs")
        blk.release.set()
    # not delivered after the batch (2nd/3rd calls), only once the agent would have stopped
    assert not any(getattr(m, "text", "") == "then write docs" for m in model.views[2])
    assert model.views[3][-1] == UserMessage(text="then write docs", lane="follow_up")
    assert inputs(events)[-1] == ("follow_up", "then write docs")
    assert types(events).count("agent_start") == 1  # same run


async def test_asides_never_interrupt_tools_and_arrive_after_batch() -> None:
    blk = Blocker()
    echo = Echo()
    agent, model, _ = make_agent(
        [Step(calls=[Call("block", {}), Call("echo", {"text": "x"})]), Step(text="done")],
        [blk, echo],
        steering="immediate",
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.aside("job 1 finished")
        blk.release.set()
    assert echo.ran == ["x"]  # an aside never skips calls, even in immediate mode
    assert model.calls == 2  # and never causes an extra call
    assert model.views[1][-1].text == "job 1 finished"  # type: ignore[union-attr]


async def test_aside_thunk_yielding_nothing_causes_no_extra_call() -> None:
    agent, model, events = make_agent([Step(text="answer")], [Echo()])
    evaluated: list[bool] = []

    async def before_yield(state):
        agent.aside(lambda: evaluated.append(True) or None)
        return None

    agent.config.hooks = Hooks(before_yield=before_yield)
    out = await agent.run("go")
    assert out.reason == "done" and model.calls == 1 and evaluated


async def test_late_steering_from_before_yield_delivered_in_same_run() -> None:
    agent, model, events = make_agent([Step(text="one"), Step(text="two")])
    fired: list[int] = []

    async def before_yield(state):
        if not fired:
            fired.append(1)
            agent.steer("late")
        return None

    agent.config.hooks = Hooks(before_yield=before_yield)
    out = await agent.run("go")
    assert out.text == "two" and model.calls == 2
    assert types(events).count("agent_start") == 1
    assert user_texts(agent) == [("user", "go"), ("steer", "late")]


async def test_stop_boundary_answers_steering_before_the_follow_up() -> None:
    agent, model, events = make_agent([Step(text="one"), Step(text="two"), Step(text="three")])

    async def before_yield(state):
        if state.total_rounds == 1:
            agent.follow_up("f")
            agent.aside("a")
            agent.steer("s")
        return None

    agent.config.hooks = Hooks(before_yield=before_yield)
    await agent.run("go")
    assert model.calls == 3  # steering (with the aside) answered, then the follow-up: two requests
    assert [m.text for m in model.views[1][-2:]] == ["s", "a"]  # type: ignore[union-attr]
    assert model.views[2][-2].text == "two"  # type: ignore[union-attr]
    assert model.views[2][-1] == UserMessage(text="f", lane="follow_up")
    assert types(events).count("agent_start") == 1


async def test_abort_at_each_poll_point_leaves_queue_intact() -> None:
    # 1) aborted during the model stream: steering queued meanwhile stays queued
    gate = anyio.Event()
    agent, _, _ = make_agent([Step(text="x", gate=gate)])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        agent.steer("s1")
        agent.follow_up("f1")
        agent.aside("a1")
        agent.abort()
    assert {lane: [q["text"] for q in items] for lane, items in agent.inbox.snapshot().items()} == {
        "steer": ["s1"],
        "follow_up": ["f1"],
        "aside": ["a1"],
    }

    # 2) aborted by the before-yield hook (the outer drain is skipped)
    agent, _, _ = make_agent([Step(text="x")])

    async def before_yield(state):
        agent.follow_up("f2")
        agent.abort()
        return None

    agent.config.hooks = Hooks(before_yield=before_yield)
    out = await agent.run("go")
    assert out.reason == "aborted" and agent.inbox.texts("follow_up") == ["f2"]

    # 3) aborted by the after-tools hook (the after-batch poll is skipped)
    agent, _, _ = make_agent([Step(calls=[Call("echo", {"text": "x"})]), Step(text="y")], [Echo()])

    async def after_tools(state, results):
        agent.steer("s3")
        agent.abort()
        return None

    agent.config.hooks = Hooks(after_tools=after_tools)
    out = await agent.run("go")
    assert out.reason == "aborted" and agent.inbox.texts("steer") == ["s3"]
    check_history(agent)


async def test_abort_with_clear_queue_drops_queue() -> None:
    gate = anyio.Event()
    agent, _, _ = make_agent([Step(text="x", gate=gate)])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        agent.steer("s1")
        agent.abort(clear_queue=True)
    assert len(agent.inbox) == 0


async def test_idle_bound_agent_wakes_on_aside_and_steer() -> None:
    agent, model, events = make_agent([Step(text="noted"), Step(text="ok")])
    async with anyio.create_task_group() as tg:
        agent.bind(tg)
        agent.aside("job 3 finished, exit code 0")
        await agent.wait_idle()
        assert model.calls == 1 and inputs(events) == [("aside", "job 3 finished, exit code 0")]
        agent.steer("hello")
        await agent.wait_idle()
        assert model.calls == 2
        tg.cancel_scope.cancel()


async def test_prompt_while_running_is_refused() -> None:
    gate = anyio.Event()
    agent, _, _ = make_agent([Step(text="x", gate=gate), Step(text="y")])
    async with anyio.create_task_group() as tg:
        agent.bind(tg)
        assert agent.prompt("first")
        await anyio.wait_all_tasks_blocked()
        assert agent.running and not agent.prompt("second")
        gate.set()
        await agent.wait_idle()
        tg.cancel_scope.cancel()


async def test_hook_append_and_steer_delivered_once_each() -> None:
    async def round_start(state):
        return (
            Directive(append=[UserMessage(text=f"r{state.total_rounds}", lane="notice")])
            if state.total_rounds == 1
            else None
        )

    agent, _, events = make_agent([Step(text="a")], hooks=Hooks(round_start=round_start))
    agent.steer("early")
    await agent.run("go")
    assert inputs(events) == [("user", "go"), ("steer", "early"), ("notice", "r1")]


async def test_abort_right_after_prompt_before_the_run_begins() -> None:
    agent, model, events = make_agent([Step(text="never")])
    async with anyio.create_task_group() as tg:
        agent.bind(tg)
        assert agent.prompt("do it")
        assert agent.abort()  # the run has not begun yet
        await agent.wait_idle()
        tg.cancel_scope.cancel()
    assert model.calls == 0
    assert user_texts(agent) == [("user", "do it")]
    assert types(events)[0] == "agent_start" and events[-1].reason == "aborted"
