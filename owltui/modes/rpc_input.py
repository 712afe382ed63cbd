"""Reading one RPC command line without ever failing: a dict, or the reason it was refused.

``parse_line`` refuses, with one short sentence for the response's ``error``:

- bytes that are not UTF-8 (or text holding raw surrogates, i.e. bytes decoded with
  ``surrogateescape``): the line cannot be decoded;
- nesting deeper than ``MAX_DEPTH`` (checked before parsing, so 4 KB of ``[[[[`` is refused in
  linear time, never a RecursionError);
- non-finite numbers: ``NaN``, ``Infinity``, ``-Infinity``, and numbers that overflow to infinity
  (``1e400``); integers longer than ``MAX_INT_DIGITS`` digits;
- anything that is not JSON, and JSON that is not an object.

Lone surrogates written as escapes inside strings (``"\\ud800"``) are replaced by U+FFFD, so the
text that enters the agent is valid Unicode. A leading byte order mark is ignored.
``request_id`` pulls the ``id`` out of a refused line where possible, so the refusal can still be
matched to its command.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64
MAX_INT_DIGITS = 400
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ID = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d{1,30}(?:\.\d{1,30})?(?:[eE][+-]?\d{1,3})?)\s*[,}]')


class Refused(ValueError):
    """A line that is not an acceptable command; the message is the reason."""


def _constant(name: str) -> Any:
    raise Refused(f"{name} is not a number JSON allows; send finite numbers only")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Refused(f"the number {text[:40]} is too large (it overflows to infinity)")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise Refused(f"an integer of {digits} digits is too long (at most {MAX_INT_DIGITS})")
    return int(text)


def depth(text: str, limit: int = MAX_DEPTH) -> int:
    """More than ``limit`` exactly when ``[``/``{`` nest deeper than ``limit`` outside strings (the
    count stops there; a line with at most ``limit`` brackets in all is not scanned and gives 0)."""
    if text.count("[") + text.count("{") <= limit:
        return 0
    level = deepest = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in ("[", "{"):
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    return deepest
        elif tok in ("]", "}"):
            level = max(0, level - 1)
    return deepest


def _fix_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_fix_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_fix_surrogates(k): _fix_surrogates(v) for k, v in value.items()}
    return value


def parse_line(line: str | bytes) -> dict[str, Any] | str:
    """The command object of one line, or a one-sentence reason it is refused. Never raises."""
    try:
        return _parse(line)
    except Refused as exc:
        return str(exc)
    except RecursionError:
        return f"the command is nested too deeply (at most {MAX_DEPTH} levels)"
    except (ValueError, TypeError) as exc:
        return f"invalid JSON: {exc}"
    except Exception as exc:  # nothing a client sends may end the process
        return f"the line cannot be read ({type(exc).__name__})"


def _parse(line: str | bytes) -> dict[str, Any]:
    if isinstance(line, bytes | bytearray):
        try:
            text = bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Refused(
                f"the line is not valid UTF-8 (byte 0x{line[exc.start]:02x} at offset "
                f"{exc.start}); send UTF-8 JSON"
            ) from None
    else:
        text = line
        bad = _SURROGATE.search(text)
        if bad is not None:
            raise Refused(
                f"the line is not valid UTF-8 (undecodable byte at offset {bad.start()}); send UTF-8 JSON"
            )
    text = text.removeprefix("\ufeff")
    if depth(text) > MAX_DEPTH:
        raise Refused(f"the command is nested too deeply (more than {MAX_DEPTH} levels)")
    value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    if not isinstance(value, dict):
        raise Refused('a command must be a JSON object, e.g. {"type": "get_state"}')
    if _SURROGATE_ESCAPE.search(text) is not None:
        fixed = _fix_surrogates(value)
        assert isinstance(fixed, dict)
        value = fixed
    return value


def request_id(line: str | bytes) -> str | int | float | None:
    """The ``id`` of a refused line when it can be read safely (a string or a finite number)."""
    try:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes | bytearray) else line
        m = _ID.search(text[:65536])
        if m is None:
            return None
        value = json.loads(m.group(1))
    except (ValueError, RecursionError):
        return None
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None
