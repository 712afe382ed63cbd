"""JSON decoding of one server-sent event's data, the providers' hottest call (one per network event).

``loads`` is ``json.loads`` with the wrapper layers left out: the usual payload is one compact
object, which the C scanner behind ``json.loads`` reads directly. Listed with OwlTUI's other
performance tricks, and what it buys, in ``owltui/_startup.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
