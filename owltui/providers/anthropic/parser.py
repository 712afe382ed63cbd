"""Messages API stream parsing: Anthropic's stream events as ours (usage in ``message_delta`` is
cumulative; text and thinking deltas of one network read are joined)."""

from __future__ import annotations

from typing import Any

from owltui.agent.messages import StopReason, Usage
from owltui.agent.model import (
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from owltui.providers.http.errors import bad_event_message
from owltui.providers.sse_json import loads
from owltui.text.wirejson import loose

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
        return [TextDelta(text=text) if self.held is None else ThinkingDelta(text=text, block=self.held)]

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
                return [ToolCallDelta(index=index, arguments=frag)] if frag else _NONE
            if dtype == "thinking_delta":
                text = delta["thinking"]
                if not text:
                    return _NONE
                self.has_content = True
                return self._hold(index, text)
            if dtype == "signature_delta":
                return [ThinkingDelta(signature=delta["signature"], block=index)]
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
