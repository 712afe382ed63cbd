"""Helpers for provider tests: fixtures location, running a model stream, fast retry policies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from owltui.agent.messages import AssistantMessage
from owltui.agent.model import (
    MessageAssembler,
    Model,
    ModelRequest,
    RetryNotice,
    StreamDone,
    StreamError,
    StreamEvent,
)
from owltui.providers.http.retry import RetryPolicy

T = TypeVar("T")
FIXTURES = (
    Path(__file__).resolve().parent / "sse_fixtures"
)  # real-server recordings; SOURCES.json says where from


def fixtures_dir() -> Path:
    assert FIXTURES.is_dir(), f"SSE fixtures missing at {FIXTURES}"
    return FIXTURES


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class Sleeps:
    """An injectable sleep that records the delays and does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def fast_retry(sleeps: Sleeps | None = None, **kw: Any) -> RetryPolicy:
    return RetryPolicy(sleep=sleeps or Sleeps(), **kw)


class Outcome:
    def __init__(self, events: list[StreamEvent], message: AssistantMessage) -> None:
        self.events = events
        self.message = message

    @property
    def retries(self) -> list[RetryNotice]:
        return [e for e in self.events if isinstance(e, RetryNotice)]

    @property
    def error(self) -> StreamError | None:
        errs = [e for e in self.events if isinstance(e, StreamError)]
        return errs[-1] if errs else None

    @property
    def done(self) -> StreamDone | None:
        d = [e for e in self.events if isinstance(e, StreamDone)]
        return d[-1] if d else None


async def collect(model: Model, request: ModelRequest) -> Outcome:
    """Run one stream the way the loop does: assemble, and on error keep the partial message."""
    asm = MessageAssembler(model.name)
    events: list[StreamEvent] = []
    error: StreamError | None = None
    async for ev in model.stream(request):
        events.append(ev)
        if isinstance(ev, StreamError):
            error = ev
        else:
            asm.feed(ev)
    msg = asm.finish_error(error.message) if error else asm.finish()
    aclose = getattr(model, "aclose", None)
    if aclose is not None:
        await aclose()
    return Outcome(events, msg)


def summary(msg: AssistantMessage, raw_stop: str | None) -> dict[str, Any]:
    return {
        "text": msg.text,
        "thinking": msg.thinking_text,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in msg.tool_calls],
        "stop_reason": raw_stop,
        "usage": {"input_tokens": msg.usage.input_tokens, "output_tokens": msg.usage.output_tokens},
    }


def load_expected(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
