"""Approval requests: the permission policy asks, a front end answers.

``ApprovalBroker.ask`` emits an ``approval_request`` event and waits for ``answer(call_id, decision)``
(the TUI's approval, plain mode's ``/allow``, RPC's ``approve``). A cancelled run withdraws its
pending requests.

Each request keeps what a front end needs to show it honestly: the policy's ``reason`` and, when a
``reviewer`` is attached (the permission policy's ``review``), the ``Review`` of the call at the
moment it asked — its ``notes`` (why it asks) and ``rules`` (exactly what "always" saves).

A re-run outside the sandbox (a ``bash`` request whose arguments carry ``sandbox: "off"``) is asked
from inside a running tool, past the loop's parking spot; so while the pause gate is closed the
broker holds its answer back until the gate opens (other requests are followed by the loop's own
park before the tool starts).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from owltui.agent.events import ApprovalRequest, Emitter
from owltui.agent.pause import GATE, PauseGate

log = logging.getLogger(__name__)

Decision = Literal["allow", "deny", "always"]
DECISIONS: tuple[Decision, ...] = ("allow", "deny", "always")
Reviewer = Callable[[Any], Any]


def is_rerun(name: str, arguments: dict[str, Any]) -> bool:
    """A request to run a command the sandbox blocked once more, outside it (``sandbox: "off"``)."""
    return name == "bash" and arguments.get("sandbox") == "off"


@dataclass
class Pending:
    call_id: str
    name: str
    arguments: dict[str, Any]
    event: anyio.Event = field(default_factory=anyio.Event)
    decision: Decision | None = None
    reason: str = ""
    review: Any = None  # the policy's Review (notes, rules, forced, protected) when known

    @property
    def rerun(self) -> bool:
        """A command the sandbox blocked, to be run once more outside it."""
        return is_rerun(self.name, self.arguments)

    def outcome(self, decision: str) -> tuple[str, Literal["info", "success", "warning"]]:
        """How an answer is reported to the user (empty text: nothing to say)."""
        name = self.name
        if self.rerun:
            if decision == "deny":
                return f"denied: `{name}` stays blocked by the sandbox", "warning"
            return f"allowed one run of `{name}` outside the sandbox (never saved as a rule)", "warning"
        if decision == "deny":
            return f"denied `{name}`", "warning"
        if decision == "allow":
            return "", "info"
        if self.review is None:
            return f"always allowed: `{name}` saved as a permission rule", "success"
        rules = list(getattr(self.review, "rules", None) or [])
        if not rules:
            return f"allowed `{name}` once: no rule can be saved for this call", "info"
        listed = ", ".join(f'"{r}"' for r in rules)
        return f"always allowed: saving {name} = [{listed}] as a permission rule", "success"


class ApprovalBroker:
    def __init__(
        self, emitter: Emitter, *, gate: PauseGate | None = None, reviewer: Reviewer | None = None
    ) -> None:
        self.emitter = emitter
        self.gate = gate if gate is not None else GATE
        self.reviewer = reviewer
        self._pending: dict[str, Pending] = {}
        self._listeners: list[Callable[[str, Pending], None]] = []

    def subscribe(self, fn: Callable[[str, Pending], None]) -> Callable[[], None]:
        """``fn(action, pending)`` with action ``asked`` | ``answered`` | ``withdrawn``."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, action: str, p: Pending) -> None:
        for fn in tuple(self._listeners):
            fn(action, p)

    def pending(self) -> list[Pending]:
        return list(self._pending.values())

    def get(self, call_id: str) -> Pending | None:
        """The request for ``call_id`` while it waits."""
        return self._pending.get(call_id)

    def _review(self, call: Any, p: Pending) -> Any:
        if self.reviewer is None or p.rerun:
            return None
        try:
            return self.reviewer(call)
        except Exception:  # showing less must never break asking
            log.exception("reviewing %s for its approval failed", p.name)
            return None

    async def ask(self, call: Any, reason: str = "", *_args: Any, **_kwargs: Any) -> Decision:
        """Ask about a tool call (anything with ``id``, ``name``, ``arguments``); wait for the answer.
        The policy calls this right after its own review, so the review kept here is the same."""
        p = Pending(
            call_id=call.id,
            name=call.name,
            arguments=dict(call.arguments),
            reason=reason if isinstance(reason, str) else "",
        )
        p.review = self._review(call, p)
        self._pending[p.call_id] = p
        self._notify("asked", p)
        self.emitter.emit(ApprovalRequest(call_id=p.call_id, name=p.name, arguments=p.arguments))
        try:
            await p.event.wait()
        finally:
            if self._pending.pop(p.call_id, None) is not None and p.decision is None:
                self._notify("withdrawn", p)
        assert p.decision is not None
        if p.rerun and p.decision != "deny" and self.gate.paused:
            await self.gate.wait_until_resumed(
                None, f"{p.name} {p.call_id}", "its re-run outside the sandbox"
            )
        return p.decision

    def answer(self, call_id: str, decision: str) -> bool:
        """Answer a pending request. False when no such request waits or the decision is unknown."""
        p = self._pending.get(call_id)
        if p is None or decision not in DECISIONS:
            return False
        p.decision = decision
        del self._pending[call_id]
        p.event.set()
        self._notify("answered", p)
        return True


def attach_reviewer(host: Any) -> None:
    """Let the host's approvals carry the permission policy's review of each call (notes and the
    rules "always" saves), when the host has a policy and nothing is attached yet."""
    broker = getattr(host, "approvals", None)
    review = getattr(getattr(host, "permissions", None), "review", None)
    if isinstance(broker, ApprovalBroker) and broker.reviewer is None and callable(review):
        broker.reviewer = review
