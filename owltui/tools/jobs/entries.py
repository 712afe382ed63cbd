"""What a background job is: ``Job`` (a command that outlived its ``bash`` call, output captured),
``EscapedJob`` (a process that outlived the command that started it, adopted by the ``reaper``),
the ``JobInfo`` the UI lists, the ``JobEvent`` the host hears, and ``escaped_note``, the sentence a
result carries about escaped processes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import anyio

from owltui.agent.events import JobFinished, JobStarted
from owltui.tools.exec.escapees import Escapee
from owltui.tools.exec.proc import KILL_GRACE, Proc
from owltui.tools.exec.procfs import read_stat
from owltui.tools.exec.reaper import REAPER

Clock = Callable[[], float]


@dataclass(frozen=True)
class JobEvent:
    """``started`` when a command becomes a background job (or an escaped process is listed);
    ``finished`` when it ends."""

    kind: Literal["started", "finished"]
    job_id: str
    command: str
    exit_code: int | None = None
    tail: str = ""
    escaped: bool = False  # an escaped process: not waited for, no aside to the agent
    pid: int | None = None

    def to_event(self) -> JobStarted | JobFinished:
        """The contract event (``job_started`` / ``job_finished``); for an escaped process
        ``escaped`` and ``pid`` go along once the event types have those fields."""
        cls: type[JobStarted] | type[JobFinished] = JobStarted if self.kind == "started" else JobFinished
        extra: dict[str, object] = {}
        if self.escaped:
            if "escaped" in cls.model_fields:
                extra["escaped"] = True
            if "pid" in cls.model_fields and self.pid is not None:
                extra["pid"] = self.pid
        if self.kind == "started":
            return JobStarted(job_id=self.job_id, command=self.command, **extra)  # type: ignore[arg-type]
        return JobFinished(job_id=self.job_id, command=self.command, exit_code=self.exit_code, **extra)  # type: ignore[arg-type]

    def aside_text(self) -> str:
        """The aside the host delivers to the agent when the job ends."""
        if self.escaped:
            if self.kind == "started":
                return (
                    f"Process {self.pid} outlived its command and is listed as job {self.job_id}: "
                    f"{self.command}"
                )
            return f"Job {self.job_id} (pid {self.pid}) ended, exit code {self.exit_code}: {self.command}"
        if self.kind == "started":
            return f"Background job {self.job_id} started: {self.command}"
        tail = f" Last lines:\n{self.tail}" if self.tail.strip() else " It printed nothing."
        return f"Background job {self.job_id} finished, exit code {self.exit_code}: {self.command}.{tail}"


@dataclass(frozen=True)
class JobInfo:
    id: str
    command: str
    running: bool
    exit_code: int | None
    started: float  # time.time()
    kind: Literal["job", "escaped"] = "job"
    pid: int | None = None


class Job:
    kind: Literal["job"] = "job"

    def __init__(self, job_id: str, proc: Proc) -> None:
        self.id = job_id
        self.proc = proc
        self.command = proc.command
        self.pid = proc.pid

    @property
    def running(self) -> bool:
        return not self.proc.done

    @property
    def exit_code(self) -> int | None:
        return self.proc.exit_code

    def info(self) -> JobInfo:
        return JobInfo(
            self.id, self.command, self.running, self.proc.exit_code, self.proc.started, "job", self.proc.pid
        )

    def status_line(self) -> str:
        age = time.time() - self.proc.started
        if self.running:
            return f"Job {self.id} is still running ({age:.0f} s since it started): {self.command}"
        how = " (killed)" if self.proc.killed else ""
        return f"Job {self.id} finished with exit code {self.proc.exit_code}{how}: {self.command}"

    async def wait(self, within: float | None, clock: Clock = time.monotonic) -> bool:
        return await self.proc.wait(within, clock)

    async def terminate(self) -> None:
        await self.proc.terminate()


class EscapedJob:
    """A process that outlived the command that started it (OwlTUI adopted it as subreaper). Its
    output is not captured (the command's pipe closed with the command)."""

    kind: Literal["escaped"] = "escaped"

    def __init__(self, job_id: str, esc: Escapee) -> None:
        self.id = job_id
        self.pid = esc.pid
        self.start = esc.start
        self._esc = esc
        self.origin = esc.origin_command
        self.started = esc.found
        self.exit_code: int | None = None
        self.killed = False
        self._ended = anyio.Event()

    @property
    def running(self) -> bool:
        return not self._ended.is_set()

    @property
    def command(self) -> str:
        """Its command line (from /proc, refreshed while it runs)."""
        return self._esc.command

    def info(self) -> JobInfo:
        return JobInfo(self.id, self.command, self.running, self.exit_code, self.started, "escaped", self.pid)

    def mark_ended(self, code: int | None) -> None:
        self.exit_code = code
        self._ended.set()

    def status_line(self) -> str:
        what = f"Job {self.id} (pid {self.pid}, left running by `{self.origin}`)"
        if self.running:
            return f"{what} is still running: {self.command}"
        how = " (killed)" if self.killed else ""
        code = "an unknown exit code" if self.exit_code is None else f"exit code {self.exit_code}"
        return f"{what} ended with {code}{how}: {self.command}"

    def _alive(self) -> set[int]:
        st = read_stat(self.pid)
        return {self.pid} if st is not None and st.alive and st.start == self.start else set()

    async def wait(self, within: float | None, clock: Clock = time.monotonic) -> bool:
        deadline = None if within is None else clock() + within
        while self.running:
            left = 0.25 if deadline is None else deadline - clock()
            if left <= 0:
                break
            with anyio.move_on_after(min(left, 0.25)):
                await self._ended.wait()
        return not self.running

    def terminate_sync(self, grace: float = KILL_GRACE) -> float:
        self.killed = True
        return REAPER.terminate_sync([], self._alive, grace)

    async def terminate(self) -> None:
        with anyio.CancelScope(shield=True):
            self.killed = True
            await anyio.to_thread.run_sync(self.terminate_sync)
            await self.wait(1.0)


AnyJob = Job | EscapedJob


def escaped_note(entries: Sequence[EscapedJob | Escapee], managed: bool = True) -> str:
    """The sentence a result carries about processes its command left running (``managed``: listed
    as jobs; else only killed when OwlTUI exits)."""
    if not entries:
        return ""
    many = len(entries) > 1
    head = (
        f"[{len(entries)} process{'es' if many else ''} the command started "
        f"{'are' if many else 'is'} still running"
    )
    them = "them" if many else "it"
    if not managed:
        listed = ", ".join(f"pid {e.pid}: {e.command}" for e in entries)
        return f"{head} ({listed}); OwlTUI kills {them} when it exits.]"
    listed = ", ".join(f"job {e.id} (pid {e.pid}: {e.command})" for e in entries if isinstance(e, EscapedJob))
    return f"{head} in the background as {listed}; job_kill stops {them}; OwlTUI kills {them} when it exits.]"
