"""What an approval shows above itself, as plain lines: an edit's unified diff (old text -> new text),
an apply_patch's patch (``PATCH_LINES`` of it) and the start of a write's content, hidden characters
escaped as the approval escapes them. The TUI's tool block colours these lines; plain mode prints them
before the approval that asks."""

from __future__ import annotations

import difflib
from typing import Any

from owltui.ui.approval import visible

WRITE_HEAD_LINES = 12  # how much of a write's content is shown before it is approved
PATCH_LINES = 200  # how much of a patch is shown before it is approved


def shown(text: str) -> str:
    """File text as an approval shows it: newlines and tabs kept, other hidden characters escaped."""
    return visible(text, keep="\n\t")


def patch_lines(text: str) -> list[str]:
    """An ``apply_patch``'s patch between its Begin/End markers, at most ``PATCH_LINES`` lines."""
    lines = shown(text.strip()).split("\n")
    if lines and lines[0].strip() == "*** Begin Patch":
        lines = lines[1:]
    if lines and lines[-1].strip() == "*** End Patch":
        lines = lines[:-1]
    more = [f"... ({len(lines) - PATCH_LINES} more lines)"] if len(lines) > PATCH_LINES else []
    return lines[:PATCH_LINES] + more


def edit_diff_lines(args: dict[str, Any]) -> list[str] | None:
    """An ``edit``'s change as unified diff lines without the ---/+++ header (None without both
    texts); an ``apply_patch``'s patch (its ``input``) as it is."""
    patch = args.get("input")
    if isinstance(patch, str) and "old_text" not in args:
        return patch_lines(patch)
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
    if name in ("edit", "apply_patch"):
        return edit_diff_lines(args) or []
    content = args.get("content")
    if name == "write" and isinstance(content, str):
        return write_head_lines(content)
    return []
