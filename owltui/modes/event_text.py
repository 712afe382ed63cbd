"""Events as the JSON-lines front ends get them (print mode's ``--output jsonl``, RPC): with the text
the TUI draws, not the bytes a tool or a model produced.

Tool output (an MCP result, a file's bytes, a provider's error message) and model text can carry
escape sequences a terminal would act on: OSC 52 writes the clipboard, ``ESC[2J`` clears the
screen, OSC 0 retitles the window. The TUI and plain mode draw them through ``sanitize``; a
front end reading JSON lines gets the same: every string of an event goes through ``sanitize``
(newlines and tabs kept, carriage-return redraws reduced to their last frame) — the text, the
thinking, a tool's output and details, errors, reasons, names.

Left exactly as they are: ``arguments`` (a tool call's, in ``tool_start``, ``approval_request``,
``message_end``'s ``tool_calls``), because an approving front end must see the call as it will run
(it shows control characters as visible escapes, docs/rpc.md), and the ids a front end answers with
(``call_id``, ``job_id``, ``run_id``). The history, the session file and the saved large results
keep the raw bytes: only what is handed to a front end is cleaned.
"""

from __future__ import annotations

from typing import Any

from owltui.agent.events import Event
from owltui.text.sanitize import sanitize

EXACT_KEYS = frozenset({"arguments", "call_id", "job_id", "run_id", "id", "type"})


def clean_value(value: Any, key: str | None = None) -> Any:
    """``value`` with every string sanitised, keys of ``EXACT_KEYS`` (and what is below them) kept."""
    if key in EXACT_KEYS:
        return value
    if isinstance(value, str):
        return sanitize(value)
    if isinstance(value, dict):
        return {(sanitize(k) if isinstance(k, str) else k): clean_value(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(v) for v in value]
    return value


def wire_event(event: Event) -> dict[str, Any]:
    """``event.wire()`` with the text a JSON-lines front end may draw sanitised."""
    data: dict[str, Any] = clean_value(event.wire())
    return data
