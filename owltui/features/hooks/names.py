"""Claude Code's tool names and input fields, both ways, for hooks read from a Claude settings file.

A hook written for Claude Code matches ``Bash`` and reads ``tool_input.command``; OwlTUI's ``bash``
takes the same ``command``. File tools take ``file_path`` (absolute) where OwlTUI takes ``path``,
``Edit`` takes ``old_string``/``new_string`` for ``old_text``/``new_text``. MCP tools are
``mcp__server__tool`` in both. A tool without a Claude Code counterpart keeps its own name and fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TO_CLAUDE = {"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "grep": "Grep", "find": "Glob"}
FROM_CLAUDE = {v: k for k, v in TO_CLAUDE.items()}
# OwlTUI argument -> Claude Code field, per OwlTUI tool
_FIELDS: dict[str, dict[str, str]] = {
    "read": {"path": "file_path"},
    "write": {"path": "file_path"},
    "edit": {"path": "file_path", "old_text": "old_string", "new_text": "new_string"},
    "grep": {"ignore_case": "-i"},
}


def claude_name(name: str) -> str:
    return TO_CLAUDE.get(name, name)


def claude_input(name: str, args: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """OwlTUI's arguments as Claude Code's ``tool_input`` (file paths absolute)."""
    fields = _FIELDS.get(name, {})
    out: dict[str, Any] = {}
    for key, value in args.items():
        new = fields.get(key, key)
        if new == "file_path" and isinstance(value, str):
            value = str((workspace / value).resolve()) if not Path(value).is_absolute() else value
        if name == "bash" and key == "timeout" and isinstance(value, int | float):
            value = int(value * 1000)  # Claude Code's Bash timeout is in milliseconds
        out[new] = value
    return out


def owltui_input(name: str, claude: dict[str, Any]) -> dict[str, Any]:
    """A Claude Code ``updatedInput`` back as OwlTUI's arguments for tool ``name`` (OwlTUI's name)."""
    back = {v: k for k, v in _FIELDS.get(name, {}).items()}
    out: dict[str, Any] = {}
    for key, value in claude.items():
        if name == "bash" and key == "timeout" and isinstance(value, int | float):
            value = value / 1000
        if name == "bash" and key == "description":
            continue  # Claude Code's label for the command; OwlTUI's bash has none
        out[back.get(key, key)] = value
    return out


def tool_response(name: str, args: dict[str, Any], content: str, ok: bool, claude: bool) -> Any:
    """What a PostToolUse hook gets as ``tool_response``: Claude Code's shape for its tools, else
    OwlTUI's result (``content``, ``is_error``)."""
    if not claude or name not in TO_CLAUDE:
        return {"content": content, "is_error": not ok}
    if name == "bash":
        return {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
    if name in ("write", "edit", "read"):
        path = args.get("file_path", args.get("path", ""))
        if name == "read":
            return {"type": "text", "file": {"filePath": path, "content": content}}
        return {"filePath": path, "success": ok, "output": content}
    return {"content": content, "is_error": not ok}
