"""``ScriptedModel``: a deterministic model for tests and benchmarks.

Each call pops the next ``Step`` (or asks a callable for it, given the request). A step can stream
text word by word, call tools (arguments as an object or as raw, possibly malformed, JSON), wait
on an event before or during the stream, fail before or after content, or run out.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from owltui.agent.messages import StopReason, Usage
from owltui.agent.model import (
    ModelRequest,
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)  # str = raw JSON (may be broken)
    id: str | None = None


@dataclass
class Step:
    text: str = ""
    calls: Sequence[Call] = ()
    thinking: str = ""
    chunk: int = 0  # 0: text in one delta; n: n characters a delta
    delay: float = 0.0  # seconds between deltas
    gate: anyio.Event | None = None  # wait for this before streaming
    mid_gate: anyio.Event | None = None  # wait for this after the first delta
    started: anyio.Event | None = None  # set when the stream starts
    error: str | None = None  # fail after the text (and complete calls)
    stop: StopReason | None = None
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=10, output_tokens=5))


StepSource = Sequence[Step] | Callable[[ModelRequest], Step]


class ScriptedModel:
    def __init__(self, steps: StepSource = (), name: str = "scripted", record: bool = True) -> None:
        self._steps = list(steps) if not callable(steps) else []
        self._fn = steps if callable(steps) else None
        self._name = name
        self.requests: list[ModelRequest] = []
        self.views: list[list[Any]] = []  # the messages as each call saw them (when ``record``)
        self._record = record
        self._ids = 0

    @property
    def name(self) -> str:
        return self._name

    def add(self, *steps: Step) -> None:
        self._steps.extend(steps)

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if self._record:
            self.views.append(list(request.messages))
        if self._fn is not None:
            step = self._fn(request)
        elif self._steps:
            step = self._steps.pop(0)
        else:
            step = Step(text="(script exhausted)")
        if step.started is not None:
            step.started.set()
        if step.gate is not None:
            await step.gate.wait()
        if step.thinking:
            yield ThinkingDelta(text=step.thinking)
        text = step.text
        size = step.chunk or max(1, len(text))
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        for n, piece in enumerate(p for p in pieces if p):
            if step.delay:
                await anyio.sleep(step.delay)
            yield TextDelta(text=piece)
            if n == 0 and step.mid_gate is not None:
                await step.mid_gate.wait()
        for i, call in enumerate(step.calls):
            self._ids += 1
            yield ToolCallStart(index=i, id=call.id or f"call_{self._ids}", name=call.name)
            raw = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            yield ToolCallDelta(index=i, arguments=raw)
            yield ToolCallEnd(index=i)
        if step.error is not None:
            yield StreamError(message=step.error)
            return
        stop = step.stop or ("tool_use" if step.calls else "stop")
        yield StreamDone(stop_reason=stop, usage=step.usage)
