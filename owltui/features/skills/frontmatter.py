"""The YAML frontmatter of a Markdown file, read strictly: the subset ``SKILL.md`` files use.

Between a first line ``---`` and the next ``---``: ``key: value`` lines (plain, ``'single'`` or
``"double"`` quoted scalars; ``true``/``false``), ``key: >`` / ``key: |`` block scalars (folded or
literal, the indented lines below), ``key: [a, b]`` flow lists, ``key:`` followed by indented
``- item`` lines (a list) or ``sub: value`` lines (a map of strings), and ``#`` comments. Anything
else is a ``FrontmatterError`` naming the line, never a guess.
"""

from __future__ import annotations

import json
import re
from typing import Any

FENCE = "---"
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*):(?:\s+(.*))?$")


class FrontmatterError(ValueError):
    """The frontmatter is missing or not in the subset this reader accepts (one sentence)."""


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter's fields and the body after it."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != FENCE:
        raise FrontmatterError("no frontmatter (the file must start with a '---' line)")
    for end in range(1, len(lines)):
        if lines[end].rstrip() == FENCE:
            return parse_fields(lines[1:end]), "\n".join(lines[end + 1 :]).strip("\n")
    raise FrontmatterError("the frontmatter has no closing '---' line")


def _scalar(raw: str, where: int) -> Any:
    value = raw.strip()
    if value.startswith('"'):
        try:
            out = json.loads(value)
        except ValueError:
            raise FrontmatterError(f"line {where}: a double-quoted value that does not close") from None
        if not isinstance(out, str):
            raise FrontmatterError(f"line {where}: a double-quoted value that does not close")
        return out
    if value.startswith("'"):
        if len(value) < 2 or not value.endswith("'"):
            raise FrontmatterError(f"line {where}: a single-quoted value that does not close")
        return value[1:-1].replace("''", "'")
    if " #" in value:
        value = value.split(" #", 1)[0].rstrip()
    if value in ("true", "True", "false", "False"):
        return value.lower() == "true"
    if value.startswith(("{", "&", "*", "!", "%", "@", "`")):
        raise FrontmatterError(f"line {where}: {value[0]!r} starts a YAML form this reader does not take")
    return value


def _flow_list(raw: str, where: int) -> list[Any]:
    inner = raw.strip()[1:-1].strip()
    return [_scalar(part, where) for part in inner.split(",")] if inner else []


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def parse_fields(lines: list[str]) -> dict[str, Any]:
    """The top-level mapping of the frontmatter lines (numbered from 2, as in the file)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line, where = lines[i], i + 2
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" in line[: _indent(line) + 1] or _indent(line) > 0:
            raise FrontmatterError(f"line {where}: unexpected indentation")
        match = _KEY.match(line.rstrip())
        if match is None:
            raise FrontmatterError(f"line {where}: expected 'key: value'")
        key, raw = match.group(1), (match.group(2) or "").strip()
        if key in out:
            raise FrontmatterError(f"line {where}: {key!r} appears twice")
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        out[key] = _value(raw, block, where)
    return out


def _value(raw: str, block: list[str], where: int) -> Any:
    if raw in (">", "|", ">-", "|-", ">+", "|+"):
        depth = min((_indent(b) for b in block if b.strip()), default=0)
        texts = [b[depth:] for b in block]
        if raw.startswith("|"):
            return "\n".join(texts)
        return re.sub(r"(?<!\n)\n(?!\n)", " ", "\n".join(t.strip() for t in texts)).strip()
    if block and raw:
        # a plain scalar continued on indented lines (YAML folds them with spaces)
        return " ".join([str(_scalar(raw, where)), *(b.strip() for b in block if b.strip())])
    if raw.startswith("[") and raw.endswith("]"):
        return _flow_list(raw, where)
    if raw:
        return _scalar(raw, where)
    items = [b.strip() for b in block if b.strip() and not b.strip().startswith("#")]
    if not items:
        return None
    if all(item.startswith("- ") or item == "-" for item in items):
        return [_scalar(item[1:], where) for item in items]
    mapping: dict[str, Any] = {}
    for item in items:
        sub = _KEY.match(item)
        if sub is None:
            raise FrontmatterError(f"line {where}: a nested block this reader does not take")
        mapping[sub.group(1)] = _scalar(sub.group(2) or "", where)
    return mapping
