"""Approval requests: the permission policy asks, a front end answers.

``ApprovalBroker.ask`` emits an ``approval_request`` event and waits for ``answer(call_id, decision)``
(the UI's dialog, RPC's ``approve``). A cancelled run withdraws its pending requests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from owltui.agent.events import ApprovalRequest, Emitter

Decision = Literal["allow", "deny", "always"]
DECISIONS: tuple[Decision, ...] = ("allow", "deny", "always")


@dataclass
class Pending:
    call_id: str
    name: str
    arguments: dict[str, Any]
    event: anyio.Event = field(default_factory=anyio.Event)
    decision: Decision | None = None


class ApprovalBroker:
    def __init__(self, emitter: Emitter) -> None:
        self.emitter = emitter
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

    async def ask(self, call: Any, *_args: Any, **_kwargs: Any) -> Decision:
        """Ask about a tool call (anything with ``id``, ``name``, ``arguments``); wait for the answer."""
        p = Pending(call_id=call.id, name=call.name, arguments=dict(call.arguments))
        self._pending[p.call_id] = p
        self._notify("asked", p)
        self.emitter.emit(ApprovalRequest(call_id=p.call_id, name=p.name, arguments=p.arguments))
        try:
            await p.event.wait()
        finally:
            if self._pending.pop(p.call_id, None) is not None and p.decision is None:
                self._notify("withdrawn", p)
        assert p.decision is not None
        return p.decision

    def answer(self, call_id: str, decision: str) -> bool:
        """Answer a pending request. False when no such request waits or the decision is unknown."""
        p = self._pending.get(call_id)
        if p is None or decision not in DECISIONS:
            return False
        p.decision = decision  # type: ignore[assignment]
        del self._pending[call_id]
        p.event.set()
        self._notify("answered", p)
        return True
