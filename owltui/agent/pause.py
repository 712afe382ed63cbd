"""The process-wide pause gate: one instance shared by every loop in the process.

Loops park at two spots — before a model call and before a tool start — while the gate is closed.
Pausing never kills running work. An abort releases the one parked run (``wait_until_resumed``
returns) without opening the gate; a resume followed by a pause in the same tick re-parks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio
import anyio.lowlevel

from .cancel import CancelToken
from .state import Aborted

log = logging.getLogger(__name__)

GateListener = Callable[[bool, float | None], None]  # (paused, paused_seconds on resume)


class PauseGate:
    def __init__(self) -> None:
        self._paused = False
        self._paused_at: float | None = None
        self._waiters: set[anyio.Event] = set()
        self._listeners: list[GateListener] = []
        self.parked: dict[str, str] = {}  # agent name -> where it is parked ("model" | "tool")

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def paused_at(self) -> float | None:
        """``time.monotonic()`` when the gate closed, or None when open."""
        return self._paused_at

    def subscribe(self, fn: GateListener) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, paused: bool, seconds: float | None) -> None:
        for fn in tuple(self._listeners):
            try:
                fn(paused, seconds)
            except Exception:  # a listener must never break the gate
                log.exception("pause listener failed")

    def pause(self) -> bool:
        """Close the gate. False if it was already closed."""
        if self._paused:
            return False
        self._paused = True
        self._paused_at = time.monotonic()
        self._notify(True, None)
        return True

    def resume(self) -> float | None:
        """Open the gate; returns how long it was closed (seconds), or None if it was open."""
        if not self._paused:
            return None
        seconds = time.monotonic() - (self._paused_at or time.monotonic())
        self._paused = False
        self._paused_at = None
        waiters, self._waiters = self._waiters, set()
        for ev in waiters:
            ev.set()
        self._notify(False, seconds)
        return seconds

    async def wait_until_resumed(self, cancel: CancelToken | None = None, who: str = "main",
                                 where: str = "model") -> bool:
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
