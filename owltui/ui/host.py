"""What the UI needs from a runtime, and ``LocalRuntime``: a bare agent host for tests and benches.

The real runtime (``owltui.session.runtime``) adds sessions, tools, permissions and approvals; the UI
reads optional parts (``approvals``, ``store``, ``set_model``, ``compact``, ``new_session``) with
``getattr`` so either works.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Protocol, runtime_checkable

import anyio
from anyio.abc import TaskGroup

from owltui.agent.agent import Agent
from owltui.agent.events import Emitter
from owltui.agent.inbox import Inbox
from owltui.agent.loop import LoopConfig
from owltui.agent.model import Model
from owltui.agent.pause import PauseGate
from owltui.agent.requirement import RequirementSlot


@runtime_checkable
class Host(Protocol):
    agent: Agent
    emitter: Emitter
    inbox: Inbox
    gate: PauseGate
    requirement: RequirementSlot
    model_label: str

    def tool_names(self) -> list[str]: ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> Any: ...


class LocalRuntime:
    """An agent bound to a task group; no session, no approvals. ``gate`` defaults to a private one."""

    def __init__(self, model: Model, *, tools: list[Any] | None = None, gate: PauseGate | None = None,
                 max_rounds: int = 40, label: str | None = None) -> None:
        self.gate = gate or PauseGate()
        self.agent = Agent(LoopConfig(model=model, tools=tools or [], max_rounds=max_rounds), gate=self.gate)
        self.emitter = self.agent.emitter
        self.inbox = self.agent.inbox
        self.requirement = self.agent.requirement
        self.model_label = label or f"scripted:{model.name}"
        self.approvals: Any = None
        self.session_id: str | None = None
        self._tg: TaskGroup | None = None

    def tool_names(self) -> list[str]:
        return sorted(self.agent.config.all_tools())

    async def __aenter__(self) -> LocalRuntime:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self.agent.bind(self._tg)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        self.agent.abort()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        return await self._tg.__aexit__(et, e, tb)
