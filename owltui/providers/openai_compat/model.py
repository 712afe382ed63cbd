"""OpenAI-compatible Chat Completions over httpx: the endpoint, the headers and the request body (built
whole as a value, or from cached pieces: tools, system prompt and each history turn encoded once)."""

from __future__ import annotations

from typing import Any

from owltui.agent.imagecost import openai_tokens
from owltui.agent.messages import ImageRef
from owltui.agent.model import ModelRequest
from owltui.providers.http.stream import HTTPModel
from owltui.providers.http.wirecache import MIXED, SameList, Slots, commas
from owltui.providers.http.wirecache import key as wire_key
from owltui.providers.openai_compat.parser import OpenAIParser
from owltui.providers.openai_compat.wire import (
    HistoryWire,
    messages_wire,
    system_wire,
    tool_choice_wire,
    tools_wire,
)
from owltui.providers.table import PROVIDERS
from owltui.text.wirejson import encode, piece

DEFAULT_BASE_URL = PROVIDERS["openai"].default_base_url or ""
_TOOLS, _CHOICE, _MESSAGES = wire_key("tools"), wire_key("tool_choice"), wire_key("messages")


class OpenAICompatModel(HTTPModel):
    """Any Chat Completions server. ``base_url`` includes ``/v1``; ``/chat/completions`` is appended."""

    provider = "openai"

    def image_tokens(self, ref: ImageRef) -> int:
        """An image's tokens by this provider's published rule (the context budget's count)."""
        return openai_tokens(ref.width, ref.height)

    api_key_env = "OPENAI_API_KEY"

    def __init__(
        self, model: str, *, api_key: str | None = None, base_url: str = DEFAULT_BASE_URL, **kwargs: Any
    ) -> None:
        super().__init__(model, api_key=api_key, base_url=base_url, **kwargs)
        self._reset_wire()

    def _reset_wire(self) -> None:
        self._wire = Slots(lambda: HistoryWire(self.info.vision))
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
        body["messages"] = messages_wire(request, vision=self.info.vision)
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
