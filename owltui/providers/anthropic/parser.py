"""Anthropic Messages API over httpx: request mapping (with prompt-cache breakpoints) and stream parsing.

Cache breakpoints go on the system prompt, the last tool and the last block of the two latest user
turns: the newest one writes the cache for the next round, the one before reads what the previous
round wrote, so every round reuses the cached prefix however long the tool loop gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from owltui.agent.messages import AssistantMessage, Item, StopReason, Usage
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
from owltui.providers.fast import loads, text_delta, thinking_delta
from owltui.providers.history import Turn, UserTurn, turns
from owltui.providers.http.errors import bad_event_message
from owltui.providers.http.stream import HTTPModel
from owltui.providers.http.wirecache import MIXED, SameList, Slots, TurnWire, commas
from owltui.providers.http.wirecache import key as wire_key
from owltui.providers.table import PROVIDERS
from owltui.text.wirejson import encode, loose, piece

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = PROVIDERS["anthropic"].default_base_url or ""
EPHEMERAL = {"type": "ephemeral"}
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
_NONE: list[StreamEvent] = []
_TOOLS, _SYSTEM, _MESSAGES = wire_key("tools"), wire_key("system"), wire_key("messages")


def tool_choice_wire(choice: ToolChoice) -> dict[str, Any]:
    """auto → auto, required → any, ForceTool → tool, none → none."""
    if isinstance(choice, ForceTool):
        return {"type": "tool", "name": choice.tool}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}[choice]}


def tools_wire(tools: list[ToolSpec] | tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters}
        for t in sorted(tools, key=lambda t: t.name)
    ]
    if out:
        out[-1]["cache_control"] = EPHEMERAL
    return out


def system_wire(system: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": system, "cache_control": EPHEMERAL}]


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
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": res.call_id,
            "content": res.content or "(no output)",
        }
        if res.is_error:
            block["is_error"] = True
        blocks.append(block)
    blocks.extend({"type": "text", "text": t} for t in turn.texts if t)
    return blocks or [{"type": "text", "text": "(empty message)"}]


CONTINUING: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "(continuing)"}]}


def _turn_message(turn: Turn) -> dict[str, Any] | None:
    if isinstance(turn, UserTurn):
        return {"role": "user", "content": _user_blocks(turn)}
    blocks = _assistant_blocks(turn)
    return {"role": "assistant", "content": blocks} if blocks else None


def messages_wire(request: ModelRequest, cache_turns: int = 2) -> list[dict[str, Any]]:
    """History as Messages API messages, roles alternating, starting with the user."""
    out: list[dict[str, Any]] = []
    for turn in turns(request.messages):
        msg = _turn_message(turn)
        if msg is not None:
            out.append(msg)
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


_MARK = b',"cache_control":{"type":"ephemeral"}}]}'


def _marked(message: bytes) -> bytes:
    """A user message's bytes with the cache breakpoint on its last block: the block is a JSON object
    that ends the message (``...}]}``), and the mark is its last key."""
    return message[:-3] + _MARK


class _Wire(TurnWire):
    """One history's encoded messages (see ``wirecache``). Breakpoints move every round, so the
    last two closed user messages are kept apart (``recent``), unmarked; what comes before them is
    never marked again and is joined into ``frozen``."""

    __slots__ = ("frozen", "recent", "started")

    def __init__(self) -> None:
        super().__init__()
        self.frozen = bytearray()
        self.recent: list[tuple[bytes, bool]] = []  # (unmarked message, is a user message)
        self.started = False  # a message was written ("(continuing)" goes first if it was not a user's)

    def reset(self) -> None:
        super().reset()
        self.frozen = bytearray()
        self.recent = []
        self.started = False

    def encode_user(self, turn: UserTurn) -> tuple[bytes, int]:
        return piece({"role": "user", "content": _user_blocks(turn)}, depth=2)

    def _add(self, message: tuple[bytes, int], user: bool) -> None:
        if not self.started:
            self.started = True
            if not user:
                self.recent.append((encode(CONTINUING, depth=2), True))
        self.flags |= message[1]
        recent = self.recent
        recent.append((message[0], user))
        users = [i for i, (_, u) in enumerate(recent) if u]
        if len(users) > 2:
            cut = users[-2]
            for data, _ in recent[:cut]:
                if self.frozen:
                    self.frozen += b","
                self.frozen += data
            del recent[:cut]

    def messages(self, items: Sequence[Item], cache_turns: int) -> tuple[list[bytes | bytearray], int]:
        """The pieces of the messages array (joined with commas), and their flags."""
        for turn in self.closed_turns(items):
            if isinstance(turn, UserTurn):
                self._add(self.user(turn), True)
            else:
                msg = _turn_message(turn)
                if msg is not None:
                    self._add(piece(msg, depth=2), False)
        trailing = list(self.recent)
        flags = self.flags
        tail = self.open_tail()
        if tail is not None:
            trailing.append((tail[0], True))
            flags |= tail[1]
        if not self.started and not trailing:
            trailing.append((encode(CONTINUING, depth=2), True))
        marked = 0
        out: list[bytes | bytearray] = []
        for data, user in reversed(trailing):
            if user and marked < cache_turns:
                data = _marked(data)
                marked += 1
            out.append(data)
        out.reverse()
        if self.frozen:
            out.insert(0, self.frozen)  # joined at once: no copy
        return out, flags


class AnthropicParser:
    """Anthropic stream events → stream events (usage in message_delta is cumulative).

    Text and thinking deltas are held back and joined: ``flush()`` (called once per network read)
    and any other event deliver them as one delta; what is held back always comes out first.
    """

    __slots__ = ("blocks", "fresh", "has_content", "held", "parts", "raw_stop", "terminal", "usage")

    def __init__(self) -> None:
        self.terminal: StreamDone | StreamError | None = None
        self.has_content = False
        self.usage: dict[str, int] = {}
        self.raw_stop: str | None = None
        self.blocks: dict[int, list[Any]] = {}  # index -> [type, got_input_delta, initial_input]
        self.parts: list[str] = []  # text or thinking held back
        self.held: int | None = None  # None: text; an index: that thinking block's
        self.fresh = False  # the last event was held back (what it returned is in order already)

    def flush(self) -> list[StreamEvent]:
        """The text or thinking held back, as one delta."""
        parts = self.parts
        if not parts:
            return _NONE
        text = parts[0] if len(parts) == 1 else "".join(parts)
        parts.clear()
        return [text_delta(text) if self.held is None else thinking_delta(text, self.held)]

    def _bad(self, event: str, data: str, why: str) -> list[StreamEvent]:
        self.terminal = StreamError(message=bad_event_message("anthropic", event, data, why))
        return self.flush()

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        try:
            obj = loads(data)
        except (ValueError, RecursionError):
            return self._bad(event, data, "not JSON")
        if not isinstance(obj, dict):
            return self._bad(event, data, "not a JSON object")
        try:
            out = self._handle(obj)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return self._bad(event, data, f"missing or wrong field {exc}")
        if self.fresh:
            self.fresh = False
            return out
        if (out or self.terminal is not None) and self.parts:
            return [*self.flush(), *out]
        return out

    def _hold(self, held: int | None, text: str) -> list[StreamEvent]:
        out = self.flush() if self.held != held else _NONE
        self.held = held
        self.parts.append(text)
        self.fresh = True
        return out

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
                if self.held is None:
                    self.parts.append(text)
                    return _NONE
                return self._hold(None, text)
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
                return self._hold(index, text)
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
                    return [
                        ThinkingDelta(
                            text=block.get("thinking") or "",
                            signature=block.get("signature") or None,
                            block=index,
                        )
                    ]
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
            self.terminal = StreamError(
                message=f"anthropic: {message} ({etype})", retryable=etype in RETRYABLE_ERRORS
            )
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
        usage = Usage(
            input_tokens=u.get("input_tokens", 0) + read + write,
            output_tokens=u.get("output_tokens", 0),
            cache_read_tokens=read,
            cache_write_tokens=write,
        )
        raw = self.raw_stop
        self.terminal = StreamDone(
            stop_reason=STOP_REASONS.get(raw or "end_turn", "stop"), usage=usage, raw_stop_reason=raw
        )

    def end(self) -> list[StreamEvent]:
        if self.terminal is None:
            if self.raw_stop is not None:
                self._done()
            else:
                self.terminal = StreamError(
                    message="anthropic: the stream ended before the response was complete", retryable=True
                )
        return self.flush()


class AnthropicModel(HTTPModel):
    """Claude over the Messages API. ``base_url`` is without ``/v1``."""

    provider = "anthropic"
    api_key_env = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        thinking_budget: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, api_key=api_key, base_url=base_url, **kwargs)
        self.thinking_budget = thinking_budget
        self._reset_wire()

    def _reset_wire(self) -> None:
        self._wire = Slots(_Wire)
        self._tools = SameList()
        self._system: tuple[str, bytes] = ("", b"")

    def url(self) -> str:
        base = self.base_url
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")

    def headers(self) -> dict[str, str]:
        h = {"anthropic-version": ANTHROPIC_VERSION}
        if self.api_key:
            h["x-api-key"] = self.api_key
        return h

    def _head(self, request: ModelRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        """The body's keys before the tools, and those between the system prompt and the messages."""
        max_tokens = request.max_output_tokens or self.max_output_tokens or self.info.max_output_tokens
        head: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "stream": True}
        rest: dict[str, Any] = {}
        if request.tools:
            rest["tool_choice"] = tool_choice_wire(request.tool_choice)
        forced = request.tool_choice == "required" or isinstance(request.tool_choice, ForceTool)
        if self.thinking_budget and not forced:
            rest["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
            head["max_tokens"] = max(max_tokens, self.thinking_budget + 1024)
        return head, rest

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The request body as a value (the reference for ``encode_body``'s bytes)."""
        head, rest = self._head(request)
        body = dict(head)
        tools = tools_wire(tuple(request.tools))
        if tools:
            body["tools"] = tools
        if request.system:
            body["system"] = system_wire(request.system)
        body.update(rest)
        body["messages"] = messages_wire(request)
        return body

    def _encode_cached(self, request: ModelRequest) -> bytes:
        head, rest = self._head(request)
        parts: list[bytes | bytearray] = [encode(head)[:-1]]
        flags = 0
        if request.tools:
            tools = self._tools.get(request.tools)
            if tools is None:
                tools = self._tools.put(request.tools, piece(tools_wire(tuple(request.tools)), depth=1))
            flags = self._tools.flags
            parts += [b",", _TOOLS, tools]
        if request.system:
            if self._system[0] != request.system:
                self._system = (request.system, encode(system_wire(request.system), depth=1))
            parts += [b",", _SYSTEM, self._system[1]]
        if rest:
            parts += [b",", encode(rest)[1:-1]]
        messages, more = self._wire.get(request.messages).messages(request.messages, 2)
        if (flags | more) & MIXED == MIXED:  # pieces that only join right when encoded whole
            return encode(self.build_body(request))
        parts += [b",", _MESSAGES, b"[", *commas(messages), b"]}"]
        return b"".join(parts)

    def new_parser(self) -> AnthropicParser:
        return AnthropicParser()
