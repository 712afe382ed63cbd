"""The history's wire form, encoded once per item: a request is the cached prefix plus what is new.

The loop sends the whole history on every round, and the history only grows: each request is the
last one plus a few items. ``TurnStream`` is ``history.turns`` computed incrementally: it hands out
each turn once, when it can no longer change (a user turn closes when the next assistant message
arrives), and recomputes only the open tail (the newest user turn, with the synthetic results of
calls that have none yet) per request. The providers encode closed turns once and keep the bytes.
``history.turns`` stays the plain one-pass version on purpose: it is what the providers fall back to
when the cache fails, so a fault here never reaches the fallback (a test checks that).

The cache follows one sequence object (the history's ``model_view()``): a request whose
``messages`` is another object (a compaction made a new view, a session was resumed or rewound),
is shorter, or whose item where the last request ended is another object, starts over. The bytes
are the same as encoding the whole body at once (``wirejson.encode``): JSON's escapes and the
replacements of the total encoder are per character, and pieces are written with the depth they
sit at (see ``wirejson.dumps``); ``tests/providers/test_wire_cache.py`` compares both on long mixed
histories.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Any

from owltui.agent.messages import AssistantMessage, Item, ToolResult
from owltui.providers.history import MISSING_RESULT, Turn, UserTurn, lane_text
from owltui.text.wirejson import CAREFUL, DEEP, encode

MIXED = CAREFUL | DEEP
"""Flags of a body whose pieces do not join to the whole encoding (see ``wirejson.piece``)."""


def key(name: str) -> bytes:
    """``"name":`` as the encoder writes a key."""
    return encode(name) + b":"


def obj(pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    """A JSON object from pre-encoded ``(key, value)`` pairs, in order."""
    return b"{" + b",".join(k + v for k, v in pairs) + b"}"


def commas(pieces: list[bytes | bytearray]) -> list[bytes | bytearray]:
    """``pieces`` with a comma between each two, for the one join of the body (the history's bytes
    are copied once per request, not once per level)."""
    out: list[bytes | bytearray] = []
    for piece in pieces:
        if out:
            out.append(b",")
        out.append(piece)
    return out


class SameList:
    """Remembers a sequence by the identity of its elements (tools, blocks): cheap to check each
    round, never fooled by equal-looking copies."""

    __slots__ = ("flags", "items", "value")

    def __init__(self) -> None:
        self.items: tuple[Any, ...] | None = None
        self.value: bytes = b""
        self.flags = 0  # of ``wirejson.piece``

    def get(self, items: Sequence[Any]) -> bytes | None:
        held = self.items
        if held is not None and len(held) == len(items) and all(map(is_, held, items)):
            return self.value
        return None

    def put(self, items: Sequence[Any], value: tuple[bytes, int]) -> bytes:
        self.items = tuple(items)
        self.value, self.flags = value
        return self.value


class TurnStream:
    """``history.turns`` over an append-only sequence, one step per new item.

    ``advance(items)`` returns the turns closed since the last call, or ``None`` when ``items`` is
    not an extension of what was seen (the state is then reset, and the caller drops what it built
    and calls again). ``tail()`` is the open part as ``turns`` would end it.
    """

    __slots__ = ("current", "last", "n", "pending", "seq")

    def __init__(self) -> None:
        self.seq: Sequence[Item] | None = None
        self.n = 0
        self.last: Item | None = None
        self.current: UserTurn | None = None  # the open user turn
        self.pending: dict[str, str] = {}  # calls of the last assistant message without a result

    def reset(self) -> None:
        self.seq = None
        self.n = 0
        self.last = None
        self.current = None
        self.pending = {}

    def advance(self, items: Sequence[Item]) -> list[Turn] | None:
        n = self.n
        if items is not self.seq:
            if self.seq is not None:
                self.reset()
                return None
            self.seq = items
        elif len(items) < n or (n and items[n - 1] is not self.last):
            self.reset()
            return None
        size = len(items)
        if size == n:
            return []
        closed: list[Turn] = []
        pending = self.pending
        for i in range(n, size):
            item = items[i]
            if isinstance(item, AssistantMessage):
                if not item.text and not item.tool_calls:
                    continue
                if pending:
                    if self.current is None:
                        self.current = UserTurn()
                    self.current.results.extend(_missing(pending))
                if self.current is not None:
                    closed.append(self.current)
                    self.current = None
                closed.append(item)
                pending = self.pending = {c.id: c.name for c in item.tool_calls}
                continue
            turn = self.current
            if turn is None:
                turn = self.current = UserTurn()
            if isinstance(item, ToolResult):
                if pending.pop(item.call_id, None) is not None:
                    turn.results.append(item)
                else:
                    turn.texts.append(f"[result of an earlier {item.name} call]\n{item.content}")
                    turn.images.extend(item.images)
            else:
                turn.texts.append(lane_text(item))
                turn.images.extend(item.images)
        self.n = size
        self.last = items[size - 1]
        return closed

    def tail(self) -> UserTurn | None:
        """The open user turn as a request ends it (with synthetic results for calls still without
        one), or None when the history ends with an assistant message whose calls all have results."""
        turn = self.current
        if not self.pending:
            return turn
        if turn is None:
            return UserTurn(results=_missing(self.pending))
        return UserTurn(
            results=[*turn.results, *_missing(self.pending)], texts=turn.texts, images=turn.images
        )


def _missing(pending: dict[str, str]) -> list[ToolResult]:
    return [
        ToolResult(call_id=call_id, name=name, content=MISSING_RESULT, is_error=True, status="skipped")
        for call_id, name in pending.items()
    ]


class TurnWire:
    """What each provider's encoded history shares: the turn stream, the flags of the closed pieces,
    and the open user turn's bytes, reused while it has not grown. A provider gives ``encode_user``
    and builds its messages from ``closed_turns`` and ``open_tail``."""

    __slots__ = ("flags", "tail", "tail_key", "turns")

    def __init__(self) -> None:
        self.turns = TurnStream()
        self.flags = 0  # of every closed piece
        self.tail_key: tuple[UserTurn, int, int] | None = None
        self.tail: tuple[bytes, int] = (b"", 0)

    def reset(self) -> None:
        self.turns.reset()
        self.flags = 0
        self.tail_key = None
        self.tail = (b"", 0)

    def encode_user(self, turn: UserTurn) -> tuple[bytes, int]:
        raise NotImplementedError

    def user(self, turn: UserTurn) -> tuple[bytes, int]:
        """A user turn's bytes and flags (the open tail's, if it is that turn unchanged)."""
        key = self.tail_key
        if key is not None and key[0] is turn and key[1] == len(turn.results) and key[2] == len(turn.texts):
            return self.tail
        return self.encode_user(turn)

    def closed_turns(self, items: Sequence[Item]) -> list[Turn]:
        """The turns closed since the last request (all of them again after a reset)."""
        closed = self.turns.advance(items)
        if closed is None:
            self.reset()
            closed = self.turns.advance(items)
            assert closed is not None
        return closed

    def open_tail(self) -> tuple[bytes, int] | None:
        """The open user turn's bytes and flags (kept for the next request), or None."""
        tail = self.turns.tail()
        if tail is None:
            return None
        self.tail = self.user(tail)
        self.tail_key = (tail, len(tail.results), len(tail.texts))
        return self.tail


class Slots:
    """A few encoded histories per model, one per sequence it is asked about (a subagent may share
    the model object with its parent); the least recently used is reused for a new one."""

    __slots__ = ("limit", "make", "states")

    def __init__(self, make: Any, limit: int = 3) -> None:
        self.make = make
        self.limit = limit
        self.states: list[Any] = []

    def get(self, items: Sequence[Item]) -> Any:
        states = self.states
        for i, state in enumerate(states):
            if state.turns.seq is items:
                if i:
                    states.insert(0, states.pop(i))
                return state
        state = states.pop() if len(states) >= self.limit else self.make()
        state.reset()
        states.insert(0, state)
        return state
