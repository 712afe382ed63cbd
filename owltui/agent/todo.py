"""The todo list of a session: the board the ``todo`` tool writes, and the list as the history holds it.

The model sends the whole list with every ``todo`` call; ``TodoBoard`` keeps the latest one and emits
a ``todo`` event when it changes (front ends draw it from that). The list is not stored apart from
the conversation: the last successful ``todo`` call of the current branch *is* the list, so a
resumed session (``-c``), a rewind and a compaction all see the same one (``saved_list``).
Compaction appends ``todo_block`` after its summary: the list word for word, so done steps are
never done again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from owltui.agent.events import TodoEvent, TodoItem
from owltui.agent.messages import AssistantMessage, Item, ToolResult

TODO_TOOL = "todo"
MARKS = {"pending": "☐", "in_progress": "▶", "done": "☑"}
BLOCK_HEADING = "Todo list (kept word for word; steps marked done are done - do not do them again):"


def list_error(items: Sequence[TodoItem]) -> str | None:
    """Why ``items`` is not a valid list (one sentence), else None."""
    for n, item in enumerate(items, 1):
        if not item.content.strip():
            return f"Item {n} has empty content: give every item a short description."
    doing = [n for n, item in enumerate(items, 1) if item.status == "in_progress"]
    if len(doing) > 1:
        return (
            f"Items {', '.join(map(str, doing))} are all in_progress: at most one item may be "
            "in_progress at a time."
        )
    return None


def parse_list(arguments: dict[str, Any]) -> list[TodoItem] | None:
    """The list a ``todo`` call's arguments hold, or None when they are not a valid one."""
    raw = arguments.get("items")
    if not isinstance(raw, list):
        return None
    try:
        items = [TodoItem.model_validate(entry) for entry in raw]
    except ValidationError:
        return None
    return None if list_error(items) else items


def saved_list(history: Sequence[Item]) -> list[TodoItem] | None:
    """The list of the last ``todo`` call in ``history`` that succeeded (None: there was none)."""
    calls: dict[str, dict[str, Any]] = {}
    found: list[TodoItem] | None = None
    for item in history:
        if isinstance(item, AssistantMessage):
            for call in item.tool_calls:
                if call.name == TODO_TOOL:
                    calls[call.id] = call.arguments
        elif isinstance(item, ToolResult) and item.name == TODO_TOOL and item.call_id in calls:
            if item.status == "ok" and not item.is_error:
                parsed = parse_list(calls[item.call_id])
                found = parsed if parsed is not None else found
    return found


def item_line(item: TodoItem) -> str:
    """One item as plain text: its mark, then its content."""
    return f"{MARKS[item.status]} {item.content}"


def todo_block(history: Sequence[Item]) -> str:
    """The current list as a fixed block of text (every item's exact content and status), or ""."""
    items = saved_list(history)
    if not items:
        return ""
    return "\n".join([BLOCK_HEADING, *(f"- [{item.status}] {item.content}" for item in items)])


class TodoBoard:
    """The session's current list. ``set`` replaces it (the ``todo`` tool) and emits a ``todo``
    event through ``emit`` every time (a front end that cleared its list for ``/new`` or a rewind
    must see a list equal to the old one again; plain mode skips a list it has just printed)."""

    def __init__(self, emit: Callable[[TodoEvent], None] | None = None) -> None:
        self._items: tuple[TodoItem, ...] = ()
        self._emit = emit

    @property
    def items(self) -> tuple[TodoItem, ...]:
        return self._items

    def set(self, items: Sequence[TodoItem]) -> None:
        """Replace the list and emit it."""
        self._items = tuple(items)
        if self._emit is not None:
            self._emit(TodoEvent(items=list(self._items)))

    def restore(self, history: Sequence[Item]) -> None:
        """Take the list the history last saved (a resumed session), without an event."""
        self._items = tuple(saved_list(history) or ())
