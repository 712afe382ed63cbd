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

from collections.abc import Awaitable, Callable, Mapping, Sequence

from acp.helpers import plan_entry, text_block, tool_content, update_plan
from acp.interfaces import Client
from acp.schema import AgentPlanUpdate, PermissionOption, PlanEntryStatus, ToolCallUpdate

from owltui.modes.acp.questions import ClientQuestions, Spawn
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
        self.commands = commands
        self.questions = ClientQuestions(conn, session_id, spawn, sent)
        self.unsubscribe = broker.subscribe(self._on_broker)

    def _on_broker(self, action: str, pending: PendingPlan | None) -> None:
        if pending is None:
            return
        if action == "asked":
            self._ask(pending)
        elif action in ("withdrawn", "answered"):
            self.questions.withdraw(pending.call_id)

    def _ask(self, pending: PendingPlan) -> None:
        def answer(choice: str | None) -> None:
            if choice in (ACCEPT_EDITS, ACCEPT_ASK):
                self.commands.call("plan_answer", call_id=pending.call_id, decision="accept", mode=choice)
            else:  # keep planning, the client's "cancelled", or no answer
                self.commands.call("plan_answer", call_id=pending.call_id, decision="reject")

        question = plan_question(pending.call_id, pending.plan)
        self.questions.ask(pending.call_id, question, list(PLAN_OPTIONS), answer)

    def close(self) -> None:
        self.unsubscribe()
        self.questions.close()
