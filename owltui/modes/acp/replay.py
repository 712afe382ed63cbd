"""A saved branch as the updates ``session/load`` sends before it answers: what the TUI redraws for a
resumed session (``owltui.ui.control.replay``), as ACP updates.

- The user's messages (prompt, steering, follow-ups, asides) -> ``user_message_chunk``, as typed
  (the attached files' contents are left out); reminders and the loop's notices are not the user's.
- An answer -> ``agent_thought_chunk`` (its thinking) and ``agent_message_chunk`` (its text, or the
  error it ended with).
- Each tool call -> ``tool_call`` where the model made it (title, kind, ``rawInput``, locations; a
  ``write`` or ``edit`` with the diff of the call itself: the file has changed since, so the diff is
  the call's own texts, a write's old text unknown), then ``tool_call_update`` with its final status
  and output where its result came (refused, skipped and cancelled are failed, saying which).
- A ``!command`` the user ran -> a completed ``bash`` call with its output.
- The todo list the branch last saved (``saved_list``) -> one ``plan`` update, at the end.

Text is sanitised as the live updates are (the history keeps the raw bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp.helpers import (
    ToolCallContentVariant,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import FileEditToolCallContent

from owltui.agent.messages import AssistantMessage, ToolResult, UserMessage
from owltui.agent.todo import saved_list
from owltui.files.paths import PathError, resolve_path
from owltui.modes.acp.plans import todo_update
from owltui.modes.acp.tool_calls import FAILED_STATUS, tool_kind, tool_locations, tool_title
from owltui.modes.acp.updates import SessionUpdate
from owltui.session.input.mentions import split_attachments
from owltui.session.input.shell import context_message
from owltui.text.sanitize import sanitize

SHELL_CONTEXT = context_message("\0", "").split("\0", 1)[0]  # how a `!command` reaches the model
USER_LANES = frozenset({"user", "steer", "follow_up", "aside"})


def _saved_diff(name: str, arguments: dict[str, Any], workspace: Path) -> list[FileEditToolCallContent]:
    raw = arguments.get("path")
    if name not in ("write", "edit") or not isinstance(raw, str):
        return []
    try:
        path = str(resolve_path(workspace, raw))
    except PathError:
        return []
    if name == "write" and isinstance(arguments.get("content"), str):
        return [FileEditToolCallContent(type="diff", path=path, new_text=arguments["content"])]
    old, new = arguments.get("old_text"), arguments.get("new_text")
    if name == "edit" and isinstance(old, str) and isinstance(new, str):
        return [FileEditToolCallContent(type="diff", path=path, old_text=old, new_text=new)]
    return []


def _text(text: str) -> ToolCallContentVariant:
    return tool_content(text_block(sanitize(text)))


def replay_updates(items: Sequence[Any], workspace: Path) -> list[SessionUpdate]:
    """A saved branch (the session store's items, as a resumed runtime's history holds them) as the
    updates session/load sends: user, agent and thought chunks, tool calls with final status/diffs."""
    out: list[SessionUpdate] = []
    announced: dict[str, bool] = {}  # call id -> a diff was shown (its result keeps it)
    for i, item in enumerate(items):
        if isinstance(item, UserMessage) and item.text.startswith(SHELL_CONTEXT):
            command, _, output = item.text[len(SHELL_CONTEXT) :].partition("\n")
            out.append(
                start_tool_call(
                    f"shell-replay-{i}",
                    tool_title("bash", {"command": command}),
                    kind="execute",
                    status="completed",
                    content=[_text(output)],
                    raw_input={"command": command},
                )
            )
        elif isinstance(item, UserMessage):
            typed, _attached = split_attachments(item.text)
            if item.lane in USER_LANES and typed.strip():
                out.append(update_user_message_text(sanitize(typed)))
        elif isinstance(item, AssistantMessage):
            if item.thinking_text.strip():
                out.append(update_agent_thought_text(sanitize(item.thinking_text)))
            if item.text.strip() or item.error:
                out.append(update_agent_message_text(sanitize(item.text or f"({item.error})")))
            for call in item.tool_calls:
                diff = _saved_diff(call.name, call.arguments, workspace)
                announced[call.id] = bool(diff)
                out.append(
                    start_tool_call(
                        call.id,
                        tool_title(call.name, call.arguments),
                        kind=tool_kind(call.name),
                        status="pending",
                        content=list(diff) or None,
                        locations=tool_locations(call.name, call.arguments, workspace) or None,
                        raw_input=call.arguments,
                    )
                )
        elif isinstance(item, ToolResult):
            failed = item.status != "ok" or item.is_error
            status = FAILED_STATUS.get(item.status)
            line = f"{status}: {item.content}" if status is not None else item.content
            if item.call_id not in announced:  # a result without its call (a cut history)
                out.append(
                    start_tool_call(item.call_id, tool_title(item.name, {}), kind=tool_kind(item.name))
                )
            keep = announced.get(item.call_id, False) and not failed
            out.append(
                update_tool_call(
                    item.call_id,
                    status="failed" if failed else "completed",
                    content=None if keep else [_text(line)],
                )
            )
    todo = saved_list(items)
    if todo:
        out.append(todo_update([{"content": sanitize(t.content), "status": t.status} for t in todo]))
    return out
