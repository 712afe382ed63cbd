"""Approvals as ``session/request_permission``: an ``approval_request`` event becomes a request to the
client, and the option it picks is answered through the command layer's ``approve``.

The options say what each answer does, as the TUI's approval does: "Allow once", "Always allow",
named with the rule it saves in ``.owltui/permissions.toml`` (offered only when the policy's review
has a rule to save), "Reject". A command the sandbox blocked, asked to run once more outside it, is
titled so and offered once / keep blocked only (it is never saved). A request the run withdraws
(``session/cancel``, an abort) abandons its question: the call is refused by the loop. The client's
"cancelled" outcome is a rejection. An answer given while the pause gate is closed takes effect when
it opens (the broker and the loop's parking spot see to that).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from acp.interfaces import Client
from acp.schema import PermissionOption, TextContentBlock, ToolCallUpdate

from owltui.modes.acp.questions import ClientQuestions, Spawn
from owltui.modes.acp.tool_calls import tool_diff, tool_kind, tool_locations, tool_title
from owltui.session.approvals import ApprovalBroker, Pending
from owltui.session.commands.layer import Commands

RULES_FILE = ".owltui/permissions.toml"
ALLOW, ALWAYS, REJECT = "allow", "always", "deny"


def options_for(pending: Pending | None, name: str, arguments: Mapping[str, Any]) -> list[PermissionOption]:
    """The answers offered for one request, each named for what it does."""
    if (pending is not None and pending.rerun) or (arguments.get("sandbox") == "off" and name == "bash"):
        return [
            PermissionOption(option_id=ALLOW, name="Run once without the sandbox", kind="allow_once"),
            PermissionOption(option_id=REJECT, name="Keep it blocked", kind="reject_once"),
        ]
    out = [PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once")]
    rules = [str(r) for r in getattr(pending.review, "rules", None) or []] if pending is not None else []
    if rules:
        listed = ", ".join(json.dumps(r, ensure_ascii=False) for r in rules)
        out.append(
            PermissionOption(
                option_id=ALWAYS,
                name=f"Always allow: save {name} = [{listed}] in {RULES_FILE}",
                kind="allow_always",
            )
        )
    out.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    return out


def question(
    pending: Pending | None, call_id: str, name: str, arguments: Mapping[str, Any], workspace: Path
) -> ToolCallUpdate:
    """The tool call as the permission request shows it."""
    rerun = pending.rerun if pending is not None else (name == "bash" and arguments.get("sandbox") == "off")
    content: list[Any] = list(tool_diff(name, arguments, workspace))
    why: list[str] = []
    if rerun:
        title = f"Run WITHOUT the sandbox: {arguments.get('command', '')}"
        blocked = arguments.get("reason")
        why.append(f"blocked by the sandbox: {blocked}" if isinstance(blocked, str) and blocked else "")
        why.append("it runs WITHOUT the sandbox: it may write anywhere you can")
    else:
        title = tool_title(name, arguments)
        notes = getattr(pending.review, "notes", None) if pending is not None else None
        why += [str(n) for n in notes or []]
        if pending is not None and pending.reason and not why:
            why.append(pending.reason)
    text = "\n".join(w for w in why if w)
    if text:
        from acp.schema import ContentToolCallContent

        content.append(
            ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))
        )
    return ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind="execute" if rerun else tool_kind(name),
        status="pending",
        raw_input=dict(arguments),
        locations=tool_locations(name, arguments, workspace) or None,
        content=content or None,
    )


class Permissions:
    """One session's approvals: asks the client, answers the broker, abandons withdrawn questions."""

    def __init__(
        self,
        conn: Client,
        session_id: str,
        commands: Commands,
        broker: ApprovalBroker,
        spawn: Spawn,
        sent: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.commands = commands
        self.questions = ClientQuestions(conn, session_id, spawn, sent)
        self.unsubscribe = broker.subscribe(self._on_broker)

    def _on_broker(self, action: str, pending: Pending) -> None:
        if action == "asked":
            self._ask(pending)
        elif action == "withdrawn":
            self.questions.withdraw(pending.call_id)

    def _ask(self, pending: Pending) -> None:
        workspace = self.commands.ctx.host.workspace
        call = question(pending, pending.call_id, pending.name, pending.arguments, workspace)

        def answer(choice: str | None) -> None:
            self.commands.call("approve", call_id=pending.call_id, decision=choice or REJECT)

        self.questions.ask(
            pending.call_id, call, options_for(pending, pending.name, pending.arguments), answer
        )

    def close(self) -> None:
        self.unsubscribe()
        self.questions.close()
