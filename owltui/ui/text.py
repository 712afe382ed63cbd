"""Text helpers: sanitizing model/tool text before it is drawn, and short argument summaries."""

from __future__ import annotations

import json
from typing import Any

from owltui.text.sanitize import sanitize
from owltui.ui.approval import visible

_HOLD = 256
_INTRODUCERS = ("\x1b", "\x9b", "\x90", "\x98", "\x9d", "\x9e", "\x9f")


def clean(text: str) -> str:
    """Strip CSI/OSC/DCS/C1 sequences and control characters (keeps newlines and tabs)."""
    return sanitize(text)


class StreamCleaner:
    """Sanitize a stream of fragments, holding back an escape sequence split across fragments."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, fragment: str) -> str:
        text = self._held + fragment
        self._held = ""
        cut = max(text.rfind(ch) for ch in _INTRODUCERS)
        if cut >= 0 and len(text) - cut <= _HOLD and sanitize(text[cut:]) == "":
            self._held = text[cut:]
            text = text[:cut]
        return sanitize(text)

    def close(self) -> str:
        held, self._held = self._held, ""
        return sanitize(held)


def summarize_args(name: str, args: dict[str, Any], width: int = 60) -> str:
    """A one-line summary of a tool call's arguments (the command, the path, the pattern…), cut to
    ``width``; control and invisible characters are shown as escapes."""
    items = args.get("items") if name == "todo" else None
    for key in ("command", "path", "pattern", "url", "prompt", "job_id", "result_id"):
        value = args.get(key)
        if isinstance(value, str) and value:
            text = value
            break
    else:
        text = json.dumps(args, ensure_ascii=False, default=str) if args else ""
    if isinstance(items, list):  # the todo list: how far it is (the panel shows the items)
        done = sum(1 for i in items if isinstance(i, dict) and i.get("status") in ("done", "completed"))
        text = f"{done}/{len(items)} done"
    # hidden characters as escapes, never dropped (``a\rb`` must not read as ``b``); the whole call
    # is on the approval, this is a title
    text = " ".join(visible(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"
