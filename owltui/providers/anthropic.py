"""Anthropic Messages API over httpx: request mapping (with prompt-cache breakpoints) and stream parsing.

Cache breakpoints go on the system prompt, the last tool and the last block of the two latest user
turns: the newest one writes the cache for the next round, the one before reads what the previous
round wrote, so every round reuses the cached prefix however long the tool loop gets.
"""

from __future__ import annotations

from typing import Any

from owltui.agent.messages import AssistantMessage, StopReason, Usage
from owltui.agent.model import (
    ForceTool,
    ModelRequest,
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolChoice,
    ToolSpec,
)

from .base import HTTPModel
from .errors import bad_event_message
from .fast import loads, text_delta, thinking_delta
from .history import UserTurn, turns
from .table import PROVIDERS
from .wirejson import loose

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = PROVIDERS["anthropic"].default_base_url or ""
EPHEMERAL = {"type": "ephemeral"}
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "refusal": "stop",
    "tool_use": "tool_use", "max_tokens": "length", "model_context_window_exceeded": "length",
}
RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
_NONE: list[StreamEvent] = []


def tool_choice_wire(choice: ToolChoice) -> dict[str, Any]:
    """auto → auto, required → any, ForceTool → tool, none → none."""
    if isinstance(choice, ForceTool):
        return {"type": "tool", "name": choice.tool}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}[choice]}


def tools_wire(tools: list[ToolSpec] | tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                                 for t in sorted(tools, key=lambda t: t.name)]
    if out:
        out[-1]["cache_control"] = EPHEMERAL
    return out


def _assistant_blocks(msg: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for th in msg.thinking:
        if th.redacted and th.signature:
            blocks.append({"type": "redacted_thinking", "data": th.signature})
        elif th.signature:
            blocks.append({"type": "thinking", "thinking": th.text, "signature": th.signature})
    if msg.text:
        blocks.append({"type": "text", "text": msg.text})
    for call in msg.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks


def _user_blocks(turn: UserTurn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for res in turn.results:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": res.call_id,
                                 "content": res.content or "(no output)"}
        if res.is_error:
            block["is_error"] = True
        blocks.append(block)
    blocks.extend({"type": "text", "text": t} for t in turn.texts if t)
    return blocks or [{"type": "text", "text": "(empty message)"}]


def messages_wire(request: ModelRequest, cache_turns: int = 2) -> list[dict[str, Any]]:
    """History as Messages API messages, roles alternating, starting with the user."""
    out: list[dict[str, Any]] = []
    for turn in turns(request.messages):
        if isinstance(turn, UserTurn):
            out.append({"role": "user", "content": _user_blocks(turn)})
        else:
            blocks = _assistant_blocks(turn)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
    if not out or out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continuing)"}]})
    marked = 0
    for msg in reversed(out):
        if marked >= cache_turns:
            break
        if msg["role"] == "user":
            msg["content"][-1] = {**msg["content"][-1], "cache_control": EPHEMERAL}
            marked += 1
    return out


class AnthropicParser:
    """Anthropic stream events → stream events (usage in message_delta is cumulative)."""

    __slots__ = ("blocks", "has_content", "raw_stop", "terminal", "usage")

    def __init__(self) -> None:
        self.terminal: StreamDone | StreamError | None = None
        self.has_content = False
        self.usage: dict[str, int] = {}
        self.raw_stop: str | None = None
        self.blocks: dict[int, list[Any]] = {}  # index -> [type, got_input_delta, initial_input]

    def _bad(self, event: str, data: str, why: str) -> list[StreamEvent]:
        self.terminal = StreamError(message=bad_event_message("anthropic", event, data, why))
        return _NONE

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        try:
            obj = loads(data)
        except (ValueError, RecursionError):
            return self._bad(event, data, "not JSON")
        if not isinstance(obj, dict):
            return self._bad(event, data, "not a JSON object")
        try:
            return self._handle(obj)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return self._bad(event, data, f"missing or wrong field {exc}")

    def _handle(self, obj: dict[str, Any]) -> list[StreamEvent]:
        kind = obj.get("type")
        if kind == "content_block_delta":
            index = obj["index"]
            delta = obj["delta"]
            dtype = delta["type"]
            if dtype == "text_delta":
                text = delta["text"]
                if not text:
                    return _NONE
                self.has_content = True
                return [text_delta(text)]
            if dtype == "input_json_delta":
                frag = delta.get("partial_json") or ""
                block = self.blocks.get(index)
                if block is not None:
                    block[1] = True
                return [ToolCallDelta.model_construct(index=index, arguments=frag)] if frag else _NONE
            if dtype == "thinking_delta":
                text = delta["thinking"]
                if not text:
                    return _NONE
                self.has_content = True
                return [thinking_delta(text, index)]
            if dtype == "signature_delta":
                return [ThinkingDelta.model_construct(signature=delta["signature"], block=index)]
            return _NONE  # citations_delta and future kinds
        if kind == "content_block_start":
            index = obj["index"]
            block = obj["content_block"]
            btype = block["type"]
            self.blocks[index] = [btype, False, block.get("input")]
            if btype == "text":
                if block.get("text"):
                    self.has_content = True
                    return [TextDelta(text=block["text"])]
                return _NONE
            if btype == "tool_use":
                self.has_content = True
                return [ToolCallStart(index=index, id=block["id"], name=block["name"])]
            if btype == "thinking":
                if block.get("thinking"):
                    self.has_content = True
                if block.get("thinking") or block.get("signature"):
                    return [ThinkingDelta(text=block.get("thinking") or "",
                                          signature=block.get("signature") or None, block=index)]
                return _NONE
            if btype == "redacted_thinking":
                self.has_content = True
                return [ThinkingDelta(redacted=True, signature=block.get("data") or "", block=index)]
            return _NONE
        if kind == "content_block_stop":
            index = obj["index"]
            info = self.blocks.get(index)
            if info is None or info[0] != "tool_use":
                return _NONE
            out: list[StreamEvent] = []
            if not info[1] and isinstance(info[2], dict) and info[2]:
                out.append(ToolCallDelta(index=index, arguments=loose(info[2], ensure_ascii=True)))
            out.append(ToolCallEnd(index=index))
            return out
        if kind == "message_start":
            self._usage(obj["message"].get("usage") or {})
            return _NONE
        if kind == "message_delta":
            stop = (obj.get("delta") or {}).get("stop_reason")
            if stop:
                self.raw_stop = stop
            self._usage(obj.get("usage") or {})
            return _NONE
        if kind == "message_stop":
            self._done()
            return _NONE
        if kind == "error":
            err = obj.get("error") or {}
            etype = err.get("type") or "error"
            message = err.get("message") or etype
            self.terminal = StreamError(message=f"anthropic: {message} ({etype})",
                                        retryable=etype in RETRYABLE_ERRORS)
            return _NONE
        return _NONE  # ping and unknown events

    def _usage(self, usage: dict[str, Any]) -> None:
        for key, value in usage.items():
            if isinstance(value, int):
                self.usage[key] = value

    def _done(self) -> None:
        u = self.usage
        read = u.get("cache_read_input_tokens", 0)
        write = u.get("cache_creation_input_tokens", 0)
        # input_tokens counts the whole prompt, cached parts included, as OpenAI's prompt_tokens does
        usage = Usage(input_tokens=u.get("input_tokens", 0) + read + write,
                      output_tokens=u.get("output_tokens", 0), cache_read_tokens=read,
                      cache_write_tokens=write)
        raw = self.raw_stop
        self.terminal = StreamDone(stop_reason=STOP_REASONS.get(raw or "end_turn", "stop"), usage=usage,
                                   raw_stop_reason=raw)

    def end(self) -> list[StreamEvent]:
        if self.terminal is None:
            if self.raw_stop is not None:
                self._done()
            else:
                self.terminal = StreamError(message="anthropic: the stream ended before the response was "
                                                    "complete", retryable=True)
        return _NONE


class AnthropicModel(HTTPModel):
    """Claude over the Messages API. ``base_url`` is without ``/v1``."""

    provider = "anthropic"
    api_key_env = "ANTHROPIC_API_KEY"

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str = DEFAULT_BASE_URL,
                 thinking_budget: int | None = None, **kwargs: Any) -> None:
        super().__init__(model, api_key=api_key, base_url=base_url, **kwargs)
        self.thinking_budget = thinking_budget

    def url(self) -> str:
        base = self.base_url
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")

    def headers(self) -> dict[str, str]:
        h = {"anthropic-version": ANTHROPIC_VERSION}
        if self.api_key:
            h["x-api-key"] = self.api_key
        return h

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        max_tokens = request.max_output_tokens or self.max_output_tokens or self.info.max_output_tokens
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "stream": True}
        tools = tools_wire(tuple(request.tools))
        if tools:
            body["tools"] = tools
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}]
        if tools:
            body["tool_choice"] = tool_choice_wire(request.tool_choice)
        forced = request.tool_choice == "required" or isinstance(request.tool_choice, ForceTool)
        if self.thinking_budget and not forced:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
            body["max_tokens"] = max(max_tokens, self.thinking_budget + 1024)
        body["messages"] = messages_wire(request)
        return body

    def new_parser(self) -> AnthropicParser:
        return AnthropicParser()
