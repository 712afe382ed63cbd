"""The loop's named pieces: limits (one small object per rule), the ledger, tool_end details."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

import owltui.agent.loop as loop_module
from owltui.agent.events import Emitter, Event, ToolEnd
from owltui.agent.history import MemoryHistory
from owltui.agent.ledger import Ledger, result_for
from owltui.agent.limits import Directed, Limit, Limits, RoundLimit
from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, Usage
from owltui.agent.model import ForceTool, ToolChoice
from owltui.agent.state import End, RunState
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Echo, TextArgs, check_history, make_agent

pytestmark = pytest.mark.anyio


class Said(Limit):
    """A limit with a fixed answer, counting how often it is asked."""

    def __init__(self, choice: ToolChoice | None = None, fallback: str | None = None) -> None:
        self.said, self.text, self.asked = choice, fallback, 0

    def choice(self) -> ToolChoice | None:
        self.asked += 1
        return self.said

    def fallback(self) -> str | None:
        return self.text


def test_limits_first_answer_wins_and_every_limit_is_asked_for_the_choice() -> None:
    first, second = Said(), Said("none", "second's")
    directed = Directed()
    directed.force = "echo"
    limits = Limits([first, second, directed])
    assert limits.choice() == "none"
    assert first.asked == second.asked == 1
    assert directed.force is None  # asked, so its one-shot force is used up though "none" won
    assert limits.fallback() == "second's" and limits.end() is None and limits.skip() is None


def test_limits_ask_only_the_limits_that_answer() -> None:
    limits = Limits([RoundLimit(3), Said()])
    assert len(limits._choice) == 2 and len(limits._round) == 1 and len(limits._refuse) == 0
    st = RunState(run_id="r", config=None, history=MemoryHistory(), cancel=None)  # type: ignore[arg-type]
    st.round = 4
    limits.round(st)
    assert limits.choice() == "none" and limits.end() == End("round_limit")
    assert "round limit" in (limits.skip() or "") and "3 rounds" in (limits.fallback() or "")


def test_hook_tools_off_beats_a_forced_tool() -> None:
    directed = Directed()
    directed.tools_off = True
    directed.force = "echo"
    assert Limits([directed]).choice() == "none"
    directed.tools_off = False
    directed.force = "echo"
    assert Limits([directed]).choice() == ForceTool(tool="echo")


async def test_a_new_limit_is_one_object(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cost budget, as issue 11 will want: tools off once spent, a fallback answer, its own end."""

    class Budget(Limit):
        def __init__(self, dollars: float) -> None:
            self.dollars, self.spent = dollars, False

        def round(self, st: RunState) -> None:
            self.spent = st.usage.cost >= self.dollars

        def choice(self) -> ToolChoice | None:
            return "none" if self.spent else None

        def skip(self) -> str | None:
            return "Not executed: the budget is spent." if self.spent else None

        def fallback(self) -> str | None:
            return f"I stopped: the ${self.dollars:g} budget is spent." if self.spent else None

        def end(self) -> End | None:
            return End("error", "budget reached") if self.spent else None

    standard = loop_module.standard_limits

    def with_budget(*args: Any, **kwargs: Any) -> tuple[list[Limit], Directed]:
        limits, directed = standard(*args, **kwargs)
        return [*limits, Budget(0.25)], directed

    monkeypatch.setattr(loop_module, "standard_limits", with_budget)
    costly = Usage(output_tokens=5, cost=0.1)
    steps = [Step(calls=[Call("echo", {"text": str(i)})], usage=costly) for i in range(5)]
    agent, model, events = make_agent(steps, [Echo()])
    out = await agent.run("go")
    assert (out.reason, out.error) == ("error", "budget reached")
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "auto", "none"]
    assert out.text == "I stopped: the $0.25 budget is spent."  # 4th response had no text
    last = [i for i in agent.history.items() if isinstance(i, ToolResult)][-1]
    assert last.status == "skipped" and "budget" in last.content
    assert events[-1].wire() == {"type": "agent_end", "reason": "error", "error": "budget reached"}
    check_history(agent)


def test_ledger_one_result_per_call_and_close_prefers_finished_results() -> None:
    events: list[Event] = []
    emitter = Emitter()
    emitter.subscribe(events.append)
    history = MemoryHistory()
    ledger = Ledger(history, lambda cls, /, **f: emitter.emit(cls(**f)))
    heard: list[str] = []
    ledger.watch(lambda call, result: heard.append(result.status))
    a, b, c = (ToolCall(id=i, name="echo") for i in "abc")
    ledger.append(AssistantMessage(tool_calls=[a, b, c]))
    ledger.record(a, result_for(a, "one", "ok"))
    ledger.record(a, result_for(a, "again", "error"))  # a already has its result
    ledger.finished(b, result_for(b, "two", "ok"), {"n": 2})
    ledger.close("Cancelled.", "cancelled")
    results = [i for i in history.items() if isinstance(i, ToolResult)]
    assert [(r.call_id, r.content, r.status) for r in results] == [
        ("a", "one", "ok"),
        ("b", "two", "ok"),
        ("c", "Cancelled.", "cancelled"),
    ]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [(e.call_id, e.details) for e in ends] == [("a", None), ("b", {"n": 2}), ("c", None)]
    assert heard == ["ok", "ok", "cancelled"] and not ledger.outstanding


class Counted:
    name: ClassVar[str] = "count"
    description: ClassVar[str] = "Counts the text."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = True

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(str(len(args.text)), details={"chars": len(args.text)} if args.text else {})


async def test_tool_end_carries_details_omitted_when_empty() -> None:
    agent, _, events = make_agent(
        [Step(calls=[Call("count", {"text": "abc"}), Call("count", {}), Call("nope", {})]), Step(text="ok")],
        [Counted()],
    )
    await agent.run("go")
    ends = [e.wire() for e in events if e.type == "tool_end"]
    assert ends[0]["details"] == {"chars": 3} and ends[0]["output"] == "3"
    assert "details" not in ends[1] and "details" not in ends[2] and ends[2]["status"] == "error"
