"""The model protocol: what the loop sends (``ModelRequest``) and the stream it reads back.

A provider implements ``Model.stream(request)`` as an async iterator of ``StreamEvent``. The loop
assembles the events into one ``AssistantMessage`` with ``MessageAssembler``; providers and tests use
the same assembler, so "what a stream means" is defined once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from owltui.agent.messages import (
    AssistantMessage,
    Item,
    LazyModel,
    StopReason,
    ThinkingBlock,
    ToolCall,
    Usage,
)


class ToolSpec(LazyModel):
    """A tool as the model sees it: name, description, JSON schema of its parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


class ForceTool(LazyModel):
    """Tool choice that forces one named tool."""

    tool: str


ToolChoice = Literal["auto", "none", "required"] | ForceTool


@dataclass(slots=True)
class ModelRequest:
    """One model call. ``tools`` is sorted by name and identical on every round of a run.

    A plain dataclass on purpose: ``messages`` is the history's own sequence, never copied or
    re-validated per round (that would make every round cost O(history)).
    """

    system: str
    messages: Sequence[Item]
    tools: Sequence[ToolSpec] = ()
    tool_choice: ToolChoice = "auto"
    max_output_tokens: int | None = None


class TextDelta(LazyModel):
    type: Literal["text"] = "text"
    text: str


class ThinkingDelta(LazyModel):
    type: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None  # replaces the block's signature when set
    redacted: bool = False
    block: int | None = None  # provider block index; a new index starts a new thinking block


class ToolCallStart(LazyModel):
    type: Literal["tool_call_start"] = "tool_call_start"
    index: int
    id: str
    name: str


class ToolCallDelta(LazyModel):
    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    arguments: str


class ToolCallEnd(LazyModel):
    type: Literal["tool_call_end"] = "tool_call_end"
    index: int


class StreamDone(LazyModel):
    type: Literal["done"] = "done"
    stop_reason: StopReason
    usage: Usage = Field(default_factory=Usage)
    raw_stop_reason: str | None = None


class StreamError(LazyModel):
    """A failure of the model call. ``retryable`` errors before any content may be retried."""

    type: Literal["error"] = "error"
    message: str
    retryable: bool = False


class RetryNotice(LazyModel):
    """The provider is about to retry (surfaced as a ``retry`` event)."""

    type: Literal["retry"] = "retry"
    attempt: int
    delay_s: float
    reason: str


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | StreamDone
    | StreamError
    | RetryNotice
)


@runtime_checkable
class Model(Protocol):
    """A streaming chat model. ``name`` is what the status bar shows."""

    @property
    def name(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse tool-call arguments. Empty means ``{}``; anything but a JSON object is an error."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    except RecursionError:
        return {}, "arguments are nested too deeply to parse"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


class _PartialCall:
    __slots__ = ("args", "closed", "id", "name")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name
        self.args: list[str] = []
        self.closed = False


class MessageAssembler:
    """Folds stream events into an ``AssistantMessage``.

    ``finish_error`` keeps the text and the tool calls that were completed, drops partial ones.
    """

    def __init__(self, model: str | None = None) -> None:
        self.text: list[str] = []
        self.thinking: list[ThinkingBlock] = []
        self._thinking_block: int | None = None
        self.calls: dict[int, _PartialCall] = {}
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self.model = model
        self.has_content = False

    def feed(self, ev: StreamEvent) -> None:
        if isinstance(ev, TextDelta):
            if ev.text:
                self.text.append(ev.text)
                self.has_content = True
        elif isinstance(ev, ThinkingDelta):
            if not self.thinking or (ev.block is not None and ev.block != self._thinking_block):
                self.thinking.append(ThinkingBlock())
                self._thinking_block = ev.block
            blk = self.thinking[-1]
            if ev.text:
                blk.text += ev.text
                self.has_content = True
            if ev.signature is not None:
                blk.signature = ev.signature
            if ev.redacted:
                blk.redacted = True
        elif isinstance(ev, ToolCallStart):
            self.calls[ev.index] = _PartialCall(ev.id, ev.name)
            self.has_content = True
        elif isinstance(ev, ToolCallDelta):
            call = self.calls.get(ev.index)
            if call is not None:
                call.args.append(ev.arguments)
        elif isinstance(ev, ToolCallEnd):
            call = self.calls.get(ev.index)
            if call is not None:
                call.closed = True
        elif isinstance(ev, StreamDone):
            self.stop_reason = ev.stop_reason
            self.usage = ev.usage

    def _tool_calls(self, only_closed: bool) -> list[ToolCall]:
        out: list[ToolCall] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if only_closed and not call.closed:
                continue
            raw = "".join(call.args)
            args, err = parse_arguments(raw)
            if err is None:  # defaults unset: see ``finish``
                out.append(ToolCall(id=call.id, name=call.name, arguments=args))
            else:
                out.append(
                    ToolCall(id=call.id, name=call.name, arguments=args, parse_error=err, raw_arguments=raw)
                )
        return out

    def finish(self) -> AssistantMessage:
        calls = self._tool_calls(only_closed=False)
        stop = self.stop_reason or "stop"
        if calls and stop == "stop":
            stop = "tool_use"  # trust the calls received over the finish reason
        # Only what differs from the defaults is given: pydantic keeps a set of the fields given per
        # instance, 216 bytes for up to four names and 728 for five, and a long turn holds them all.
        fields: dict[str, Any] = {"stop_reason": stop, "usage": self.usage}
        if self.text:
            fields["text"] = "".join(self.text)
        if self.thinking:
            fields["thinking"] = self.thinking
        if calls:
            fields["tool_calls"] = calls
        if self.model is not None:
            fields["model"] = self.model
        return AssistantMessage(**fields)

    def finish_error(self, message: str, *, aborted: bool = False) -> AssistantMessage:
        return AssistantMessage(
            text="".join(self.text),
            thinking=self.thinking,
            tool_calls=self._tool_calls(only_closed=True),
            stop_reason="aborted" if aborted else "error",
            usage=self.usage,
            error=None if aborted else message,
            model=self.model,
        )
