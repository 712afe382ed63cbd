"""Test tools and a harness for driving the agent core with a ScriptedModel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel, Field

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.events import Event
from owltui.agent.messages import AssistantMessage, ToolResult, UserMessage
from owltui.agent.pause import PauseGate
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.testing.scripted import ScriptedModel, Step


class TextArgs(BaseModel):
    text: str = Field("", description="Text.")


class Echo:
    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Echo the text back."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = True

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        self.ran.append(args.text)
        return ToolOutput(args.text)


class Fail:
    name: ClassVar[str] = "fail"
    description: ClassVar[str] = "Always fails."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = False

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        raise ToolError(f"failed: {args.text}")


class Crash:
    name: ClassVar[str] = "crash"
    description: ClassVar[str] = "Raises an unexpected exception."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = False

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("boom")


class Blocker:
    """A tool that signals ``started`` and waits for ``release`` (or cancellation)."""

    name: ClassVar[str] = "block"
    description: ClassVar[str] = "Waits until released."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = False

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = False
        self.token_seen_cancel = False
        self.runs = 0

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        self.runs += 1
        self.started.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            self.token_seen_cancel = ctx.cancel.cancelled
            raise
        return ToolOutput(f"released {args.text}")


class ReadBlocker(Blocker):
    name: ClassVar[str] = "rblock"
    read_only: ClassVar[bool] = True


class Big:
    name: ClassVar[str] = "big"
    description: ClassVar[str] = "Prints many lines."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = True

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("\n".join(f"line {i}" for i in range(1, 5001)))


def make_agent(
    steps: Sequence[Step] | Any, tools: Sequence[Any] = (), **cfg: Any
) -> tuple[Agent, ScriptedModel, list[Event]]:
    model = ScriptedModel(steps)
    gate = cfg.pop("gate", None) or PauseGate()
    agent = Agent(LoopConfig(model=model, tools=tools, **cfg), gate=gate)
    events: list[Event] = []
    agent.emitter.subscribe(events.append)
    return agent, model, events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def user_texts(agent: Agent) -> list[tuple[str, str]]:
    return [(i.lane, i.text) for i in agent.history.items() if isinstance(i, UserMessage)]


def check_history(agent: Agent) -> None:
    """Invariants: every call has exactly one result, right after its assistant message."""
    items = list(agent.history.items())
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, AssistantMessage) and item.tool_calls:
            ids = [c.id for c in item.tool_calls]
            following = items[i + 1 : i + 1 + len(ids)]
            assert [r.call_id for r in following if isinstance(r, ToolResult)] == ids, (ids, following)
            assert all(isinstance(r, ToolResult) for r in following)
            i += 1 + len(ids)
            continue
        assert not isinstance(item, ToolResult), f"orphan result at {i}: {item}"
        i += 1
