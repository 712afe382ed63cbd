"""Claude over the Messages API and httpx: the endpoint, the headers and the request body (built whole
as a value, or from cached pieces: tools, system prompt and each history turn encoded once, the
cache breakpoints of the latest user turns set on the bytes)."""

from __future__ import annotations

from typing import Any

from owltui.agent.imagecost import anthropic_tokens
from owltui.agent.messages import ImageRef
from owltui.agent.model import ForceTool, ModelRequest
from owltui.providers.anthropic.parser import AnthropicParser
from owltui.providers.anthropic.wire import (
    HistoryWire,
    messages_wire,
    system_wire,
    tool_choice_wire,
    tools_wire,
)
from owltui.providers.http.stream import HTTPModel
from owltui.providers.http.wirecache import MIXED, SameList, Slots, commas
from owltui.providers.http.wirecache import key as wire_key
from owltui.providers.table import PROVIDERS
from owltui.text.wirejson import encode, piece

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = PROVIDERS["anthropic"].default_base_url or ""
_TOOLS, _SYSTEM, _MESSAGES = wire_key("tools"), wire_key("system"), wire_key("messages")


class AnthropicModel(HTTPModel):
    """Claude over the Messages API. ``base_url`` is without ``/v1``."""

    provider = "anthropic"

    def image_tokens(self, ref: ImageRef) -> int:
        """An image's tokens by this provider's published rule (the context budget's count)."""
        return anthropic_tokens(ref.width, ref.height)

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
        self._wire = Slots(lambda: HistoryWire(self.info.vision))
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
        body["messages"] = messages_wire(request, vision=self.info.vision)
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
