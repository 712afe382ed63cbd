"""Chat Completions request shapes: tools, tool choice, the system prompt and the history as messages
(tool results as ``tool`` messages right after their call), and ``HistoryWire``, one history's
messages encoded once per turn for the cached body of ``OpenAICompatModel``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from owltui.agent.messages import AssistantMessage, Item
from owltui.agent.model import ForceTool, ModelRequest, ToolChoice, ToolSpec
from owltui.providers.history import Turn, UserTurn, turns
from owltui.providers.http.wirecache import TurnWire
from owltui.providers.image_wire import openai_part
from owltui.text.wirejson import loose, piece


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


TOOL_IMAGES = "[the image is in the user message after the tool results]"


def user_turn_wire(turn: UserTurn, vision: bool = True) -> list[dict[str, Any]]:
    """A user turn: its tool results as ``tool`` messages, then its texts as one user message. A
    ``tool`` message holds text only, so a result's images go into that user message (first,
    labelled with the call), and the result's text says where they are."""
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []  # images of tool results: a tool message cannot carry one
    for res in turn.results:
        content = res.content or "(no output)"
        if res.is_error and not content.lower().startswith("error"):
            content = "Error: " + content
        if res.images:
            content += f"\n{TOOL_IMAGES}"
            parts.append({"type": "text", "text": f"[images of the {res.name} call {res.call_id}]"})
            parts.extend(openai_part(r, vision) for r in res.images)
        out.append({"role": "tool", "tool_call_id": res.call_id, "content": content})
    texts = [t for t in turn.texts if t]
    if texts and not parts and not turn.images:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    elif texts or parts or turn.images:
        if texts:
            parts.append({"type": "text", "text": "\n\n".join(texts)})
        parts.extend(openai_part(r, vision) for r in turn.images)
        out.append({"role": "user", "content": parts})
    return out


def system_wire(system: str) -> dict[str, Any]:
    return {"role": "system", "content": system}


def messages_wire(request: ModelRequest, vision: bool = True) -> list[dict[str, Any]]:
    """System prompt, then the history: tool results as ``tool`` messages right after their call."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append(system_wire(request.system))
    for turn in turns(request.messages):
        if isinstance(turn, UserTurn):
            out.extend(user_turn_wire(turn, vision))
        else:
            out.append(_assistant(turn))
    return out


def _turn_bytes(turn: Turn, vision: bool = True) -> tuple[bytes, int]:
    """A turn's messages as the body holds them (depth 2: body, messages, message), and their flags."""
    if isinstance(turn, UserTurn):
        pieces = [piece(m, depth=2) for m in user_turn_wire(turn, vision)]
        flags = 0
        for _, f in pieces:
            flags |= f
        return b",".join(p for p, _ in pieces), flags
    return piece(_assistant(turn), depth=2)


class HistoryWire(TurnWire):
    """One history's encoded messages (see ``wirecache``): the closed turns' bytes, joined."""

    __slots__ = ("closed", "vision")

    def __init__(self, vision: bool = True) -> None:
        super().__init__()
        self.vision = vision
        self.closed = bytearray()

    def reset(self) -> None:
        super().reset()
        self.closed = bytearray()

    def encode_user(self, turn: UserTurn) -> tuple[bytes, int]:
        return _turn_bytes(turn, self.vision)

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
