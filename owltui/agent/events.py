"""Agent events (the wire contract of print mode and RPC) and the one emitter every front end subscribes to.

Events are pydantic models with a ``type`` field; ``event.model_dump(mode="json", exclude_none=True)``
is the wire form used by print mode's JSONL and RPC. Subscriber exceptions never reach the loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict

from owltui.agent.messages import Lane, StopReason, ToolStatus, Usage

log = logging.getLogger(__name__)

EndReason = Literal["done", "aborted", "error", "round_limit", "failure_limit"]


class Event(BaseModel):
    # schemas are built on first use: a run touches few event types, and start-up time matters
    model_config = ConfigDict(defer_build=True)
    type: str
    agent: str | None = None  # which agent (None = main); subagents carry their name

    def wire(self) -> dict[str, Any]:
        """The event as JSON-ready data. Text that is not valid Unicode (a lone surrogate from a
        model or a file name) cannot go through pydantic's JSON mode: it is handed on as it is and
        the output encoder (``providers/wirejson.py``) makes it total."""
        try:
            return self.model_dump(mode="json", exclude_none=True)
        except UnicodeEncodeError:
            return self.model_dump(exclude_none=True)


# There is no unvalidated shortcut for the loop's own events: measured with pydantic 2.14 (CPython
# 3.11, ns per event, best of 5 x 200k), plain validation ``ToolEnd(**fields)`` 1,330 beats
# ``model_construct`` 3,570 and writing ``__dict__``/``__pydantic_fields_set__`` by hand 1,930
# (MessageEnd: 1,640 / 4,360 / 2,130). So events are built the public way; see ``Emit``.


class AgentStart(Event):
    type: Literal["agent_start"] = "agent_start"
    run_id: str


class TurnStart(Event):
    """A round begins (one model request and its tool calls: the wire name keeps an older word)."""

    type: Literal["turn_start"] = "turn_start"
    round: int


class TurnEnd(Event):
    """A round ends (one model request and its tool calls: the wire name keeps an older word)."""

    type: Literal["turn_end"] = "turn_end"
    round: int


class InputEvent(Event):
    type: Literal["input"] = "input"
    lane: Lane
    text: str


class MessageStart(Event):
    type: Literal["message_start"] = "message_start"
    role: str = "assistant"


class MessageDelta(Event):
    type: Literal["message_delta"] = "message_delta"
    text: str | None = None
    thinking: str | None = None


class WireToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any]


class MessageEnd(Event):
    type: Literal["message_end"] = "message_end"
    role: str = "assistant"
    text: str
    thinking: str
    tool_calls: list[WireToolCall]
    stop_reason: StopReason
    usage: Usage
    error: str | None = None


class ToolStart(Event):
    type: Literal["tool_start"] = "tool_start"
    call_id: str
    name: str
    arguments: dict[str, Any]


class ToolUpdate(Event):
    """Streamed output of a running tool (not in the contract's list; front ends may ignore it)."""

    type: Literal["tool_update"] = "tool_update"
    call_id: str
    name: str
    text: str


class ToolEnd(Event):
    """``details``: the tool's structured output (``ToolOutput.details``), omitted when empty."""

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    name: str
    is_error: bool
    output: str
    status: ToolStatus
    details: dict[str, Any] | None = None


class Paused(Event):
    type: Literal["paused"] = "paused"


class Resumed(Event):
    type: Literal["resumed"] = "resumed"
    paused_ms: int


class RequirementEvent(Event):
    type: Literal["requirement"] = "requirement"
    tool: str
    escalation: int


class ApprovalRequest(Event):
    type: Literal["approval_request"] = "approval_request"
    call_id: str
    name: str
    arguments: dict[str, Any]


class PlanProposed(Event):
    """The model presented a plan (``exit_plan`` in plan mode); answered by ``plan_answer``."""

    type: Literal["plan_proposed"] = "plan_proposed"
    call_id: str
    plan: str


class ModeChanged(Event):
    """The permission mode changed (``/mode``, ``/plan``, the mode key, an accepted plan)."""

    type: Literal["permission_mode"] = "permission_mode"
    mode: str
    previous: str


class JobStarted(Event):
    type: Literal["job_started"] = "job_started"
    job_id: str
    command: str


class JobFinished(Event):
    type: Literal["job_finished"] = "job_finished"
    job_id: str
    command: str
    exit_code: int | None


class Retry(Event):
    type: Literal["retry"] = "retry"
    attempt: int
    delay_s: float
    reason: str


CompactionReason = Literal["auto", "manual"]


class CompactionStart(Event):
    """The history is about to be summarised (automatically: the estimate passed the threshold of
    the context window; with ``compaction_confirm`` the pause gate closes right after this event).
    Not in the contract's list; front ends may show it as the step in progress."""

    type: Literal["compaction_start"] = "compaction_start"
    reason: CompactionReason
    tokens_before: int | None = None


class Compaction(Event):
    """The history was summarised: token estimates before and after."""

    type: Literal["compaction"] = "compaction"
    reason: CompactionReason
    tokens_before: int | None = None
    tokens_after: int | None = None


class CompactionFailed(Event):
    """A compaction failed (not in the contract's list). ``failures``: in a row; ``stopped``: that
    was the last automatic attempt of this session (a notice tells the model and the user)."""

    type: Literal["compaction_failed"] = "compaction_failed"
    reason: CompactionReason
    error: str
    failures: int = 1
    stopped: bool = False


class HookStart(Event):
    """A user hook (a command configured for one of Claude Code's hook events) starts."""

    type: Literal["hook_start"] = "hook_start"
    hook_event: str
    matcher: str | None = None
    command: str


class HookEnd(Event):
    """A user hook finished: its decision (``block``/``deny``/``ask``/``allow``), how long it took,
    what went wrong (a timeout, an exit code other than 0 and 2); ``matcher`` as in ``hook_start``."""

    type: Literal["hook_end"] = "hook_end"
    hook_event: str
    matcher: str | None = None
    decision: str | None = None
    duration_s: float
    error: str | None = None


TodoStatus = Literal["pending", "in_progress", "done"]
STATUS_ALIASES = {
    "completed": "done",
    "complete": "done",
    "in progress": "in_progress",
    "in-progress": "in_progress",
}


def _status(value: Any) -> Any:
    """Other agents' words for a status (``completed``: Claude Code's and Codex's) taken as ours."""
    return (
        STATUS_ALIASES.get(value.strip().lower(), value.strip().lower()) if isinstance(value, str) else value
    )


class TodoItem(BaseModel):
    """One step of the todo list: what it is, and ``pending``, ``in_progress`` or ``done``."""

    model_config = ConfigDict(defer_build=True, frozen=True)
    content: str
    status: Annotated[TodoStatus, BeforeValidator(_status)]


class TodoEvent(Event):
    """The todo list changed (the ``todo`` tool, or a resumed session's list): the whole list."""

    type: Literal["todo"] = "todo"
    items: list[TodoItem]


class AgentEnd(Event):
    type: Literal["agent_end"] = "agent_end"
    reason: EndReason
    error: str | None = None


Listener = Callable[[Event], None]


class Emit(Protocol):
    """Build one event of ``cls`` from ``fields`` (tagged with the emitting agent) and emit it: what
    the loop hands its pieces (ledger, batch, limits) instead of itself."""

    def __call__(self, cls: type[Event], /, **fields: Any) -> None: ...


class Emitter:
    """Synchronous fan-out. Listeners must be quick (queue work, don't do it).

    Listeners say whether they read ``message_delta`` events (``subscribe(fn, deltas=...)``, or an
    attribute ``fn.wants_deltas``; yes by default). ``wants_deltas`` is whether any listener does:
    when none does (print mode's text output, with the stats), the loop builds no delta events at
    all. ``message_delta`` is "zero or more" in the contract, and every ``message_end`` carries the
    whole text, so a listener that asked for deltas still gets every one of them.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._delta_listeners: list[Listener] = []

    @property
    def wants_deltas(self) -> bool:
        """Whether any listener reads ``message_delta`` events."""
        return bool(self._delta_listeners)

    def subscribe(self, fn: Listener, *, deltas: bool | None = None) -> Callable[[], None]:
        """Add a listener; ``deltas``: whether it reads ``message_delta`` (None: its
        ``wants_deltas`` attribute, else yes). Returns the function that removes it."""
        self._listeners.append(fn)
        wants = getattr(fn, "wants_deltas", True) if deltas is None else deltas
        if wants:
            self._delta_listeners.append(fn)

        def unsubscribe() -> None:
            if fn in self._listeners:
                self._listeners.remove(fn)
                if wants and fn in self._delta_listeners:
                    self._delta_listeners.remove(fn)

        return unsubscribe

    def emit(self, event: Event) -> None:
        for fn in tuple(self._listeners):
            try:
                fn(event)
            except Exception:  # a broken listener must never break the loop
                log.exception("event listener failed on %s", event.type)
