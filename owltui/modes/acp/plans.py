"""Plan mode and the todo list in ACP.

The todo list (a ``todo`` event, or a loaded session's saved list) is ACP's ``plan`` update: each
item an entry of priority ``medium``, status ``pending``, ``in_progress`` or ``completed`` (done).

A plan the model presents (``exit_plan`` in plan mode: the broker's ``asked``) is a
``session/request_permission`` on the ``exit_plan`` call, titled "Plan: ready to carry out?", the
plan as its Markdown text, offering: accept into ``edits``, accept into ``ask``, keep planning. The
pick is answered through the command layer's ``plan_answer`` (keep planning, or a client's
``cancelled`` outcome, is ``reject``). A plan withdrawn (``session/cancel``, an abort) or answered
another way (a prompt sent while it waits is its ``refine``: ``AcpSession.prompt``) abandons the
question.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any

import anyio
from acp.helpers import plan_entry, text_block, tool_content, update_plan
from acp.interfaces import Client
from acp.schema import AgentPlanUpdate, AllowedOutcome, PermissionOption, PlanEntryStatus, ToolCallUpdate

from owltui.session.commands.layer import Commands
from owltui.session.plans import PendingPlan, PlanBroker
from owltui.text.sanitize import sanitize

PLAN_TITLE = "Plan: ready to carry out?"
ACCEPT_EDITS, ACCEPT_ASK, KEEP_PLANNING = "edits", "ask", "keep_planning"
PLAN_OPTIONS = [
    PermissionOption(option_id=ACCEPT_EDITS, name="Yes, and allow edits", kind="allow_once"),
    PermissionOption(option_id=ACCEPT_ASK, name="Yes, ask before each change", kind="allow_once"),
    PermissionOption(option_id=KEEP_PLANNING, name="No, keep planning", kind="reject_once"),
]
STATUSES: dict[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
}
Spawn = Callable[[Callable[[], Coroutine[Any, Any, Any]]], None]


def todo_update(items: Sequence[object]) -> AgentPlanUpdate:
    """A todo list (the ``todo`` event's ``items``: ``{content, status}`` each) as one ``plan`` update."""
    entries = []
    for item in items:
        content = item.get("content") if isinstance(item, Mapping) else None
        status = item.get("status") if isinstance(item, Mapping) else None
        if isinstance(content, str):
            entries.append(plan_entry(content, status=STATUSES.get(str(status), "pending")))
    return update_plan(entries)


def plan_question(call_id: str, plan: str) -> ToolCallUpdate:
    """The ``exit_plan`` call as the plan's permission request shows it (the plan sanitised, as the
    live updates are)."""
    return ToolCallUpdate(
        tool_call_id=call_id,
        title=PLAN_TITLE,
        kind="switch_mode",
        status="pending",
        content=[tool_content(text_block(sanitize(plan)))],
    )


class PlanQuestions:
    """One session's plan questions: asks the client, answers the broker, abandons withdrawn ones."""

    def __init__(
        self,
        conn: Client,
        session_id: str,
        commands: Commands,
        broker: PlanBroker,
        spawn: Spawn,
        sent: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.commands = commands
        self.spawn = spawn
        self.sent = sent  # waits until the updates before the question are out (the call's tool_call)
        self.asking: dict[str, anyio.CancelScope] = {}
        self.unsubscribe = broker.subscribe(self._on_broker)

    def _on_broker(self, action: str, pending: PendingPlan | None) -> None:
        if pending is None:
            return
        if action == "asked":
            self.spawn(lambda: self._ask(pending))
        elif action in ("withdrawn", "answered"):
            scope = self.asking.pop(pending.call_id, None)
            if scope is not None:
                scope.cancel()

    async def _ask(self, pending: PendingPlan) -> None:
        choice = KEEP_PLANNING
        with anyio.CancelScope() as scope:
            self.asking[pending.call_id] = scope
            try:
                if self.sent is not None:
                    await self.sent()
                answer = await self.conn.request_permission(
                    session_id=self.session_id,
                    tool_call=plan_question(pending.call_id, pending.plan),
                    options=list(PLAN_OPTIONS),
                )
            except Exception:  # the client failed to answer: keep planning
                answer = None
            outcome = answer.outcome if answer is not None else None
            if isinstance(outcome, AllowedOutcome) and outcome.option_id in (ACCEPT_EDITS, ACCEPT_ASK):
                choice = outcome.option_id
        self.asking.pop(pending.call_id, None)
        if scope.cancelled_caught:
            return  # withdrawn or answered another way
        if choice == KEEP_PLANNING:
            self.commands.call("plan_answer", call_id=pending.call_id, decision="reject")
        else:
            self.commands.call("plan_answer", call_id=pending.call_id, decision="accept", mode=choice)

    def close(self) -> None:
        self.unsubscribe()
        for scope in self.asking.values():
            scope.cancel()
        self.asking.clear()
