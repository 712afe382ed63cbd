"""JSON text that cannot fail: the one encoder for JSONL/RPC output, session lines and request bodies.

``dumps`` turns any value into one line of JSON and never raises:

- lone surrogates (a non-UTF-8 file name decoded with ``surrogateescape``, a model that sent
  ``"\\ud800"``) become U+FFFD (``surrogates="replace"``, for everything that leaves the process:
  JSONL/RPC output and provider requests, whose readers may reject them) or the JSON escape
  ``\\udcff`` (``"escape"``, lossless, for the session file that only OwlTUI reads back);
- U+2028, U+2029 and U+0085 inside strings are written as ``\\u2028``, ``\\u2029``, ``\\u0085``, so a
  line survives any line splitter (``str.splitlines`` included); the other characters
  ``splitlines`` breaks on are control characters, which JSON escapes anyway;
- NaN and ±Infinity become ``null``; integers too long to print become a string saying so;
- values JSON does not know (bytes, sets, paths, pydantic models, anything else) are converted
  (bytes decoded with replacement, models dumped, the rest ``str()``-ed); dict keys become strings;
- cycles and nesting deeper than ``MAX_DEPTH`` are cut with a marker string.

The result is therefore always ``.encode("utf-8")``-able, parses with ``json.loads`` and holds no line
break. The fast path is one ``json.dumps`` (plus a scan only for non-ASCII text); the careful walk
runs only when that fails. It lives in ``providers`` because that is the lowest layer both the
session store and the providers may import; modes reach it through ``owltui.session.store.store``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

Surrogates = Literal["replace", "escape"]

MAX_DEPTH = 100
"""Containers nested deeper than this are replaced by a marker in the careful walk."""

_SPECIAL = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _fix_replace(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or "\ufffd"


def _fix_escape(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def dumps(obj: Any, *, surrogates: Surrogates = "replace", depth: int = 0) -> str:
    """One line of JSON for ``obj`` (compact separators, non-ASCII kept); never raises.

    ``depth``: how deep ``obj`` sits inside the value being written, when a caller writes a value
    piece by piece (the request bodies' wire cache): the careful walk then cuts nesting exactly
    where it would have cut it in the whole value, so the pieces join to the same bytes."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError, OverflowError):
        text = _careful(obj, depth)
    if not text.isascii() and _SPECIAL.search(text) is not None:
        text = _SPECIAL.sub(_fix_replace if surrogates == "replace" else _fix_escape, text)
    return text


def encode(obj: Any, *, surrogates: Surrogates = "replace", depth: int = 0) -> bytes:
    """``dumps`` as UTF-8 bytes, without the newline."""
    return dumps(obj, surrogates=surrogates, depth=depth).encode("utf-8")


CAREFUL = 1
"""``piece`` flag: the value needed the careful walk (``json.dumps`` refused it)."""
DEEP = 2
"""``piece`` flag: the value nests deeper than the careful walk would keep at its depth."""


def piece(obj: Any, *, depth: int) -> tuple[bytes, int]:
    """``encode(obj, depth=depth)`` for a piece of a larger value, with flags (``CAREFUL``, ``DEEP``).

    Encoding a value whole takes the careful walk for all of it when any part needs it, and that
    walk also cuts nesting deeper than ``MAX_DEPTH``; pieces encoded one by one are the same bytes
    except when one piece is ``CAREFUL`` and another ``DEEP`` (the caller then encodes it whole)."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError, OverflowError):
        text, flags = _careful(obj, depth), CAREFUL
    else:
        room = MAX_DEPTH - depth
        # nesting needs brackets: counting them is cheap, the walk runs only when there are many
        deep = text.count("[") + text.count("{") >= room and _deeper(obj, room)
        flags = DEEP if deep else 0
    if not text.isascii() and _SPECIAL.search(text) is not None:
        text = _SPECIAL.sub(_fix_replace, text)
    return text.encode("utf-8"), flags


def _deeper(obj: Any, room: int) -> bool:
    """Whether ``clean(obj, MAX_DEPTH - room)`` would cut a container: one nested ``room`` deep."""
    if isinstance(obj, dict | list | tuple):
        if room <= 0:
            return True
        values = obj.values() if isinstance(obj, dict) else obj
        return any(_deeper(v, room - 1) for v in values)
    return False


def loose(obj: Any, *, ensure_ascii: bool = False) -> str:
    """``json.dumps(obj)`` with its default separators (the shape tool arguments are sent in) that
    never fails: NaN becomes null, unknown values are converted, cycles and depth are cut. Lone
    surrogates stay as they are (the request's ``encode`` replaces them)."""
    try:
        return json.dumps(obj, ensure_ascii=ensure_ascii, allow_nan=False)
    except (ValueError, TypeError, RecursionError, OverflowError):
        try:
            return json.dumps(clean(obj), ensure_ascii=ensure_ascii, allow_nan=False)
        except Exception:
            return "{}"


def _careful(obj: Any, depth: int = 0) -> str:
    try:
        return json.dumps(clean(obj, depth), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except Exception as exc:  # a bug in clean(): still one valid line
        return json.dumps({"type": "error", "error": f"unencodable value ({type(exc).__name__})"})


def clean(obj: Any, depth: int = 0, path: frozenset[int] = frozenset()) -> Any:
    """A copy of ``obj`` made only of what ``json.dumps(allow_nan=False)`` accepts (see the module)."""
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, int):
        try:
            repr(obj)
        except ValueError:
            return f"(an integer of {obj.bit_length()} bits)"
        return int(obj)
    if isinstance(obj, float):
        return float(obj) if math.isfinite(obj) else None
    if depth >= MAX_DEPTH:
        return "(nested too deeply)"
    if isinstance(obj, dict | list | tuple | set | frozenset):
        if id(obj) in path:
            return "(circular reference)"
        inner = path | {id(obj)}
        if isinstance(obj, dict):
            out: dict[str, Any] = {}
            for key, value in obj.items():
                out[_key(key)] = clean(value, depth + 1, inner)
            return out
        return [clean(v, depth + 1, inner) for v in obj]
    if isinstance(obj, bytes | bytearray | memoryview):
        return bytes(obj).decode("utf-8", "replace")
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            return clean(dump(mode="json"), depth + 1, path)
        except Exception:
            pass
    try:
        return str(obj)
    except Exception:
        return f"({type(obj).__name__})"


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    value = clean(key, MAX_DEPTH - 1)
    return value if isinstance(value, str) else json.dumps(value)
