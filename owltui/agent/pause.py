"""The process-wide pause gate: one instance shared by every loop in the process.

Loops park at two spots — before a model call and before a tool start — while the gate is closed.
Pausing never kills running work. An abort releases the one parked run (``wait_until_resumed``
returns) without opening the gate; a resume followed by a pause in the same tick re-parks.

Freezing: ``pause(freeze=True)`` (the default) also freezes the world — the tools side
stops the processes of running tools and jobs when ``on_freeze`` listeners hear True and continues
them when they hear False — and stops ``clock()``, a monotonic clock of unfrozen time, so time caps
(a command's cap, a job's cap, the provider's idle timeout) measured on it, or waited with
``sleep``, are suspended while frozen and continue with the time they had left. ``pause(freeze=False)``
only parks runs: ``clock()`` keeps running and ``on_freeze`` listeners hear nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio
import anyio.lowlevel

from owltui.agent.cancel import CancelToken
from owltui.agent.state import Aborted

log = logging.getLogger(__name__)

GateListener = Callable[[bool, float | None], None]  # (paused, paused_seconds on resume)
FreezeListener = Callable[[bool], None]  # True when a freezing pause begins, False when it ends


class PauseGate:
    def __init__(self) -> None:
        self._paused = False
        self._paused_at: float | None = None
        self._waiters: set[anyio.Event] = set()
        self._listeners: list[GateListener] = []
        self._freeze_listeners: list[FreezeListener] = []
        self._frozen_since: float | None = None  # time.monotonic() when the current freeze began
        self._frozen_before = 0.0  # seconds frozen by earlier (ended) freezes
        self.parked: dict[str, str] = {}  # agent name -> where it is parked ("model" | "tool")

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def paused_at(self) -> float | None:
        """``time.monotonic()`` when the gate closed, or None when open."""
        return self._paused_at

    @property
    def frozen(self) -> bool:
        """Closed by a freezing pause: running tools' processes are stopped, ``clock()`` stands."""
        return self._frozen_since is not None

    def subscribe(self, fn: GateListener) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def on_freeze(self, fn: FreezeListener) -> Callable[[], None]:
        """Hear ``True`` when a freezing pause begins (stop the processes now) and ``False`` when it
        ends (continue them). Called synchronously, before the ``subscribe`` listeners on pause and
        after them on resume; returns the unsubscribe function."""
        self._freeze_listeners.append(fn)
        return lambda: self._freeze_listeners.remove(fn) if fn in self._freeze_listeners else None

    def _notify(self, paused: bool, seconds: float | None) -> None:
        for fn in tuple(self._listeners):
            try:
                fn(paused, seconds)
            except Exception:  # a listener must never break the gate
                log.exception("pause listener failed")

    def _notify_freeze(self, frozen: bool) -> None:
        for fn in tuple(self._freeze_listeners):
            try:
                fn(frozen)
            except Exception:
                log.exception("freeze listener failed")

    # ---- the clock of unfrozen time --------------------------------------------------------
    def frozen_total(self) -> float:
        """Seconds the gate has been frozen so far in this process (the current freeze included)."""
        since = self._frozen_since
        return self._frozen_before + (time.monotonic() - since if since is not None else 0.0)

    def clock(self) -> float:
        """``time.monotonic()`` minus the time spent frozen: stands still while frozen. Measure
        time caps on it (``deadline = gate.clock() + cap``; over when ``gate.clock() >= deadline``)."""
        since = self._frozen_since
        if since is not None:
            return since - self._frozen_before
        return time.monotonic() - self._frozen_before

    async def sleep(self, seconds: float) -> None:
        """Sleep until ``seconds`` of ``clock()`` time have passed: a freeze in between adds its
        length (race it against the work the cap bounds, e.g. in a task group or ``move_on``)."""
        end = self.clock() + seconds
        while True:
            if self._frozen_since is not None:
                await self._until_unfrozen()
            left = end - self.clock()
            if left <= 0:
                return
            await anyio.sleep(left)

    async def _until_unfrozen(self) -> None:
        while self._frozen_since is not None:
            ev = anyio.Event()
            self._waiters.add(ev)
            try:
                await ev.wait()
            finally:
                self._waiters.discard(ev)

    # ---- closing and opening ---------------------------------------------------------------
    def pause(self, freeze: bool = True) -> bool:
        """Close the gate; ``freeze``: also freeze the world (see the module). False if it was
        already closed (a park-only pause then becomes freezing when ``freeze`` asks for it)."""
        if self._paused:
            if freeze and self._frozen_since is None:
                self._frozen_since = time.monotonic()
                self._notify_freeze(True)
            return False
        self._paused = True
        self._paused_at = time.monotonic()
        if freeze:
            self._frozen_since = self._paused_at
            self._notify_freeze(True)
        self._notify(True, None)
        return True

    def resume(self) -> float | None:
        """Open the gate; returns how long it was closed (seconds), or None if it was open."""
        if not self._paused:
            return None
        now = time.monotonic()
        seconds = now - (self._paused_at or now)
        self._paused = False
        self._paused_at = None
        since, self._frozen_since = self._frozen_since, None
        if since is not None:
            self._frozen_before += now - since
        waiters, self._waiters = self._waiters, set()
        for ev in waiters:
            ev.set()
        self._notify(False, seconds)
        if since is not None:
            self._notify_freeze(False)
        return seconds

    async def wait_until_resumed(
        self, cancel: CancelToken | None = None, who: str = "main", where: str = "model"
    ) -> bool:
        """Park while the gate is closed. Returns True if it parked at all.

        Returns at once when ``cancel`` is set, leaving the gate closed.
        """
        if not self._paused or (cancel is not None and cancel.cancelled):
            return False
        self.parked[who] = where
        try:
            while self._paused and not (cancel is not None and cancel.cancelled):
                ev = anyio.Event()
                self._waiters.add(ev)
                if cancel is None:
                    await ev.wait()
                else:
                    async with anyio.create_task_group() as tg:

                        async def _watch(waiter: Callable[[], object], scope: anyio.CancelScope) -> None:
                            await waiter()  # type: ignore[misc]
                            scope.cancel()

                        tg.start_soon(_watch, ev.wait, tg.cancel_scope)
                        tg.start_soon(_watch, cancel.wait, tg.cancel_scope)
                self._waiters.discard(ev)
                await anyio.lowlevel.checkpoint()  # let a same-tick re-pause land before re-checking
        finally:
            self.parked.pop(who, None)
        return True


GATE = PauseGate()
"""The process-wide gate (main agent, subagents, everything)."""


async def park(gate: PauseGate, cancel: CancelToken, who: str, where: str) -> None:
    """One of a run's two parking spots (``model``, ``tool``): wait while the gate is closed, then
    raise ``Aborted`` if the run was aborted meanwhile (or before)."""
    if gate.paused:
        await gate.wait_until_resumed(cancel, who, where)
    if cancel.cancelled:
        raise Aborted
