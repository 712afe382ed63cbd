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
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

import anyio
from acp.interfaces import Client
from acp.schema import AllowedOutcome, PermissionOption, TextContentBlock, ToolCallUpdate

from owltui.modes.acp.tool_calls import tool_diff, tool_kind, tool_locations, tool_title
from owltui.session.approvals import ApprovalBroker, Pending
from owltui.session.commands.layer import Commands

RULES_FILE = ".owltui/permissions.toml"
ALLOW, ALWAYS, REJECT = "allow", "always", "deny"
Spawn = Callable[[Callable[[], Coroutine[Any, Any, Any]]], None]


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
        self.conn = conn
        self.sent = sent  # waits until the updates before the question are out (the call's tool_call)
        self.session_id = session_id
        self.commands = commands
        self.broker = broker
        self.spawn = spawn
        self.asking: dict[str, anyio.CancelScope] = {}
        self.unsubscribe = broker.subscribe(self._on_broker)

    def _on_broker(self, action: str, pending: Pending) -> None:
        if action == "asked":
            self.spawn(lambda: self._ask(pending))
        elif action == "withdrawn":
            scope = self.asking.pop(pending.call_id, None)
            if scope is not None:
                scope.cancel()

    async def _ask(self, pending: Pending) -> None:
        workspace = self.commands.ctx.host.workspace
        call = question(pending, pending.call_id, pending.name, pending.arguments, workspace)
        options = options_for(pending, pending.name, pending.arguments)
        decision = REJECT
        with anyio.CancelScope() as scope:
            self.asking[pending.call_id] = scope
            try:
                if self.sent is not None:
                    await self.sent()
                answer = await self.conn.request_permission(
                    session_id=self.session_id, tool_call=call, options=options
                )
            except Exception:  # the client failed to answer: refuse the call
                answer = None
            outcome = answer.outcome if answer is not None else None
            if isinstance(outcome, AllowedOutcome) and outcome.option_id in (ALLOW, ALWAYS, REJECT):
                decision = outcome.option_id
        self.asking.pop(pending.call_id, None)
        if scope.cancelled_caught:
            return  # withdrawn: the loop refuses the call
        self.commands.call("approve", call_id=pending.call_id, decision=decision)

    def close(self) -> None:
        self.unsubscribe()
        for scope in self.asking.values():
            scope.cancel()
        self.asking.clear()
