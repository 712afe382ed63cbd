"""Pause freezes the world: closing the pause gate stops the processes of running tools and jobs.

``Freezer`` listens to the process-wide ``PauseGate`` (``on_freeze``). When a freezing pause begins
it sends SIGSTOP to the process group of every running ``bash`` command and background job (and of a
user hook running meanwhile: ``group``), and to every process that escaped them (other groups and
sessions, adopted orphans: ``reaper.REAPER``); when it ends, SIGCONT to the same. Time caps are
measured on ``clock()``, which stands still while the processes are stopped, so a command's cap
(and a ``job_output`` wait) is extended by the pause: a command with 30 s left when the gate closed
still has 30 s when it opens.

``enabled=False`` (config ``pause_freeze = false``) keeps park-only pausing for the processes:
they keep running and ``clock()`` keeps going, even when the gate was closed with its default
``freeze=True`` (the gate's own ``clock()`` then stands, so this clock is the tools' own: it stops
exactly when their processes do). ``pause(freeze=None)`` closes the gate as configured (front ends
should call it, or ``gate.pause(freeze=config.pause_freeze)``); ``pause(freeze=True|False)`` decides
for one closing (RPC ``pause {"freeze": …}``). ``frozen()`` says what is frozen, for the banner.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal, Protocol

from owltui.tools.exec.proc import Proc
from owltui.tools.exec.reaper import REAPER
from owltui.tools.exec.signals import cont_sync, stop_sync

if TYPE_CHECKING:
    from owltui.tools.jobs.entries import AnyJob
    from owltui.tools.jobs.manager import JobManager

Kind = Literal["command", "job"]


class Gate(Protocol):
    """What the freezer needs of ``owltui.agent.pause.PauseGate``."""

    @property
    def paused(self) -> bool: ...

    def pause(self, freeze: bool = True) -> bool: ...

    def on_freeze(self, fn: Callable[[bool], None]) -> Callable[[], None]: ...


class Freezer:
    """Stops running tool processes while the gate is closed (``ctx.services.freezer``)."""

    def __init__(self, gate: Gate | None, jobs: JobManager | None = None, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.jobs = jobs
        self._gate = gate
        self._lock = threading.RLock()
        self._commands: list[Proc] = []
        self._others: set[int] = set()  # process groups that are not tool commands (user hooks)
        self._frozen_at: float | None = None
        self._frozen_total = 0.0
        self._groups: set[int] = set()
        self._pids: set[int] = set()
        self._items: list[tuple[Kind, Proc | AnyJob]] = []
        self._override: bool | None = None
        self._unsubscribe = gate.on_freeze(self._on_freeze) if gate is not None else None
        if jobs is not None:
            jobs.clock = self.clock
            jobs.freezer = self

    # ---- the clock ----------------------------------------------------------------------------
    def clock(self) -> float:
        """``time.monotonic()`` less the time processes spent frozen: caps measured on it are
        extended by every pause that froze them."""
        with self._lock:
            at, total = self._frozen_at, self._frozen_total
        return (at if at is not None else time.monotonic()) - total

    @property
    def frozen_seconds(self) -> float:
        """Time spent frozen so far (all pauses, the current one included)."""
        with self._lock:
            current = time.monotonic() - self._frozen_at if self._frozen_at is not None else 0.0
            return self._frozen_total + current

    # ---- the gate -----------------------------------------------------------------------------
    def pause(self, freeze: bool | None = None) -> bool:
        """Close the gate freezing (``freeze=True``, even when config says park only), parking only
        (``False``) or as configured (``None``). False when the gate was already closed (a
        park-only pause then becomes freezing if asked to)."""
        if self._gate is None:
            raise RuntimeError("this freezer has no gate")
        want = self.enabled if freeze is None else freeze
        self._override = want
        try:
            return self._gate.pause(freeze=want)
        finally:
            self._override = None

    def _on_freeze(self, frozen: bool) -> None:
        if frozen:
            if self.enabled if self._override is None else self._override:
                self.freeze()
        else:
            self.thaw()

    # ---- what runs ----------------------------------------------------------------------------
    @contextmanager
    def command(self, proc: Proc) -> Iterator[None]:
        """``proc`` is a running tool command for the duration (frozen at once if the world is)."""
        with self._lock:
            self._commands.append(proc)
            if self._frozen_at is not None:
                self._stop("command", proc)
        try:
            yield
        finally:
            with self._lock:
                if proc in self._commands:
                    self._commands.remove(proc)

    @contextmanager
    def group(self, pgid: int) -> Iterator[None]:
        """The process group ``pgid`` (a user hook: not a tool command, no job) for the duration:
        frozen and continued with the commands, at once if the world is frozen."""
        with self._lock:
            self._others.add(pgid)
            if self._frozen_at is not None:
                self._stop_group(pgid)
        try:
            yield
        finally:
            with self._lock:
                self._others.discard(pgid)

    def _stop_group(self, pgid: int) -> None:
        groups, pids = stop_sync([pgid], set)
        self._groups |= groups
        self._pids |= pids

    def stop_if_frozen(self, job: AnyJob) -> None:
        """A job that started while the world is frozen is frozen too."""
        with self._lock:
            if self._frozen_at is not None and job.running:
                self._stop("job", job)

    def _stop(self, kind: Kind, item: Proc | AnyJob) -> None:
        from owltui.tools.jobs.entries import EscapedJob, Job

        if isinstance(item, EscapedJob):
            groups, pids = stop_sync([], item._alive)
        else:
            proc = item.proc if isinstance(item, Job) else item
            groups, pids = stop_sync([proc.pgid], lambda: REAPER.tree(proc.token))
        self._groups |= groups
        self._pids |= pids
        self._items.append((kind, item))

    def freeze(self) -> dict[str, int]:
        """Stop every running command and job (idempotent); returns ``frozen()``."""
        with self._lock:
            if self._frozen_at is None:
                self._frozen_at = time.monotonic()
                for proc in list(self._commands):
                    if not proc.done:
                        self._stop("command", proc)
                if self.jobs is not None:
                    for job in self.jobs.running_jobs():
                        self._stop("job", job)
                for pgid in self._others:
                    self._stop_group(pgid)
            return self.frozen()

    def thaw(self) -> float:
        """Continue what ``freeze`` stopped; returns how long it was frozen (0 when it was not)."""
        with self._lock:
            if self._frozen_at is None:
                return 0.0
            cont_sync(self._groups, self._pids)
            seconds = time.monotonic() - self._frozen_at
            self._frozen_total += seconds
            self._frozen_at = None
            self._groups, self._pids, self._items = set(), set(), []
            return seconds

    def frozen(self) -> dict[str, int]:
        """What is frozen now: ``{"commands": n, "jobs": m}`` (jobs include processes listed as
        jobs after they escaped their command); zeros when nothing is."""
        with self._lock:
            commands = sum(1 for kind, item in self._items if kind == "command" and _running(item))
            jobs = sum(1 for kind, item in self._items if kind == "job" and _running(item))
        return {"commands": commands, "jobs": jobs}

    def describe(self) -> str:
        """The banner's words for ``frozen()``: ``"1 command and 2 jobs frozen"``, or ``""``."""
        counts = self.frozen()
        parts = [
            f"{n} {word}{'s' if n != 1 else ''}"
            for word, n in (("command", counts["commands"]), ("job", counts["jobs"]))
            if n
        ]
        return f"{' and '.join(parts)} frozen" if parts else ""

    def close(self) -> None:
        """Continue anything frozen and stop listening to the gate."""
        self.thaw()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.jobs is not None and self.jobs.freezer is self:
            self.jobs.freezer = None
            self.jobs.clock = time.monotonic


def _running(item: object) -> bool:
    if isinstance(item, Proc):
        return not item.done
    return bool(getattr(item, "running", False))
