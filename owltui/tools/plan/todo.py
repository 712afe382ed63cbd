"""The ``todo`` tool: the model sends its whole checklist each call; the session keeps the latest.

Read-only (it changes nothing on disk, so it never asks) and always offered, so the tool list stays
the same every round. The list goes to the session's ``TodoBoard`` (``ctx.services.todo``), which
emits the ``todo`` event front ends draw; it is saved as the call itself in the session's history
(``owltui.agent.todo``).
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import ConfigDict

from owltui.agent.events import TodoItem, TodoStatus
from owltui.agent.todo import TODO_TOOL, list_error
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.tools.base import Params

STATUSES = get_args(TodoStatus)


def _compact(schema: dict[str, Any]) -> None:
    """The schema the model reads, inline and without titles: every built-in tool shares the first
    request's 16 KB."""
    schema.clear()
    schema.update(
        type="object",
        properties={
            "items": {
                "type": "array",
                "description": "The whole list, in order.",
                "items": {
                    "type": "object",
                    "properties": {"content": {"type": "string"}, "status": {"enum": list(STATUSES)}},
                    "required": ["content", "status"],
                },
            }
        },
        required=["items"],
        additionalProperties=False,
    )


class TodoParams(Params):
    model_config = ConfigDict(json_schema_extra=_compact)
    items: list[TodoItem]


class TodoTool:
    name = TODO_TOOL
    description = (
        "A checklist the user sees, for work of several steps. Send the whole list each call; one "
        "item in_progress at a time; items marked done are never redone."
    )
    params = TodoParams
    read_only = True

    async def run(self, args: TodoParams, ctx: ToolContext) -> ToolOutput:
        error = list_error(args.items)
        if error is not None:
            raise ToolError(f"{error} The list was not saved.")
        if ctx.services.todo is not None:
            ctx.services.todo.set(args.items)
        done = sum(1 for item in args.items if item.status == "done")
        return ToolOutput(f"Todo list saved ({done}/{len(args.items)} done).")
