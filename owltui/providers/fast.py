"""Cheap construction of the hot stream events (text and thinking deltas) without validation.

The parsers build one event per network event; pydantic's validation (and even ``model_construct``)
costs more than parsing the JSON. These build the same objects as ``TextDelta(text=...)`` directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from owltui.agent.model import TextDelta, ThinkingDelta

# the C scanner behind json.loads: no wrapper layers, no whitespace regexes
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def loads(data: str) -> Any:
    """``json.loads`` for one SSE data payload, faster on the usual compact object.

    Raises ``ValueError`` like ``json.loads`` (trailing garbage included).
    """
    try:
        value, end = _scan(data, 0)
    except StopIteration:
        return json.loads(data)  # leading whitespace, or not JSON: let json say why
    if end != len(data) and data[end:].strip():
        raise ValueError(f"extra data after the JSON value at char {end}")
    return value


_new = object.__new__
_set = object.__setattr__


def text_delta(text: str) -> TextDelta:
    """``TextDelta(text=text)`` without validation."""
    ev = _new(TextDelta)
    _set(ev, "__dict__", {"type": "text", "text": text})
    _set(ev, "__pydantic_fields_set__", {"text"})
    _set(ev, "__pydantic_extra__", None)
    _set(ev, "__pydantic_private__", None)
    return ev


def thinking_delta(text: str, block: int | None) -> ThinkingDelta:
    """``ThinkingDelta(text=text, block=block)`` without validation."""
    ev = _new(ThinkingDelta)
    _set(
        ev,
        "__dict__",
        {"type": "thinking", "text": text, "signature": None, "redacted": False, "block": block},
    )
    _set(ev, "__pydantic_fields_set__", {"text", "block"})
    _set(ev, "__pydantic_extra__", None)
    _set(ev, "__pydantic_private__", None)
    return ev
