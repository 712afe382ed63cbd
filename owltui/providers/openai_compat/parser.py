"""Chat Completions stream parsing: an OpenAI-compatible server's chunks (OpenAI, Ollama, llama.cpp, vLLM,
LM Studio, OpenRouter…) as stream events.

The parser copes with what real servers send: role repeated on every delta, whole tool calls in one
chunk, finish_reason sent twice, usage on an empty-choices chunk (or twice, or with choices), tool
calls with missing or reused ids and indexes (each call gets a stable id and index of our own), ""
arguments for tools without parameters, and reasoning in ``reasoning_content``/``reasoning``.
"""

from __future__ import annotations

import json
import uuid
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
    "stop": "stop",
    "end_turn": "stop",
    "eos": "stop",
    "content_filter": "stop",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
    "length": "length",
    "max_tokens": "length",
}
_RETRYABLE_CODES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_NONE: list[StreamEvent] = []
_TEXT, _THINKING = 0, 1  # what OpenAIParser holds back


class _Call:
    __slots__ = ("args", "ended", "id", "name", "our", "pending", "pid", "pindex")

    def __init__(self, our: int, call_id: str, pid: str | None, pindex: int | None) -> None:
        self.our = our
        self.id = call_id
        self.pid = pid
        self.pindex = pindex
        self.name: str | None = None
        self.args: list[str] = []
        self.pending: list[str] = []  # fragments before the name was known
        self.ended = False


def _complete_json(parts: list[str]) -> bool:
    raw = "".join(parts)
    if not raw.strip():
        return True  # "" arguments: a tool without parameters, already complete
    try:
        return isinstance(json.loads(raw), dict)
    except (ValueError, RecursionError):
        return False


class OpenAIParser:
    """Chat Completions chunks → stream events.

    Text and reasoning are held back and joined: ``flush()`` (called once per network read) and any
    other event (a tool call, the end) deliver them as one delta, so a read that brought 300 tokens
    makes one event, not 300. What is held back always comes out before anything that followed it.
    """

    __slots__ = (
        "by_pid",
        "by_pindex",
        "calls",
        "current",
        "finish",
        "has_content",
        "kind",
        "parts",
        "terminal",
        "usage",
        "used_ids",
    )

    def __init__(self) -> None:
        self.terminal: StreamDone | StreamError | None = None
        self.has_content = False
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None
        self.calls: list[_Call] = []
        self.by_pid: dict[str, _Call] = {}
        self.by_pindex: dict[int, _Call] = {}
        self.current: _Call | None = None
        self.used_ids: set[str] = set()
        self.parts: list[str] = []  # text or reasoning held back
        self.kind = _TEXT

    def flush(self) -> list[StreamEvent]:
        """The text or reasoning held back, as one delta."""
        parts = self.parts
        if not parts:
            return _NONE
        text = parts[0] if len(parts) == 1 else "".join(parts)
        parts.clear()
        return [TextDelta(text=text) if self.kind == _TEXT else ThinkingDelta(text=text, block=0)]

    def _hold(self, kind: int, text: str) -> list[StreamEvent]:
        out = self.flush() if self.kind != kind else _NONE
        self.kind = kind
        self.parts.append(text)
        return out

    def _bad(self, event: str, data: str, why: str) -> list[StreamEvent]:
        self.terminal = StreamError(message=bad_event_message("openai", event, data, why))
        return self.flush()

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        if data[:1] == "[" and data == "[DONE]":  # not JSON: spare the parser its error
            return self._finish()
        try:
            obj = loads(data)
        except (ValueError, RecursionError):
            if data.strip() == "[DONE]":
                return self._finish()
            return self._bad(event, data, "not JSON")
        try:
            choices = obj["choices"] if "choices" in obj else None
            usage = obj.get("usage")
            if usage:
                self.usage = usage
            if choices:
                choice = choices[0]
                delta = choice.get("delta")
                finish = choice.get("finish_reason")
                if finish and self.finish is None:
                    self.finish = finish
                if delta:
                    content = delta.get("content")
                    if (
                        content
                        and type(content) is str
                        and (len(delta) == 1 or (len(delta) == 2 and "role" in delta))
                    ):  # hot path
                        self.has_content = True
                        if self.kind == _TEXT:
                            self.parts.append(content)
                            return _NONE
                        return self._hold(_TEXT, content)
                    return self._delta(delta, content)
                return _NONE
            if "error" in obj:
                return self._error(obj["error"])
            if not isinstance(obj, dict):
                return self._bad(event, data, "not a JSON object")
            return _NONE
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            return self._bad(event, data, f"missing or wrong field {exc}")

    def _error(self, err: Any) -> list[StreamEvent]:
        if isinstance(err, dict):
            message = str(err.get("message") or err.get("type") or err)
            code = err.get("code")
            retryable = code in _RETRYABLE_CODES or err.get("type") in ("server_error", "overloaded_error")
        else:
            message, retryable = str(err), False
        self.terminal = StreamError(message=f"openai: {message}", retryable=bool(retryable))
        return self.flush()

    def _delta(self, delta: dict[str, Any], content: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning and isinstance(reasoning, str):
            self.has_content = True
            out += self._hold(_THINKING, reasoning)
        if content and isinstance(content, str):
            self.has_content = True
            out += self._hold(_TEXT, content)
        calls = delta.get("tool_calls")
        if calls:
            tools: list[StreamEvent] = []
            for tc in calls:
                self._tool_delta(tc, tools)
            if tools:
                out += self.flush()
                out += tools
        return out

    def _new_call(self, pid: str | None, pindex: int | None, out: list[StreamEvent]) -> _Call:
        if self.current is not None and not self.current.ended and self.current.name is not None:
            self.current.ended = True
            out.append(ToolCallEnd(index=self.current.our))
        call_id = pid if pid and pid not in self.used_ids else f"call_{uuid.uuid4().hex[:24]}"
        self.used_ids.add(call_id)
        call = _Call(len(self.calls), call_id, pid, pindex)
        self.calls.append(call)
        if pid:
            self.by_pid[pid] = call
        if pindex is not None:
            self.by_pindex[pindex] = call
        self.has_content = True
        return call

    def _tool_delta(self, tc: dict[str, Any], out: list[StreamEvent]) -> None:
        pid = tc.get("id") or None
        pindex = tc.get("index")
        if not isinstance(pindex, int):
            pindex = None
        fn = tc.get("function") or {}
        name = fn.get("name") or None
        args = fn.get("arguments")
        if args is not None and not isinstance(args, str):
            args = loose(args, ensure_ascii=True)
        call: _Call | None
        if pid is not None:
            call = self.by_pid.get(pid)
            if call is None:
                call = self._new_call(pid, pindex, out)
        else:
            call = self.by_pindex.get(pindex) if pindex is not None else self.current
            if call is not None and name and call.name and _complete_json(call.args):
                call = None  # a reused index without ids: a new call
            if call is None:
                call = self._new_call(None, pindex, out)
        self.current = call
        if call.name is None and name:
            call.name = name
            out.append(ToolCallStart(index=call.our, id=call.id, name=name))
            for frag in call.pending:
                out.append(ToolCallDelta(index=call.our, arguments=frag))
            call.pending.clear()
        if args:
            call.args.append(args)
            if call.name is None:
                call.pending.append(args)
            else:
                out.append(ToolCallDelta(index=call.our, arguments=args))

    def _finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = list(self.flush())
        for call in self.calls:
            if call.name is None:
                call.name = ""
                out.append(ToolCallStart(index=call.our, id=call.id, name=""))
                out.extend(ToolCallDelta(index=call.our, arguments=f) for f in call.pending)
            if not call.ended:
                call.ended = True
                out.append(ToolCallEnd(index=call.our))
        raw = self.finish
        stop = STOP_REASONS.get(raw or "stop", "stop")
        if self.calls and stop == "stop":
            stop = "tool_use"
        self.terminal = StreamDone(stop_reason=stop, usage=self._usage(), raw_stop_reason=raw)
        return out

    def _usage(self) -> Usage:
        u = self.usage or {}
        details = u.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        written = int(details.get("cache_write_tokens") or 0)
        prompt = int(u.get("prompt_tokens") or 0)
        return Usage(
            input_tokens=prompt,  # as the server counts it: cached tokens included
            output_tokens=int(u.get("completion_tokens") or 0),
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )

    def end(self) -> list[StreamEvent]:
        if self.terminal is not None:
            return self.flush()
        if self.finish is None:
            self.terminal = StreamError(
                message="openai: the stream ended before the response was complete", retryable=True
            )
            return self.flush()
        return self._finish()
