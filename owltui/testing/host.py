"""``LocalRuntime``: a bare agent host for tests and benches (the ``Host`` the command layer and the
front ends use, without sessions, real tools, permissions or model switching).

The real runtime is ``owltui.session.runtime.runtime.Runtime``. Here switching models or sessions and
compaction raise ``Unavailable`` (the command layer words that for the user); it has no session
file, checkpoints, MCP servers, jobs or freezer (those members are None), runs no work in the
background (``spawn`` is False: the front end awaits it) and a pause only parks unless asked to
freeze. Approvals exist but nothing asks. The input history lives in memory unless a directory is
given; ``@`` completion lists the workspace.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.events import Paused, Resumed
from owltui.agent.model import Model
from owltui.agent.pause import PauseGate
from owltui.session.approvals import ApprovalBroker
from owltui.session.commands.host import Host, ModelSources, host_state
from owltui.session.commands.spec import Unavailable
from owltui.session.stats import RunStats
from owltui.session.store.sessions import SessionInfo

if TYPE_CHECKING:
    from owltui.features.skills.discovery import SkillSet
    from owltui.policy.permissions.policy import PermissionPolicy
    from owltui.session.checkpoints.rewind import Checkpointing
    from owltui.session.input.history import InputHistory
    from owltui.session.input.mention_completion import MentionCompleter
    from owltui.session.plans import PlanBroker
    from owltui.session.store.store import SessionStore
    from owltui.tools.exec.freeze import Freezer
    from owltui.tools.jobs.manager import JobManager
    from owltui.tools.mcp.source import McpSource


class MemoryInputHistory:
    """``InputHistory``'s reading and writing, in memory (nothing outlives the process)."""

    def __init__(self, entries: list[str] | None = None) -> None:
        self._entries = list(entries or [])

    def entries(self) -> list[str]:
        return list(self._entries)

    def add(self, text: str) -> bool:
        if not text.strip() or (self._entries and self._entries[-1] == text):
            return False
        self._entries.append(text)
        return True

    def search(self, substring: str, limit: int | None = None) -> list[str]:
        needle = substring.casefold()
        out: list[str] = []
        for text in reversed(self._entries):
            if text not in out and needle in text.casefold():
                out.append(text)
                if limit is not None and len(out) >= limit:
                    break
        return out


class LocalRuntime:
    """An agent bound to a task group; no session. ``gate`` defaults to a private one. Like the real
    runtime it reports the gate's changes as ``paused`` / ``resumed`` events while it runs."""

    store: SessionStore | None = None
    checkpoints: Checkpointing | None = None
    mcp: McpSource | None = None
    jobs: JobManager | None = None
    freezer: Freezer | None = None
    model_sources: ModelSources | None = None
    skills: SkillSet | None = None
    permissions: PermissionPolicy | None = None
    plans: PlanBroker | None = None
    bash_output_lines: int = 5  # the config's default

    def __init__(
        self,
        model: Model,
        *,
        tools: list[Any] | None = None,
        gate: PauseGate | None = None,
        max_rounds: int = 40,
        label: str | None = None,
        workspace: Path | None = None,
        history_dir: Path | None = None,
    ) -> None:
        self.gate = gate or PauseGate()
        config = LoopConfig(model=model, tools=tools or [], max_rounds=max_rounds)
        if workspace is not None:
            config.workspace = workspace
        self.agent = Agent(config, gate=self.gate)
        self._history_dir = history_dir
        self.emitter = self.agent.emitter
        self.inbox = self.agent.inbox
        self.requirement = self.agent.requirement
        self.approvals = ApprovalBroker(self.emitter)
        self.stats = RunStats()
        self.stats.follow(self.emitter, self.inbox)
        self.model_label = label or f"scripted:{model.name}"
        self.session_id: str | None = None
        self._tg: TaskGroup | None = None
        self._stop_gate: Callable[[], None] = lambda: None

    @property
    def workspace(self) -> Path:
        return self.agent.config.workspace

    @cached_property
    def input_history(self) -> InputHistory | MemoryInputHistory:
        if self._history_dir is None:
            return MemoryInputHistory()
        from owltui.session.input.history import InputHistory

        return InputHistory(self.workspace, self._history_dir)

    @cached_property
    def mentions(self) -> MentionCompleter:
        from owltui.session.input.mention_completion import MentionCompleter

        return MentionCompleter(self.workspace)

    def tool_names(self) -> list[str]:
        return sorted(self.agent.config.all_tools())

    def require(self, tool: str, reason: str = "") -> None:
        self.requirement.set(tool, reason)

    def pause(self, freeze: bool | None = None) -> bool:
        return self.gate.pause(freeze=freeze is not False)

    def set_model(self, spec: str) -> None:
        raise Unavailable("switching models is not available here")

    def switch_session(self, target: str) -> None:
        raise Unavailable("switching sessions needs a saved session (this one runs with --no-session)")

    def new_session(self) -> None:
        from owltui.agent.history import MemoryHistory

        self.agent.history = MemoryHistory()

    def compact(self) -> Awaitable[str]:
        raise Unavailable("/compact is not available in this build")

    def saved_sessions(self) -> list[SessionInfo]:
        return []

    def state(self) -> dict[str, Any]:
        return host_state(self)

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]], name: str = "") -> bool:
        return False

    def _on_gate(self, paused: bool, seconds: float | None) -> None:
        self.emitter.emit(Paused() if paused else Resumed(paused_ms=round((seconds or 0.0) * 1000)))

    async def __aenter__(self) -> LocalRuntime:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self.agent.bind(self._tg)
        self._stop_gate = self.gate.subscribe(self._on_gate)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        self._stop_gate()
        self.agent.abort()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        return await self._tg.__aexit__(et, e, tb)


_LOCAL_RUNTIME_IS_A_HOST: type[Host] = LocalRuntime  # mypy proves it satisfies the protocol
