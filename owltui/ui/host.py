"""``LocalRuntime``: a bare agent host for tests and benches (the ``Host`` the command layer and the
front ends use, without sessions, real tools, permissions or model switching).

The real runtime is ``owltui.session.runtime.Runtime``. Here switching models and compaction raise
``Unavailable`` (the command layer words that for the user); approvals exist but nothing asks.
"""

from __future__ import annotations

from collections.abc import Awaitable
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from owltui.agent.agent import Agent
from owltui.agent.events import Paused, Resumed
from owltui.agent.loop import LoopConfig
from owltui.agent.model import Model
from owltui.agent.pause import PauseGate
from owltui.session.approvals import ApprovalBroker
from owltui.session.commands import Unavailable
from owltui.session.sessions import SessionInfo
from owltui.session.stats import RunStats


class LocalRuntime:
    """An agent bound to a task group; no session. ``gate`` defaults to a private one. Like the real
    runtime it reports the gate's changes as ``paused`` / ``resumed`` events while it runs."""

    def __init__(self, model: Model, *, tools: list[Any] | None = None, gate: PauseGate | None = None,
                 max_rounds: int = 40, label: str | None = None) -> None:
        self.gate = gate or PauseGate()
        self.agent = Agent(LoopConfig(model=model, tools=tools or [], max_rounds=max_rounds), gate=self.gate)
        self.emitter = self.agent.emitter
        self.inbox = self.agent.inbox
        self.requirement = self.agent.requirement
        self.approvals = ApprovalBroker(self.emitter)
        self.stats = RunStats()
        self.stats.follow(self.emitter, self.inbox)
        self.model_label = label or f"scripted:{model.name}"
        self.session_id: str | None = None
        self._tg: TaskGroup | None = None
        self._stop_gate = lambda: None

    def tool_names(self) -> list[str]:
        return sorted(self.agent.config.all_tools())

    def require(self, tool: str, reason: str = "") -> None:
        self.requirement.set(tool, reason)

    def set_model(self, spec: str) -> None:
        raise Unavailable("switching models is not available here")

    def new_session(self) -> None:
        from owltui.agent.history import MemoryHistory

        self.agent.history = MemoryHistory()

    def compact(self) -> Awaitable[str]:
        raise Unavailable("/compact is not available in this build")

    def saved_sessions(self) -> list[SessionInfo]:
        return []

    def state(self) -> dict[str, Any]:
        req = self.requirement.current
        return {"running": self.agent.running, "paused": self.gate.paused, "queue": self.inbox.snapshot(),
                "session_id": None, "model": self.model_label,
                "requirement": req.tool if req is not None else None,
                "approvals": [p.call_id for p in self.approvals.pending()], "jobs": sorted(self.stats.jobs),
                "usage": self.stats.usage(), "rounds": self.stats.rounds}

    def _on_gate(self, paused: bool, seconds: float | None) -> None:
        self.emitter.emit(Paused() if paused else Resumed(paused_ms=round((seconds or 0.0) * 1000)))

    async def __aenter__(self) -> LocalRuntime:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self.agent.bind(self._tg)
        self._stop_gate = self.gate.subscribe(self._on_gate)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        self._stop_gate()
        self.agent.abort()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        return await self._tg.__aexit__(et, e, tb)
