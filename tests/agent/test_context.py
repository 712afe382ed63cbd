"""The context budget (automatic compaction's decision, ``owltui/agent/context.py``) with a fake
compactor: when it fires, the visible step, the confirm gate, aborts, and three failures in a row."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

from owltui.agent.config import LoopConfig
from owltui.agent.context import CompactRequest, ContextBudget, item_chars
from owltui.agent.events import Compaction, CompactionFailed, CompactionStart, Emitter, InputEvent
from owltui.agent.history import MemoryHistory
from owltui.agent.inbox import Inbox
from owltui.agent.loop import Loop
from owltui.agent.messages import AssistantMessage, ToolResult, Usage, UserMessage
from owltui.agent.pause import PauseGate
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.agent.helpers import Echo, check_history, make_agent, types

pytestmark = pytest.mark.anyio

BIG = "x" * 2000  # 500 tokens a result


def growing(rounds: int, base: int = 1000):
    """A model that reports the request's size (``base`` tokens of prompt and tools, characters / 4
    for the messages) and calls ``echo`` with 500 tokens of text, answering after ``rounds``."""
    n = [0]

    def step(req: Any) -> Step:
        n[0] += 1
        usage = Usage(input_tokens=base + sum(map(item_chars, req.messages)) // 4, output_tokens=10)
        if n[0] > rounds:
            return Step(text="finished", usage=usage)
        return Step(calls=[Call("echo", {"text": f"r{n[0]} {BIG}"})], usage=usage)

    return step


class FakeCompactor:
    def __init__(self, fail: int = 0, shrink: bool = True, gate: anyio.Event | None = None) -> None:
        self.fail = fail
        self.shrink = shrink
        self.gate = gate
        self.requests: list[CompactRequest] = []
        self.at: list[int] = []  # the history's length at each call
        self.started = anyio.Event()

    async def __call__(self, req: CompactRequest) -> None:
        self.requests.append(req)
        self.at.append(len(req.history.items()))
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        if len(self.requests) <= self.fail:
            raise RuntimeError(f"summary failed ({len(self.requests)})")
        items = req.history.items()
        cut = len(items) if self.shrink else 0
        req.history.record_compaction("short summary", cut, ())  # type: ignore[attr-defined]


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


async def test_compacts_before_the_call_that_would_pass_80_percent() -> None:
    compactor = FakeCompactor()
    agent, model, events = make_agent(growing(5), [Echo()], context_window=5000, compactor=compactor)
    out = await agent.run("do the work")
    assert out.reason == "done" and out.text == "finished"
    (start,) = of(events, CompactionStart)
    (done,) = of(events, Compaction)
    assert done.reason == "auto" and done.tokens_before is not None and done.tokens_before >= 4000
    assert done.tokens_after is not None and done.tokens_after < 4000
    # the reported input and output of the last response plus characters / 4 of what came after it
    items = agent.history.items()[: compactor.at[0]]
    last = max(i for i, it in enumerate(items) if isinstance(it, AssistantMessage))
    reply = items[last]
    assert isinstance(reply, AssistantMessage)
    expected = (
        reply.usage.input_tokens + reply.usage.output_tokens + sum(map(item_chars, items[last + 1 :])) // 4
    )
    assert start.tokens_before == done.tokens_before == expected
    req = compactor.requests[0]
    assert req.reason == "auto" and req.window == 5000 and req.keep_tokens == 1250 and req.turn_from == 0
    # a visible step between the round's turn_start and its model call
    seq = types(events)
    i = seq.index("compaction")
    assert seq[i - 2 : i + 2] == ["turn_start", "compaction_start", "compaction", "message_start"]
    later = model.views[seq[:i].count("message_start")]
    assert isinstance(later[0], UserMessage) and later[0].text.endswith("short summary")
    check_history(agent)


async def test_no_window_or_no_compactor_means_no_budget() -> None:
    for cfg in ({"context_window": 5000}, {"compactor": FakeCompactor()}, {}):
        loop = Loop(
            LoopConfig(model=ScriptedModel([]), **cfg), MemoryHistory(), inbox=Inbox(), emitter=Emitter()
        )
        assert loop.budget is None


async def test_the_estimate_is_the_reported_figure_plus_what_was_appended() -> None:
    cfg = LoopConfig(
        model=ScriptedModel([]), system_prompt="s" * 400, context_window=1000, compactor=FakeCompactor()
    )
    history = MemoryHistory([UserMessage(text="u" * 800)])
    budget = ContextBudget()
    view = history.model_view()
    assert budget.estimate(cfg, view) == (400 + item_chars(view[0])) // 4  # nothing reported: by characters
    reply = AssistantMessage(text="a", usage=Usage(input_tokens=700, output_tokens=20))
    history.append(reply)
    budget.observe(reply, history.model_view())
    assert budget.estimate(cfg, history.model_view()) == 720
    result = ToolResult(call_id="c", name="echo", content="r" * 400)
    history.append(result)
    pending = [UserMessage(text="p" * 84)]
    assert budget.estimate(cfg, history.model_view(), pending) == 720 + item_chars(result) // 4 + 25
    assert budget.due(cfg, history.model_view(), pending) == 720 + item_chars(result) // 4 + 25
    history.record_compaction("sum", 2)  # a new view: by characters, at the provider's reported rate
    rate = 700 / (400 + item_chars(view[0]))  # the reported input of the request it was measured on
    assert budget.rate(cfg) == rate
    expected = math.ceil((400 + sum(map(item_chars, history.model_view()))) * rate)
    assert budget.estimate(cfg, history.model_view()) == expected
    budget.observe(AssistantMessage(text="b"), history.model_view())  # no usage reported: no basis
    assert budget.estimate(cfg, history.model_view()) == expected


async def test_three_failures_in_a_row_stop_trying_and_say_so() -> None:
    compactor = FakeCompactor(fail=99)
    agent, model, events = make_agent(growing(12), [Echo()], context_window=5000, compactor=compactor)
    out = await agent.run("do the work")
    assert out.reason == "done" and out.text == "finished"
    failed = of(events, CompactionFailed)
    assert [(e.failures, e.stopped) for e in failed] == [(1, False), (2, False), (3, True)]
    assert "summary failed (3)" in failed[-1].error and len(compactor.requests) == 3
    assert not of(events, Compaction)
    notices = [e for e in of(events, InputEvent) if e.lane == "notice"]
    assert len(notices) == 1 and "failed 3 times in a row" in notices[0].text
    assert "off for the rest of this session" in notices[0].text
    seq = types(events)
    failed_at = [i for i, t in enumerate(seq) if t == "compaction_failed"]
    assert seq.index("input", failed_at[0]) > failed_at[-1]  # said once, after the third failure
    assert agent.context.stopped and agent.context.failures == 3
    await agent.run("more")  # stopped for the session, across runs
    assert len(compactor.requests) == 3
    check_history(agent)


async def test_a_summary_that_leaves_it_over_the_threshold_counts_as_a_failure() -> None:
    compactor = FakeCompactor(shrink=False)
    agent, _, events = make_agent(growing(12), [Echo()], context_window=5000, compactor=compactor)
    await agent.run("do the work")
    assert len(of(events, Compaction)) == 3 and len(compactor.requests) == 3
    assert [e.stopped for e in of(events, CompactionFailed)] == [False, False, True]
    assert "still about" in of(events, CompactionFailed)[0].error


async def test_a_success_resets_the_streak() -> None:
    compactor = FakeCompactor(fail=2)
    agent, _, events = make_agent(growing(8), [Echo()], context_window=5000, compactor=compactor)
    await agent.run("do the work")
    assert [e.failures for e in of(events, CompactionFailed)] == [1, 2]
    assert len(of(events, Compaction)) == 1 and agent.context.failures == 0 and not agent.context.stopped


async def test_confirm_closes_the_gate_first_and_resuming_compacts() -> None:
    gate = PauseGate()
    compactor = FakeCompactor()
    agent, _, events = make_agent(
        growing(5), [Echo()], context_window=5000, compactor=compactor, compaction_confirm=True, gate=gate
    )
    closed = anyio.Event()
    gate.subscribe(lambda paused, _s: closed.set() if paused else None)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "do the work")
        try:
            with anyio.fail_after(5):
                await closed.wait()
            await anyio.wait_all_tasks_blocked()
            parked, asked, last = dict(gate.parked), len(compactor.requests), types(events)[-1]
        finally:
            gate.resume()
    assert parked == {"main": "model"} and asked == 0 and last == "compaction_start"
    assert len(compactor.requests) == 1 and agent.last_outcome is not None
    assert agent.last_outcome.text == "finished"


async def test_an_abort_during_compaction_ends_the_run_and_is_not_a_failure() -> None:
    compactor = FakeCompactor(gate=anyio.Event())
    agent, _, events = make_agent(growing(8), [Echo()], context_window=5000, compactor=compactor)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "do the work")
        await compactor.started.wait()
        assert agent.abort()
    assert agent.last_outcome is not None and agent.last_outcome.reason == "aborted"
    assert agent.context.failures == 0 and not of(events, CompactionFailed)
    assert types(events)[-1] == "agent_end"
    check_history(agent)


async def test_a_count_still_over_the_threshold_right_after_a_summary_stops_at_once_and_says_so() -> None:
    """A provider whose count does not fall with the conversation (a large part it adds itself):
    summarising again every round cannot help, so the budget says so once instead."""
    rise = growing(12)

    def step(req: Any) -> Step:
        out = rise(req)
        if any(isinstance(m, UserMessage) and m.text.endswith("short summary") for m in req.messages):
            out.usage = Usage(input_tokens=4200, output_tokens=10)
        return out

    compactor = FakeCompactor()
    agent, _, events = make_agent(step, [Echo()], context_window=5000, compactor=compactor)
    out = await agent.run("do the work")
    assert out.reason == "done" and out.text == "finished"
    assert len(compactor.requests) == 1 and len(of(events, Compaction)) == 1
    (failed,) = of(events, CompactionFailed)
    assert (
        failed.stopped and "the first request after the last summary was already 4200 tokens" in failed.error
    )
    assert len(of(events, CompactionStart)) == 1  # no visible step for the refusal
    notices = [e for e in of(events, InputEvent) if e.lane == "notice"]
    assert len(notices) == 1 and notices[0].text.startswith("Automatic compaction cannot bring")
    assert agent.context.stopped
    check_history(agent)
