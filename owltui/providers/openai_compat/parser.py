"""OpenAI-compatible Chat Completions over httpx (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter…).

The parser copes with what real servers send: role repeated on every delta, whole tool calls in one
chunk, finish_reason sent twice, usage on an empty-choices chunk (or twice, or with choices), tool
calls with missing or reused ids and indexes (each call gets a stable id and index of our own), ""
arguments for tools without parameters, and reasoning in ``reasoning_content``/``reasoning``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from owltui.agent.messages import AssistantMessage, Item, StopReason, Usage
from owltui.agent.model import (
    ForceTool,
    ModelRequest,
    StreamDone,
    StreamError,
    StreamEvent,
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

DEFAULT_BASE_URL = PROVIDERS["openai"].default_base_url or ""
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
_TOOLS, _CHOICE, _MESSAGES = wire_key("tools"), wire_key("tool_choice"), wire_key("messages")


def tool_choice_wire(choice: ToolChoice) -> str | dict[str, Any]:
    """auto | none | required, or the forced function."""
    if isinstance(choice, ForceTool):
        return {"type": "function", "function": {"name": choice.tool}}
    return choice


def tools_wire(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in sorted(tools, key=lambda t: t.name)
    ]


def _assistant(msg: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": msg.text or None}
    if msg.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": loose(c.arguments)}}
            for c in msg.tool_calls
        ]
    elif not msg.text:
        out["content"] = ""
    return out


def user_turn_wire(turn: UserTurn) -> list[dict[str, Any]]:
    """A user turn: its tool results as ``tool`` messages, then its texts as one user message."""
    out: list[dict[str, Any]] = []
    for res in turn.results:
        content = res.content or "(no output)"
        if res.is_error and not content.lower().startswith("error"):
            content = "Error: " + content
        out.append({"role": "tool", "tool_call_id": res.call_id, "content": content})
    texts = [t for t in turn.texts if t]
    if texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def system_wire(system: str) -> dict[str, Any]:
    return {"role": "system", "content": system}


def messages_wire(request: ModelRequest) -> list[dict[str, Any]]:
    """System prompt, then the history: tool results as ``tool`` messages right after their call."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append(system_wire(request.system))
    for turn in turns(request.messages):
        if isinstance(turn, UserTurn):
            out.extend(user_turn_wire(turn))
        else:
            out.append(_assistant(turn))
    return out


def _turn_bytes(turn: Turn) -> tuple[bytes, int]:
    """A turn's messages as the body holds them (depth 2: body, messages, message), and their flags."""
    if isinstance(turn, UserTurn):
        pieces = [piece(m, depth=2) for m in user_turn_wire(turn)]
        flags = 0
        for _, f in pieces:
            flags |= f
        return b",".join(p for p, _ in pieces), flags
    return piece(_assistant(turn), depth=2)


class _Wire(TurnWire):
    """One history's encoded messages (see ``wirecache``): the closed turns' bytes, joined."""

    __slots__ = ("closed",)

    def __init__(self) -> None:
        super().__init__()
        self.closed = bytearray()

    def reset(self) -> None:
        super().reset()
        self.closed = bytearray()

    def encode_user(self, turn: UserTurn) -> tuple[bytes, int]:
        return _turn_bytes(turn)

    def messages(self, items: Sequence[Item]) -> tuple[list[bytes | bytearray], int]:
        """The pieces of the messages array after the system prompt (joined with commas), and
        their flags."""
        for turn in self.closed_turns(items):
            data, flags = self.user(turn) if isinstance(turn, UserTurn) else _turn_bytes(turn)
            self.flags |= flags
            if data:
                if self.closed:
                    self.closed += b","
                self.closed += data
        out: list[bytes | bytearray] = [self.closed] if self.closed else []  # joined at once: no copy
        flags = self.flags
        tail = self.open_tail()
        if tail is not None:
            if tail[0]:
                out.append(tail[0])
            flags |= tail[1]
        return out, flags


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
        return [text_delta(text) if self.kind == _TEXT else thinking_delta(text, 0)]

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


class OpenAICompatModel(HTTPModel):
    """Any Chat Completions server. ``base_url`` includes ``/v1``; ``/chat/completions`` is appended."""

    provider = "openai"
    api_key_env = "OPENAI_API_KEY"

    def __init__(
        self, model: str, *, api_key: str | None = None, base_url: str = DEFAULT_BASE_URL, **kwargs: Any
    ) -> None:
        super().__init__(model, api_key=api_key, base_url=base_url, **kwargs)
        self._reset_wire()

    def _reset_wire(self) -> None:
        self._wire = Slots(_Wire)
        self._tools = SameList()
        self._system: tuple[str, bytes] = ("", b"")

    def url(self) -> str:
        return self.base_url + "/chat/completions"

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _head(self, request: ModelRequest) -> dict[str, Any]:
        """The body's keys before the tools."""
        body: dict[str, Any] = {
            "model": self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        limit = request.max_output_tokens or self.max_output_tokens
        if limit:
            key = "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"
            body[key] = limit
        return body

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The request body as a value (the reference for ``encode_body``'s bytes)."""
        body = self._head(request)
        tools = tools_wire(tuple(request.tools))
        if tools:
            body["tools"] = tools
            body["tool_choice"] = tool_choice_wire(request.tool_choice)
        body["messages"] = messages_wire(request)
        return body

    def _encode_cached(self, request: ModelRequest) -> bytes:
        parts: list[bytes | bytearray] = [encode(self._head(request))[:-1]]
        flags = 0
        if request.tools:
            tools = self._tools.get(request.tools)
            if tools is None:
                tools = self._tools.put(request.tools, piece(tools_wire(tuple(request.tools)), depth=1))
            flags = self._tools.flags
            choice = encode(tool_choice_wire(request.tool_choice), depth=1)
            parts += [b",", _TOOLS, tools, b",", _CHOICE, choice]
        parts += [b",", _MESSAGES, b"["]
        messages, more = self._wire.get(request.messages).messages(request.messages)
        if (flags | more) & MIXED == MIXED:  # pieces that only join right when encoded whole
            return encode(self.build_body(request))
        if request.system:
            if self._system[0] != request.system:
                self._system = (request.system, encode(system_wire(request.system), depth=2))
            messages.insert(0, self._system[1])
        parts += commas(messages)
        parts.append(b"]}")
        return b"".join(parts)

    def new_parser(self) -> OpenAIParser:
        return OpenAIParser()
