"""What an ACP client is told about one tool call: its title (a short line like the TUI's block
title), its kind (read, edit, execute, search, fetch, other), its locations (absolute paths, resolved
against the workspace) and, for ``write`` and ``edit``, the diff the editor shows for review.

Titles are drawn text: hidden characters become visible escapes and terminal escapes go, as in the
TUI. ``rawInput`` and the diff's texts stay exactly what the call will write: the editor reviews
the file's real content, and a diff is not drawn by a terminal.

A diff is the whole file before and after when that is cheap (a text file up to ``DIFF_FILE_BYTES``
that decodes as UTF-8): ``write`` has the file's current text as old (None for a new file);
``edit`` applies the replacement to the current text. Otherwise an edit's diff is its old and new
strings, and a write's old text is left out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.helpers import ToolCallContentVariant, start_tool_call, text_block, tool_content
from acp.schema import FileEditToolCallContent, ToolCallLocation, ToolCallStart, ToolCallStatus, ToolKind

from owltui.files.paths import PathError, resolve_path
from owltui.text.codec import visible
from owltui.text.sanitize import sanitize

DIFF_FILE_BYTES = 1024 * 1024  # larger files get the call's own texts as their diff
TITLE_WIDTH = 80

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "read",
    "read_result": "read",
    "write": "edit",
    "edit": "edit",
    "apply_patch": "edit",
    "bash": "execute",
    "job_output": "execute",
    "job_kill": "execute",
    "grep": "search",
    "find": "search",
    "fetch": "fetch",
    "exit_plan": "switch_mode",
}
SUMMARY_KEYS = ("command", "path", "pattern", "url", "prompt", "job_id", "result_id")
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
SEARCH_TOOLS = frozenset({"grep", "find", "ls"})
FAILED_STATUS = {"refused": "refused", "skipped": "skipped", "cancelled": "cancelled"}  # said in the result


@dataclass
class OpenCall:
    """What the update translator keeps of a call between its announcement and its end."""

    name: str
    arguments: dict[str, Any]
    announced: bool = False
    running: bool = False
    terminal: bool = False
    output: str = ""
    diff: list[FileEditToolCallContent] = field(default_factory=list)


def call_name(name: object) -> str:
    """An event's tool name (``tool`` when it has none)."""
    return name if isinstance(name, str) else "tool"


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of tool ``name`` (``other`` for tools it has no word for, MCP tools included)."""
    return KINDS.get(name, "other")


def tool_title(name: str, arguments: Mapping[str, Any]) -> str:
    """``read src/app.py``, ``bash ls -la``: the tool and its main argument on one short line."""
    for key in SUMMARY_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            text = value
            break
    else:
        text = ""
    summary = " ".join(visible(sanitize(text), False).split())
    if len(summary) > TITLE_WIDTH:
        summary = summary[: TITLE_WIDTH - 1] + "…"
    shown = visible(sanitize(name), False)
    return f"{shown} {summary}" if summary else shown


def _absolute(workspace: Path, path: object) -> Path | None:
    if not isinstance(path, str):
        return None
    try:
        return resolve_path(workspace, path)
    except PathError:
        return None


def tool_locations(name: str, arguments: Mapping[str, Any], workspace: Path) -> list[ToolCallLocation]:
    """The files or folders the call touches, as absolute paths (a read's first line too); a search
    without a path searches the workspace."""
    if name == "apply_patch":
        patch = arguments.get("patch", arguments.get("input"))
        found = PATCH_FILE.findall(patch) if isinstance(patch, str) else []
        paths = [p for p in (_absolute(workspace, f.strip()) for f in found) if p is not None]
        return [ToolCallLocation(path=str(p)) for p in dict.fromkeys(paths)]
    path = _absolute(workspace, arguments.get("path"))
    if path is None and name in SEARCH_TOOLS:
        path = workspace
    if path is None:
        return []
    offset = arguments.get("offset")
    line = offset if name == "read" and isinstance(offset, int) and offset >= 1 else None
    return [ToolCallLocation(path=str(path), line=line)]


def _current_text(path: Path) -> str | None:
    """The file's text when it is a small UTF-8 text file, else None."""
    try:
        if not path.is_file() or path.stat().st_size > DIFF_FILE_BYTES:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _replaced(text: str, old: str, new: str, replace_all: bool) -> str | None:
    if not old or old not in text:
        return None
    if replace_all:
        return text.replace(old, new)
    return text.replace(old, new, 1)


def tool_diff(name: str, arguments: Mapping[str, Any], workspace: Path) -> list[FileEditToolCallContent]:
    """The diff of a ``write`` or ``edit`` as it stands now (an empty list for other tools)."""
    path = _absolute(workspace, arguments.get("path"))
    if path is None or name not in ("write", "edit"):
        return []
    if name == "write":
        content = arguments.get("content")
        if not isinstance(content, str):
            return []
        old = _current_text(path) if os.path.lexists(path) else None
        return [FileEditToolCallContent(type="diff", path=str(path), old_text=old, new_text=content)]
    old_text, new_text = arguments.get("old_text"), arguments.get("new_text")
    if not isinstance(old_text, str) or not isinstance(new_text, str):
        return []
    before = _current_text(path)
    after = (
        _replaced(before, old_text, new_text, arguments.get("replace_all") is True)
        if before is not None
        else None
    )
    if before is not None and after is not None:
        return [FileEditToolCallContent(type="diff", path=str(path), old_text=before, new_text=after)]
    return [FileEditToolCallContent(type="diff", path=str(path), old_text=old_text, new_text=new_text)]


def text_content(text: str) -> ToolCallContentVariant:
    return tool_content(text_block(text))


def terminal_meta(key: str, call_id: str, **fields: Any) -> dict[str, Any]:
    """Zed's ``_meta`` terminal convention: ``terminal_info``, ``terminal_output``, ``terminal_exit``."""
    return {key: {"terminal_id": call_id, **fields}}


def announce(
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    workspace: Path,
    status: ToolCallStatus | None,
    content: Sequence[ToolCallContentVariant] = (),
) -> ToolCallStart:
    """The ``tool_call`` that introduces a call to the client."""
    return start_tool_call(
        call_id,
        tool_title(name, arguments),
        kind=tool_kind(name),
        status=status,
        content=list(content) or None,
        locations=tool_locations(name, arguments, workspace) or None,
        raw_input=arguments,
    )


def end_content(
    status: object, is_error: bool, output: str, diff: Sequence[FileEditToolCallContent]
) -> tuple[ToolCallStatus, list[ToolCallContentVariant] | None]:
    """A finished call's status and content (None: the content shown stays, an edit's diff): the
    output, after the diff; a refused, skipped or cancelled call says which."""
    failed = status != "ok" or is_error
    if isinstance(status, str) and status in FAILED_STATUS:
        line = f"{FAILED_STATUS[status]}: {output}" if output else FAILED_STATUS[status]
        return "failed", [*diff, text_content(line)]
    if diff and not failed:
        return "completed", None
    return ("failed" if failed else "completed"), [*diff, text_content(output)] if output else list(diff)
