"""``Agent``: a loop config, a history, an inbox and an emitter, with the verbs front ends use.

prompt / steer / follow_up / aside / abort / require. At most one run at a time. When the agent is
idle and input lands in a lane (a steering message, a job's aside), it wakes and starts a run —
once bound to a task group with ``bind``. ``run`` can also be awaited directly (print mode,
subagents, tests).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from owltui.agent.cancel import CancelToken
from owltui.agent.config import LoopConfig
from owltui.agent.context import ContextBudget
from owltui.agent.events import Emitter
from owltui.agent.history import History, MemoryHistory
from owltui.agent.inbox import Entry, Inbox, Queued, QueueLane
from owltui.agent.loop import Loop
from owltui.agent.messages import UserMessage
from owltui.agent.pause import GATE, PauseGate
from owltui.agent.requirement import RequirementSlot
from owltui.agent.state import RunOutcome


class Agent:
    def __init__(
        self,
        config: LoopConfig,
        history: History | None = None,
        *,
        inbox: Inbox | None = None,
        emitter: Emitter | None = None,
        gate: PauseGate = GATE,
        requirement: RequirementSlot | None = None,
    ) -> None:
        self.config = config
        self.history: History = history if history is not None else MemoryHistory()
        self.inbox = inbox or Inbox()
        self.emitter = emitter or Emitter()
        self.gate = gate
        self.requirement = requirement or RequirementSlot()
        self.last_outcome: RunOutcome | None = None
        self.context = ContextBudget()  # automatic compaction's measure and failure streak, across runs
        self._tg: TaskGroup | None = None
        self._loop: Loop | None = None
        self._scope: anyio.CancelScope | None = None
        self._running = False
        self._abort_pending = False
        self._run_listeners: list[Callable[[bool], None]] = []
        # awaited once, by the first run, before it captures the tool list (MCP servers starting)
        self.before_first_run: Callable[[], Awaitable[None]] | None = None
        self.inbox.subscribe(self._on_inbox)

    # ---- state ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._running

    def on_running(self, fn: Callable[[bool], None]) -> None:
        self._run_listeners.append(fn)

    def _set_running(self, value: bool) -> None:
        self._running = value
        for fn in tuple(self._run_listeners):
            fn(value)

    # ---- running -------------------------------------------------------------------------
    def bind(self, tg: TaskGroup) -> None:
        """Let the agent start runs in the background (needed for ``start`` and waking)."""
        self._tg = tg

    async def run(self, text: str | UserMessage | None = None, *, wake: bool = False) -> RunOutcome:
        """Run to the end. Raises RuntimeError if a run is already going. The first run awaits
        ``before_first_run`` (once; it is cleared first) before it builds its loop: the tool list is
        captured only then. If it raises, the run is not going any more and the exception propagates."""
        if self._running:
            raise RuntimeError("a run is already in progress")
        self._set_running(True)
        ready, self.before_first_run = self.before_first_run, None
        if ready is not None:  # an abort meanwhile ends the run at its first check
            try:
                await ready()
            except BaseException:
                self._abort_pending = False
                self._set_running(False)
                raise
        initial = [UserMessage(text=text) if isinstance(text, str) else text] if text is not None else []
        cancel = CancelToken()
        if self._abort_pending:  # aborted between start() and now: the run ends at its first check
            self._abort_pending = False
            cancel.cancel("aborted")
        loop = Loop(
            self.config,
            self.history,
            inbox=self.inbox,
            emitter=self.emitter,
            gate=self.gate,
            requirement=self.requirement,
            cancel=cancel,
            budget=self.context,
        )
        self._loop = loop
        outcome = RunOutcome("aborted")
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                outcome = await loop.run(initial, wake=wake)
        finally:
            self._scope = None
            self._loop = None
            self.last_outcome = outcome
            self._set_running(False)
        if outcome.reason == "done" and self.inbox.has():
            self.start(None)  # input landed as the run ended
        return outcome

    def start(self, text: str | UserMessage | None = None) -> bool:
        """Start a background run (requires ``bind``). False when a run is going."""
        if self._running or self._tg is None:
            return False
        self._running = True  # reserve now so two quick starts cannot both begin
        self._tg.start_soon(self._start_reserved, text)
        return True

    async def _start_reserved(self, text: str | UserMessage | None) -> None:
        self._running = False
        await self.run(text, wake=text is None)

    def _on_inbox(self, action: str, lane: QueueLane, item: Queued | None) -> None:
        if action == "push" and not self._running and self._tg is not None:
            self.start(None)

    # ---- the verbs -----------------------------------------------------------------------
    def prompt(self, text: str | UserMessage) -> bool:
        """Start a run with ``text`` (a message: with images); while one is going, returns False
        (use steer/follow_up)."""
        return self.start(text)

    def steer(self, text: str, source: str = "user", *, immediate: bool = False) -> Queued:
        """Queue steering, delivered after the running batch; ``immediate``: this message skips the
        batch's calls not yet started (as config ``steering = "immediate"`` does for every one),
        the config unchanged. Returns the queued record (its ``id`` for edit/remove/move)."""
        return self.inbox.push("steer", text, source=source, immediate=immediate)

    def follow_up(self, text: str, source: str = "user") -> Queued:
        return self.inbox.push("follow_up", text, source=source)

    def aside(self, entry: str | Entry, source: str = "system") -> Queued:
        return self.inbox.push("aside", entry, source=source)

    def abort(self, clear_queue: bool = False) -> bool:
        """Cancel the running run (stream stops, running tools are killed). Queue kept unless asked."""
        if clear_queue:
            self.inbox.clear()
        loop, scope = self._loop, self._scope
        if loop is None:
            if self._running:  # started, not yet begun
                self._abort_pending = True
                return True
            return False
        loop.cancel.cancel("aborted")
        if scope is not None:
            scope.cancel()
        return True

    async def wait_idle(self) -> None:
        """Return once no run is going (including runs woken by input that arrived meanwhile)."""
        while self._running:
            ev = anyio.Event()

            def fn(running: bool, ev: anyio.Event = ev) -> None:
                if not running:
                    ev.set()

            self._run_listeners.append(fn)
            try:
                await ev.wait()
            finally:
                self._run_listeners.remove(fn)
            await anyio.lowlevel.checkpoint()
