"""Hooks: async functions a feature plugs into fixed points of the loop, returning a ``Directive``.

Hooks never edit the history; they say what the loop should do and the loop applies it, keeping one
result attached to every call. Points: round start, before the model call, after the model's
response (before tools), after tool results, before yield (the stop boundary, once per stop), and
turn end (once, when the run's last turn is over; not after an abort, an error or ``end_with``).
Default hooks do nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult
from owltui.agent.state import RunState


@dataclass
class Directive:
    """What a hook asks for. Every field is optional; an empty directive changes nothing.

    - ``append``: items inserted at the next safe point (round start), never between a call and its result
    - ``calls``: a replacement list of calls to execute (``after_response`` only)
    - ``end_with``: end the run with this text as the final answer (no further model call)
    - ``tools_off``: from the next round on, tool choice is ``none`` (the tool list is still sent)
    - ``force_tool``: the next model call must call this tool
    """

    append: list[Item] = field(default_factory=list)
    calls: list[ToolCall] | None = None
    end_with: str | None = None
    tools_off: bool = False
    force_tool: str | None = None


Hook = Callable[[RunState], Awaitable[Directive | None]]
ResponseHook = Callable[[RunState, AssistantMessage], Awaitable[Directive | None]]
ResultsHook = Callable[[RunState, list[ToolResult]], Awaitable[Directive | None]]


async def _nothing(*_args: object) -> Directive | None:
    return None


@dataclass
class Hooks:
    round_start: Hook = _nothing
    before_model: Hook = _nothing
    after_response: ResponseHook = _nothing
    after_tools: ResultsHook = _nothing
    before_yield: Hook = _nothing
    turn_end: Hook = _nothing


# Pre-execution checks a feature turns on (run after the cap and delegation expansion).
Refusal = Callable[[RunState, ToolCall], Awaitable[str | None]]
Expansion = Callable[[ToolCall], ToolCall]
Permission = Callable[[ToolCall, bool], Awaitable[str | None]]  # (call, read_only) -> refusal or None


def refuse_repeats() -> Refusal:
    """Refuse a call whose tool and arguments repeat an earlier call of this run."""

    async def check(state: RunState, call: ToolCall) -> str | None:
        key = state.call_key(call)
        if state.seen_calls.get(key, 0) > 1:
            return (
                f"Refused: `{call.name}` was already called with exactly these arguments in this "
                "run; use the earlier result or change the arguments."
            )
        return None

    return check


def approval_cap(limit: int, needs_approval: Callable[[str], bool]) -> Refusal:
    """Refuse approval-requiring calls beyond ``limit`` in one run."""

    async def check(state: RunState, call: ToolCall) -> str | None:
        if not needs_approval(call.name):
            return None
        state.counters["approvals"] = state.counters.get("approvals", 0) + 1
        if state.counters["approvals"] > limit:
            return f"Refused: this run may make at most {limit} calls that need approval."
        return None

    return check
