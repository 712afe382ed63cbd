"""What an approval shows above itself, as plain lines: an edit's unified diff (old text -> new text)
and the start of a write's content, hidden characters escaped as the approval escapes them. The
TUI's tool block colours these lines; plain mode prints them before the approval that asks."""

from __future__ import annotations

import difflib
from typing import Any

from owltui.ui.approval import visible

WRITE_HEAD_LINES = 12  # how much of a write's content is shown before it is approved


def shown(text: str) -> str:
    """File text as an approval shows it: newlines and tabs kept, other hidden characters escaped."""
    return visible(text, keep="\n\t")


def edit_diff_lines(args: dict[str, Any]) -> list[str] | None:
    """An ``edit``'s change as unified diff lines without the ---/+++ header (None without both
    texts)."""
    old, new = args.get("old_text"), args.get("new_text")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    lines = difflib.unified_diff(shown(old).split("\n"), shown(new).split("\n"), lineterm="", n=2)
    return list(lines)[2:]


def write_head_lines(content: str) -> list[str]:
    """The first lines of a ``write``'s content."""
    return shown(content).split("\n")[:WRITE_HEAD_LINES]


def preview_lines(name: str, args: dict[str, Any]) -> list[str]:
    """What is shown above the approval of ``name(args)``: an edit's diff, a write's first lines,
    nothing for other tools."""
    if name == "edit":
        return edit_diff_lines(args) or []
    content = args.get("content")
    if name == "write" and isinstance(content, str):
        return write_head_lines(content)
    return []
