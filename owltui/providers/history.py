"""History normalisation shared by the wire formats.

Groups the items into alternating assistant messages and user turns (tool results first, then texts),
drops empty assistant messages, gives every tool call exactly one result in the turn after it
(a synthetic error result when the history lacks one) and turns results without a matching call
into plain text, so whatever the loop recorded maps to a request the APIs accept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from owltui.agent.messages import AssistantMessage, ImageRef, Item, ToolResult, UserMessage

LANE_PREFIX = {
    "steer": "[steering]",
    "aside": "[aside]",
    "follow_up": "[follow-up]",
    "reminder": "[reminder]",
    "notice": "[notice]",
}
MISSING_RESULT = "No result: the call did not run."


@dataclass(slots=True)
class UserTurn:
    """Consecutive user-side items: tool results (answering the previous assistant) and texts, and
    the images of those texts (a tool result keeps its own)."""

    results: list[ToolResult] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)


Turn = AssistantMessage | UserTurn


def lane_text(msg: UserMessage) -> str:
    """The text the model sees for a user-side message; other lanes than ``user`` are labelled."""
    prefix = LANE_PREFIX.get(msg.lane)
    if prefix and not msg.text.startswith(prefix):
        return f"{prefix} {msg.text}"
    return msg.text


def _close(out: list[Turn], pending: dict[str, str]) -> None:
    if not pending:
        return
    if not isinstance(out[-1], UserTurn):
        out.append(UserTurn())
    turn = out[-1]
    assert isinstance(turn, UserTurn)
    for call_id, name in pending.items():
        turn.results.append(
            ToolResult(call_id=call_id, name=name, content=MISSING_RESULT, is_error=True, status="skipped")
        )
    pending.clear()


def turns(items: Sequence[Item]) -> list[Turn]:
    """Alternating turns; see the module docstring for the rules."""
    out: list[Turn] = []
    pending: dict[str, str] = {}
    for item in items:
        if isinstance(item, AssistantMessage):
            if not item.text and not item.tool_calls:
                continue
            _close(out, pending)
            out.append(item)
            pending = {c.id: c.name for c in item.tool_calls}
            continue
        if out and isinstance(out[-1], UserTurn):
            turn = out[-1]
        else:
            turn = UserTurn()
            out.append(turn)
        if isinstance(item, ToolResult):
            if pending.pop(item.call_id, None) is not None:
                turn.results.append(item)
            else:
                turn.texts.append(f"[result of an earlier {item.name} call]\n{item.content}")
                turn.images.extend(item.images)
        else:
            turn.texts.append(lane_text(item))
            turn.images.extend(item.images)
    _close(out, pending)
    return out
