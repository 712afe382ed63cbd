"""The runtime every front end drives: one agent with its config, tools, permissions, jobs and session.

``build_runtime(options)`` (``owltui.session.runtime.build``) resolves configuration and provider, opens or
creates the session, and wires the agent; ``async with runtime`` (or ``start(tg)`` / ``aclose()``)
binds the agent to a task group and turns job and pause-gate changes into events. Front ends (TUI,
plain, print, RPC) use only this object and the agent's verbs.

The pause gate's state is part of the session: every change is recorded, and a session continued (``-c``)
after a quit or a crash while paused starts paused. Checkpoints (``checkpoints``: ``Checkpointing``) are
taken before each user turn; ``rewind`` / ``undo`` put files and the conversation back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from owltui.agent.agent import Agent
from owltui.agent.context import ContextBudget, request_tokens
from owltui.agent.events import Compaction, Emitter, Paused, Resumed
from owltui.agent.history import MemoryHistory
from owltui.agent.inbox import Inbox
from owltui.agent.model import Model
from owltui.agent.pause import PauseGate
from owltui.agent.requirement import RequirementSlot
from owltui.session.approvals import ApprovalBroker
from owltui.session.commands.host import Host, ModelSources, host_state
from owltui.session.config import Config
from owltui.session.runtime.options import Options
from owltui.session.stats import RunStats
from owltui.session.store.sessions import SessionInfo
from owltui.session.store.store import SessionStore

if TYPE_CHECKING:
    from owltui.features.skills.discovery import SkillSet
    from owltui.policy.permissions.policy import PermissionPolicy
    from owltui.policy.sandbox.kernel import SandboxPolicy
    from owltui.session.checkpoints.rewind import Checkpointing
    from owltui.session.input.history import InputHistory
    from owltui.session.input.mention_completion import MentionCompleter
    from owltui.session.plans import PlanBroker
    from owltui.session.runtime.sources import ToolSource
    from owltui.tools.exec.freeze import Freezer
    from owltui.tools.jobs.entries import JobEvent
    from owltui.tools.jobs.manager import JobManager
    from owltui.tools.mcp.source import McpSource

Warn = Callable[[str], None]


class Runtime:
    """One agent and everything around it. Build with ``build_runtime``."""

    def __init__(
        self,
        *,
        agent: Agent,
        config: Config,
        options: Options,
        model_label: str,
        store: SessionStore | None,
        approvals: ApprovalBroker,
        permissions: PermissionPolicy | None,
        env: Mapping[str, str],
        jobs: JobManager | None = None,
    ) -> None:
        self.agent = agent
        self.emitter: Emitter = agent.emitter
        self.inbox: Inbox = agent.inbox
        self.gate: PauseGate = agent.gate
        self.requirement: RequirementSlot = agent.requirement
        self.config = config
        self.bash_output_lines = config.bash_output_lines
        self.options = options
        self.model_label = model_label
        self.store = store
        self.approvals = approvals
        self.jobs = jobs
        self.permissions = permissions
        self.env = env
        self.model_sources = ModelSources(env, tuple(u for u in (options.base_url, config.base_url) if u))
        self.active_jobs: dict[str, str] = {}  # job id -> command, for jobs still running
        self.freezer: Freezer | None = None  # stops tool processes while the gate is closed
        self.sandbox: SandboxPolicy | None = None  # what confines the commands tools start
        self.plans: PlanBroker | None = None  # the permission mode's switch and plan mode's question
        self.sources: list[ToolSource] = []
        self.mcp: McpSource | None = None  # the MCP servers' tool source, when any are configured
        self.skills: SkillSet | None = None  # the skills found at start, for /skills and /skill
        self.checkpoints: Checkpointing | None = None  # before each user turn (config ``checkpoints``)
        self._tg: TaskGroup | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self.on_close: list[Callable[[], Awaitable[None]]] = []  # awaited at close (SessionEnd hooks)
        self._changed: list[anyio.Event] = []
        self._closed = False
        agent.on_running(lambda _running: self._signal())
        self.stats = RunStats()  # the counters every front end shows, fed from the start
        self._unsubscribe.append(self.stats.follow(self.emitter, self.inbox))

    # ---- information ---------------------------------------------------------------------
    @property
    def session_id(self) -> str | None:
        return self.store.id if self.store is not None else None

    @property
    def workspace(self) -> Path:
        return self.agent.config.workspace

    def tool_names(self) -> list[str]:
        return sorted(self.agent.config.all_tools())

    @cached_property
    def input_history(self) -> InputHistory:
        """What the user typed in this workspace (Up/Down, Ctrl+R), secrets scrubbed."""
        from owltui.session.input.history import InputHistory

        redactor = self.agent.config.services.redactor
        scrub = redactor.scrub if redactor is not None else None
        return InputHistory(self.workspace, env=self.env, scrub=scrub)

    @cached_property
    def mentions(self) -> MentionCompleter:
        """Completion for ``@path`` over the workspace's files (read-denied ones left out)."""
        from owltui.session.input.mention_completion import MentionCompleter

        denied = self.permissions.read_denied if self.permissions is not None else None
        return MentionCompleter(self.workspace, denied, mcp=lambda: self.mcp)  # and MCP resources

    def saved_sessions(self) -> list[SessionInfo]:
        """This directory's saved sessions, newest first (``/sessions``)."""
        from owltui.session.paths import sessions_dir
        from owltui.session.store.sessions import list_sessions

        return list_sessions(sessions_dir(self.workspace, self.env))

    def state(self) -> dict[str, Any]:
        """The ``get_state`` payload (``owltui.session.commands.host.host_state``)."""
        return host_state(self)

    # ---- changing things -----------------------------------------------------------------
    def set_model(self, spec: str) -> None:
        """Switch model (``provider:name``, or a name on this provider) from the next call on;
        ProviderConfigError when the provider cannot be used."""
        from owltui.providers.resolve import split_model

        provider, name = split_model(spec.strip())
        current = self.model_label.split(":", 1)[0] if ":" in self.model_label else None
        if provider is None and current is None:
            provider = "demo" if self.model_label.startswith("demo") else None
        base = (self.options.base_url or self._serving_url()) if provider in (None, current) else None
        model, label = resolve_model(
            self.config, self.env, provider=provider or current, model=name, base_url=base
        )
        self.agent.config.model = model
        self.agent.config.context_window = context_window(self.config, model)
        self.model_label = label
        if self.store is not None:
            self.store.record_model(label)

    def _serving_url(self) -> str | None:
        """The current model's base URL (maybe a local server found): a switch on its provider stays."""
        from owltui.providers.http.stream import HTTPModel

        return m.base_url if isinstance(m := self.agent.config.model, HTTPModel) else None

    def require(self, tool: str, reason: str = "") -> None:
        self.requirement.set(tool, reason)

    def pause(self, freeze: bool | None = None) -> bool:
        """Close the gate, freezing running tools' processes as configured (``pause_freeze``) or, for
        this closing, as ``freeze`` says. False when it was already closed."""
        if self.freezer is not None:
            return self.freezer.pause(freeze)
        return self.gate.pause(freeze=self.config.pause_freeze if freeze is None else freeze)

    def new_session(self) -> None:
        """Start a fresh conversation (``/new``): a new session file, or a new memory history."""
        if self.agent.running:
            raise RuntimeError("a run is going: abort it before starting a new session")
        old = self.store
        if old is None:
            self.agent.history = MemoryHistory()
            self.agent.context = ContextBudget()  # automatic compaction starts afresh
            self._checkpoints_for(None)
            return
        store = SessionStore.create(old.path.parent, old.cwd, self.model_label, old.redactor, old.warn)
        self._adopt(store)

    def switch_session(self, target: str) -> None:
        """Continue saved session ``target`` (an id or its start) here, in place of this one
        (``/sessions ID``): its queue comes back, what is queued here goes along, the pause state
        and the checkpoints follow. SessionError (one sentence) when it cannot be opened."""
        from owltui.session.paths import sessions_root
        from owltui.session.store.sessions import find_session

        old = self.store
        if old is None:
            from owltui.session.commands.spec import Unavailable

            raise Unavailable("switching sessions needs a saved session (this one runs with --no-session)")
        if self.agent.running:
            raise RuntimeError("a run is going: abort it before switching sessions")
        path = find_session(sessions_root(self.env), target)
        if path == old.path:
            return
        store = SessionStore.open(path, old.redactor, old.warn)  # raises before anything changed
        if store.model != self.model_label and store.items():
            store.record_model(self.model_label)
        self._adopt(store)

    def _adopt(self, store: SessionStore) -> None:
        """Make ``store`` the session: the old one closed, its queued messages carried over (ids
        too), the gate's state recorded, checkpoints kept with the new one."""
        old = self.store
        if old is not None:
            old.close()
        store.attach(self.inbox)  # its own undelivered messages come back to the queue
        for lane in ("steer", "follow_up", "aside"):
            for item in self.inbox.items(lane):  # still queued here: the new file keeps them, ids too
                store.track_queued(lane, item)
        self.store = store
        self.agent.history = store
        self.agent.context = ContextBudget()  # automatic compaction measures the new history afresh
        self.requirement.clear()
        store.record_pause(self.gate.paused)
        from owltui.session.checkpoints.rewind import STORE_NAME

        self._checkpoints_for(store.path.with_suffix("") / STORE_NAME)

    def _checkpoints_for(self, directory: Path | None) -> None:
        if self.checkpoints is not None:
            self.checkpoints.reset(directory)
            self.spawn(self.checkpoints.warm, "checkpoints")

    async def compact(self, keep_turns: int = 0) -> str:
        """Summarise the older conversation (``/compact``); the model sees the summary from then on.

        Raises CompactionError (one sentence) when there is nothing to compact or the call fails."""
        from owltui.features.compaction import compact

        if self.agent.running:
            raise RuntimeError("a run is going: wait or abort it before compacting")
        cfg, history = self.agent.config, self.agent.history
        before = request_tokens(cfg, history.model_view())
        done = await compact(
            history, cfg.model, keep_turns=keep_turns, gate=self.gate, window=cfg.context_window
        )
        self.agent.context.succeeded()
        self.emitter.emit(
            Compaction(
                reason="manual", tokens_before=before, tokens_after=request_tokens(cfg, history.model_view())
            )
        )
        return f"{done.replaced} items summarised in {len(done.summary)} characters"

    # ---- life cycle ----------------------------------------------------------------------
    async def __aenter__(self) -> Runtime:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self.start(tg)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        tg, self._tg = self._tg, None
        assert tg is not None
        tg.cancel_scope.cancel()
        return await tg.__aexit__(exc_type, exc, tb)

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]], name: str = "") -> bool:
        """Run ``fn`` in the runtime's task group: work a command started that outlives its reply
        (a ``!`` command, ``/init``). False when the runtime is not started or already closed."""
        if self._tg is None or self._closed:
            return False
        self._tg.start_soon(fn, name=name or None)
        return True

    async def fix_tools(self) -> None:
        """Before the first request: wait (bounded) for the MCP servers, then take the sorted tools."""
        from owltui.session.runtime.sources import collect_tools, follow_mcp

        if self.mcp is not None:
            await self.mcp.wait_ready()
            follow_mcp(self.agent, self.mcp, self.sources)  # later changes: at turn boundaries
        self.agent.config.set_tools(collect_tools(self.sources))

    def add_sources(self, sources: Sequence[ToolSource]) -> None:
        """Tool sources to start with the runtime and close with it (their tools are fixed at build)."""
        self.sources.extend(sources)

    def start(self, tg: TaskGroup) -> None:
        """Bind to ``tg`` (the caller's, e.g. the TUI's), start the tool sources in it (in the
        background: nothing waits for them) and start forwarding gate changes."""
        self._tg = tg
        self.agent.bind(tg)
        for source in self.sources:
            tg.start_soon(source.start, name=f"tool source {source.name}")
        self._unsubscribe.append(self.gate.subscribe(self._on_gate))
        if self.store is not None and self.store.paused and self.options.interactive:
            self.pause()  # continued after a quit or a crash while paused: still paused
        if self.checkpoints is not None:
            tg.start_soon(self.checkpoints.warm, name="checkpoints")

    async def aclose(self) -> None:
        """Abort the run, kill background jobs, close the session (idempotent)."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            while self.agent.running:
                self.agent.abort()
                with anyio.move_on_after(0.05):
                    await self.agent.wait_idle()
            for closing in self.on_close:
                await closing()
            if self.jobs is not None:
                await self.jobs.shutdown()
            for source in reversed(self.sources):
                await source.aclose()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        if self.store is not None:
            self.store.close()
        if self.checkpoints is not None:
            self.checkpoints.close()

    async def wait_settled(self) -> None:
        """Until the agent is idle, no run is about to start, and no job it started is running."""
        while True:
            outcome = self.agent.last_outcome
            wake_due = (
                self.inbox.has() and outcome is not None and outcome.reason == "done" and self._tg is not None
            )
            if not self.agent.running and not self.active_jobs and not wake_due:
                return
            ev = anyio.Event()
            self._changed.append(ev)
            await ev.wait()

    def _signal(self) -> None:
        waiters, self._changed = self._changed, []
        for ev in waiters:
            ev.set()

    def _on_gate(self, paused: bool, seconds: float | None) -> None:
        if self.store is not None:
            self.store.record_pause(paused)
        if paused:
            self.emitter.emit(Paused())
        else:
            self.emitter.emit(Resumed(paused_ms=round((seconds or 0.0) * 1000)))

    def on_job(self, event: JobEvent) -> None:
        """Job manager callback: events for front ends; a finished job is an aside (wakes the agent).
        Processes that escaped a finished command are listed as jobs but never waited for (print
        mode) and end without an aside."""
        self.emitter.emit(event.to_event())
        if event.escaped:
            self._signal()
            return
        if event.kind == "started":
            self.active_jobs[event.job_id] = event.command
        else:
            if not self._closed:
                self.agent.aside(event.aside_text(), source="job")
            self.active_jobs.pop(event.job_id, None)
        self._signal()


def context_window(config: Config, model: Model) -> int | None:
    """The model's context window in tokens: ``--context-window`` / config ``context_window``, else
    the catalog's (a provider model's ``info``); None turns automatic compaction off."""
    if config.context_window is not None:
        return config.context_window
    window = getattr(getattr(model, "info", None), "context_window", None)
    return window if isinstance(window, int) and window > 0 else None


def resolve_model(
    config: Config, env: Mapping[str, str], *, provider: str | None, model: str | None, base_url: str | None
) -> tuple[Model, str]:
    """Provider resolution (flags, then config, then keys, then a local server, then the demo)."""
    from owltui.providers.resolve import make_model, resolve_provider

    resolved = resolve_provider(
        provider, model, base_url, config.provider, config.model, env, config_base_url=config.base_url
    )
    opts: dict[str, Any] = {} if resolved.provider == "demo" else {"idle_timeout": config.stream_idle_timeout}
    return make_model(resolved, **opts), resolved.label


_RUNTIME_IS_A_HOST: type[Host] = Runtime  # mypy proves it satisfies the protocol
