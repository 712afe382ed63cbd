"""Messages API request shapes, with prompt-cache breakpoints, and ``HistoryWire``, one history's
messages encoded once per turn for the cached body of ``AnthropicModel``.

Cache breakpoints go on the system prompt, the last tool and the last block of the two latest user
turns: the newest one writes the cache for the next round, the one before reads what the previous
round wrote, so every round reuses the cached prefix however long the tool loop gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from owltui.agent.messages import AssistantMessage, Item
from owltui.agent.model import ForceTool, ModelRequest, ToolChoice, ToolSpec
from owltui.providers.history import Turn, UserTurn, turns
from owltui.providers.http.wirecache import TurnWire
from owltui.providers.image_wire import anthropic_block
from owltui.text.wirejson import encode, piece

EPHEMERAL = {"type": "ephemeral"}


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


def _user_blocks(turn: UserTurn, vision: bool = True) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for res in turn.results:
        content: str | list[dict[str, Any]] = res.content or "(no output)"
        if res.images:  # a tool result's content may be a list of text and image blocks
            content = [{"type": "text", "text": content}, *(anthropic_block(r, vision) for r in res.images)]
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": res.call_id, "content": content}
        if res.is_error:
            block["is_error"] = True
        blocks.append(block)
    blocks.extend({"type": "text", "text": t} for t in turn.texts if t)
    blocks.extend(anthropic_block(r, vision) for r in turn.images)
    return blocks or [{"type": "text", "text": "(empty message)"}]


CONTINUING: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "(continuing)"}]}


def _turn_message(turn: Turn, vision: bool = True) -> dict[str, Any] | None:
    if isinstance(turn, UserTurn):
        return {"role": "user", "content": _user_blocks(turn, vision)}
    blocks = _assistant_blocks(turn)
    return {"role": "assistant", "content": blocks} if blocks else None


def messages_wire(request: ModelRequest, cache_turns: int = 2, vision: bool = True) -> list[dict[str, Any]]:
    """History as Messages API messages, roles alternating, starting with the user (images as text
    placeholders when not ``vision``)."""
    out: list[dict[str, Any]] = []
    for turn in turns(request.messages):
        msg = _turn_message(turn, vision)
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


class HistoryWire(TurnWire):
    """One history's encoded messages (see ``wirecache``). Breakpoints move every round, so the
    last two closed user messages are kept apart (``recent``), unmarked; what comes before them is
    never marked again and is joined into ``frozen``."""

    __slots__ = ("frozen", "recent", "started", "vision")

    def __init__(self, vision: bool = True) -> None:
        super().__init__()
        self.vision = vision
        self.frozen = bytearray()
        self.recent: list[tuple[bytes, bool]] = []  # (unmarked message, is a user message)
        self.started = False  # a message was written ("(continuing)" goes first if it was not a user's)

    def reset(self) -> None:
        super().reset()
        self.frozen = bytearray()
        self.recent = []
        self.started = False

    def encode_user(self, turn: UserTurn) -> tuple[bytes, int]:
        return piece({"role": "user", "content": _user_blocks(turn, self.vision)}, depth=2)

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
