"""One hook's answer, from its exit code and output, in Claude Code's terms.

Exit 0: success; stdout may be JSON (below) or, for ``UserPromptSubmit`` and ``SessionStart``, plain
text added as context. Exit 2: a block; stderr is the reason (told to the model where the event has
one, else to the user). Any other exit, a timeout or a start failure: a non-blocking error shown to
the user. JSON output: ``continue``/``stopReason``, ``systemMessage``, ``decision: "block"`` with
``reason``, the older ``decision: "approve"``, and ``hookSpecificOutput`` with
``permissionDecision`` (``allow``/``deny``/``ask``), ``permissionDecisionReason``, ``updatedInput``
and ``additionalContext``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from owltui.features.hooks.runner import Finished

Decision = Literal["block", "deny", "ask", "allow"]
CONTEXT_FROM_STDOUT = ("UserPromptSubmit", "SessionStart")


@dataclass
class Outcome:
    decision: Decision | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str = ""
    stop: bool = False  # ``continue: false``
    stop_reason: str = ""
    message: str = ""  # ``systemMessage``: shown to the user
    error: str | None = None  # a non-blocking failure, shown to the user


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _from_json(data: dict[str, Any], event: str) -> Outcome:
    out = Outcome()
    if data.get("continue") is False:
        out.stop = True
        out.stop_reason = _text(data.get("stopReason"))
    out.message = _text(data.get("systemMessage"))
    decision = data.get("decision")
    if decision == "block":
        out.decision = "block"
        out.reason = _text(data.get("reason"))
    elif decision == "approve":
        out.decision = "allow"
        out.reason = _text(data.get("reason"))
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict):
        perm = specific.get("permissionDecision")
        if event == "PreToolUse" and perm in ("allow", "deny", "ask"):
            out.decision = perm
            out.reason = _text(specific.get("permissionDecisionReason")) or out.reason
        updated = specific.get("updatedInput")
        if event == "PreToolUse" and isinstance(updated, dict):
            out.updated_input = updated
        out.context = _text(specific.get("additionalContext"))
    return out


def read_outcome(event: str, done: Finished) -> Outcome:
    if done.code is None:
        return Outcome(error=done.error or "did not finish")
    if done.code == 2:
        return Outcome(decision="deny" if event == "PreToolUse" else "block", reason=done.stderr.strip())
    if done.code != 0:
        why = done.stderr.strip().splitlines()[-1:] or [""]
        return Outcome(error=f"exit code {done.code}" + (f": {why[0]}" if why[0] else ""))
    text = done.stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return _from_json(data, event)
    if event in CONTEXT_FROM_STDOUT and text:
        return Outcome(context=text)
    return Outcome()
