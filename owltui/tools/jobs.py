"""Background jobs: commands that outlived their ``bash`` call, and the ``job_output``/``job_kill`` tools.

The ``JobManager`` (``ctx.services["jobs"]``) owns them: it reports ``started``/``finished`` events
to the host (which turns ``finished`` into an aside that wakes an idle agent), lists jobs for the
UI and kills every process group when OwlTUI exits.

It also lists *escaped* processes (``EscapedJob``): descendants that outlived a command that ended
(``sleep 300 &``, ``nohup``, ``setsid``), which OwlTUI adopted as subreaper (``reaper``). They are
jobs with an id, a pid and their command line from /proc; their events carry ``escaped=True``, so
the host neither waits for them (print mode) nor wakes the agent when they end; they are killed
with ``job_kill`` and at exit. ``still_running()`` lists both kinds after an interrupt.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.lowlevel
from pydantic import Field

from owltui.agent.events import JobFinished, JobStarted
from owltui.agent.tool import ToolContext, ToolError, ToolOutput

from .base import Params
from .proc import KILL_GRACE, Proc, Scrubber, default_spill_dir
from .reaper import REAPER, Escapee, read_stat
from .sandbox import SandboxPolicy

log = logging.getLogger(__name__)

MAX_WAIT = 600.0
DEFAULT_WAIT = 90.0

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
        """The CONTRACTS section 3 event (``job_started`` / ``job_finished``); for an escaped process
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
        return JobFinished(job_id=self.job_id, command=self.command, exit_code=self.exit_code,
                           **extra)  # type: ignore[arg-type]

    def aside_text(self) -> str:
        """The aside the host delivers to the agent when the job ends."""
        if self.escaped:
            if self.kind == "started":
                return (f"Process {self.pid} outlived its command and is listed as job {self.job_id}: "
                        f"{self.command}")
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
        return JobInfo(self.id, self.command, self.running, self.proc.exit_code, self.proc.started,
                       "job", self.proc.pid)

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
    head = (f"[{len(entries)} process{'es' if many else ''} the command started "
            f"{'are' if many else 'is'} still running")
    them = "them" if many else "it"
    if not managed:
        listed = ", ".join(f"pid {e.pid}: {e.command}" for e in entries)
        return f"{head} ({listed}); OwlTUI kills {them} when it exits.]"
    listed = ", ".join(f"job {e.id} (pid {e.pid}: {e.command})" for e in entries if isinstance(e, EscapedJob))
    return f"{head} in the background as {listed}; job_kill stops {them}; OwlTUI kills {them} when it exits.]"


class JobManager:
    """Owns background jobs. ``on_event`` is called in the event-loop thread that adopted the job.
    ``sandbox`` and ``scrubber`` apply to the jobs ``start`` starts (``bash`` hands over its own).
    ``clock`` measures waits (a ``Freezer`` sets one that stops while processes are frozen)."""

    def __init__(
        self, on_event: Callable[[JobEvent], None] | None = None, spill_dir: Path | None = None, *,
        sandbox: SandboxPolicy | None = None, scrubber: Scrubber | None = None,
    ) -> None:
        self.on_event = on_event
        self.spill_dir = spill_dir or default_spill_dir()
        self.sandbox = sandbox
        self.scrubber = scrubber
        self.clock: Clock = time.monotonic
        self.freezer: Any = None  # the Freezer, when there is one (it stops jobs started while frozen)
        self._jobs: dict[str, AnyJob] = {}
        self._next = 1
        self._procs: dict[str, Proc] = {}  # token -> command run under this manager
        self._settled: set[str] = set()  # tokens of commands whose end was handled
        self._loop_token: object | None = None
        self._loop_thread: int | None = None
        self._closed = False
        self._mail: queue.Queue[tuple[Callable[..., None], tuple[Any, ...]]] = queue.Queue()
        self._courier: threading.Thread | None = None
        self._courier_lock = threading.Lock()
        self._unsubscribe = REAPER.subscribe(self._found, self._ended)
        atexit.register(self.kill_all)

    # ---- threads ------------------------------------------------------------------------------
    def _bind_loop(self) -> None:
        if self._loop_token is None:
            with contextlib.suppress(RuntimeError):
                self._loop_token = anyio.lowlevel.current_token()
                self._loop_thread = threading.get_ident()

    def _in_loop(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn`` in the event-loop thread: directly when already there, else queued for a
        courier thread that hands it over, so the reaper's thread never waits for the loop."""
        if self._loop_token is None or threading.get_ident() == self._loop_thread:
            fn(*args)
            return
        self._mail.put((fn, args))
        with self._courier_lock:
            if self._courier is None or not self._courier.is_alive():
                self._courier = threading.Thread(target=self._deliver, name="owltui-courier", daemon=True)
                self._courier.start()

    def _deliver(self) -> None:
        while True:
            try:
                fn, args = self._mail.get(timeout=1.0)
            except queue.Empty:
                with self._courier_lock:
                    if self._mail.empty():
                        self._courier = None
                        return
                continue
            try:
                anyio.from_thread.run_sync(fn, *args, token=self._loop_token)  # type: ignore[arg-type]
            except RuntimeError:  # the event loop is gone
                with contextlib.suppress(Exception):
                    fn(*args)
            except Exception:
                log.exception("job manager update failed")

    def _emit(self, event: JobEvent) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception:
            log.exception("job event handler failed")

    # ---- commands and jobs --------------------------------------------------------------------
    def watch(self, proc: Proc) -> None:
        """``proc`` runs under this manager: what escapes it is listed here when it ends."""
        self._bind_loop()
        self._procs[proc.token] = proc

    def adopt(self, proc: Proc) -> Job:
        """Make a running command a background job (call from the event loop)."""
        self.watch(proc)
        job = Job(str(self._next), proc)
        self._next += 1
        self._jobs[job.id] = job
        self._emit(JobEvent("started", job.id, job.command, pid=proc.pid))
        token = anyio.lowlevel.current_token()

        def finished(p: Proc) -> None:  # reader thread
            try:
                anyio.from_thread.run_sync(self._job_ended, job, token=token)
            except RuntimeError:  # the event loop is gone
                self._job_ended(job)

        if not proc.add_exit_listener(finished):
            self._job_ended(job)
        return job

    def _job_ended(self, job: Job) -> None:
        p = job.proc
        escaped, fresh = self._collect(p)
        note = p.sandbox_note()
        tail = f"{p.sink.tail()}\n{note}" if note else p.sink.tail()
        if escaped:
            tail = f"{tail}\n{escaped_note(escaped)}".strip("\n")
        self._emit(JobEvent("finished", job.id, job.command, p.exit_code, tail, pid=p.pid))
        self._announce(fresh)

    async def start(self, command: str, cwd: Path, *, sandboxed: bool = True) -> Job:
        """Start ``command`` directly as a background job (sandboxed by ``self.sandbox``, or the
        default workspace-write policy for ``cwd`` when there is none)."""
        sandbox = self.sandbox or SandboxPolicy("workspace-write", cwd)
        job = self.adopt(Proc(command, cwd, self.spill_dir, sandbox=sandbox, sandboxed=sandboxed,
                              scrubber=self.scrubber))
        if self.freezer is not None:
            self.freezer.stop_if_frozen(job)
        return job

    # ---- escaped processes --------------------------------------------------------------------
    def collect_escaped(self, proc: Proc) -> list[EscapedJob]:
        """After ``proc`` ended: list (as jobs) the processes it left running and announce the new
        ones; returns their entries, new or listed already (call from the event loop)."""
        entries, fresh = self._collect(proc)
        self._announce(fresh)
        return entries

    def _collect(self, proc: Proc) -> tuple[list[EscapedJob], list[EscapedJob]]:
        self.watch(proc)
        REAPER.scan()  # what it finds is taken below (not announced by ``_found``: not settled yet)
        self._settled.add(proc.token)
        entries: list[EscapedJob] = []
        fresh: list[EscapedJob] = []
        for esc in REAPER.escapees(proc.token):
            entry, new = self._entry_for(esc)
            if entry is not None:
                entries.append(entry)
                if new:
                    fresh.append(entry)
        return entries, fresh

    def _entry_for(self, esc: Escapee) -> tuple[EscapedJob | None, bool]:
        for job in self._jobs.values():
            if isinstance(job, EscapedJob) and job.pid == esc.pid and job.start == esc.start:
                return job, False
        if self._closed or esc.ended:
            return None, False
        entry = EscapedJob(str(self._next), esc)
        self._next += 1
        self._jobs[entry.id] = entry
        return entry, True

    def _announce(self, entries: list[EscapedJob]) -> None:
        for entry in entries:
            self._emit(JobEvent("started", entry.id, entry.command, escaped=True, pid=entry.pid))

    def _found(self, esc: Escapee) -> None:  # any thread
        if esc.token in self._settled:  # until its command's end is handled it is part of the command
            self._in_loop(self._found_late, esc)

    def _found_late(self, esc: Escapee) -> None:
        entry, new = self._entry_for(esc)
        if entry is not None and new:
            self._announce([entry])

    def _ended(self, esc: Escapee) -> None:  # any thread
        if esc.token in self._procs:
            self._in_loop(self._escaped_ended, esc)

    def _escaped_ended(self, esc: Escapee) -> None:
        for entry in self._jobs.values():
            if isinstance(entry, EscapedJob) and entry.pid == esc.pid and entry.start == esc.start:
                if entry.running:
                    entry.mark_ended(esc.exit_code)
                    self._emit(JobEvent("finished", entry.id, entry.command, esc.exit_code,
                                        escaped=True, pid=entry.pid))
                return

    # ---- queries ------------------------------------------------------------------------------
    def get(self, job_id: str) -> AnyJob | None:
        return self._jobs.get(str(job_id).strip().lstrip("#"))

    def jobs(self) -> list[JobInfo]:
        return [job.info() for job in self._jobs.values()]

    @property
    def running(self) -> bool:
        """A job OwlTUI started is running (escaped processes do not count: nobody waits for them)."""
        return any(job.running for job in self._jobs.values() if isinstance(job, Job))

    def running_jobs(self) -> list[AnyJob]:
        return [job for job in self._jobs.values() if job.running]

    def still_running(self) -> list[dict[str, object]]:
        """What is still running (after an interrupt, for the notice that offers to kill or keep
        it): ``{kind: "job"|"escaped", id, pid, command}`` per job, in id order."""
        return [{"kind": job.kind, "id": job.id, "pid": job.pid, "command": job.command}
                for job in self.running_jobs()]

    # ---- killing ------------------------------------------------------------------------------
    async def kill(self, job_id: str) -> AnyJob:
        job = self.get(job_id)
        if job is None:
            raise KeyError(job_id)
        if job.running:
            await job.terminate()
        return job

    async def kill_running(self, ids: Iterable[str] | None = None) -> list[str]:
        """Kill the running jobs named by ``ids`` (all of them when None) at once — the interrupt
        notice's "kill" key; returns the ids killed."""
        wanted = None if ids is None else {str(i).strip().lstrip("#") for i in ids}
        targets = [j for j in self.running_jobs() if wanted is None or j.id in wanted]
        async with anyio.create_task_group() as tg:
            for job in targets:
                tg.start_soon(job.terminate)
        return [j.id for j in targets]

    def _everything(self) -> tuple[list[int], Callable[[], set[int]]]:
        """The groups of running jobs and a collector of every other process of ours: the trees of
        the jobs, escaped entries, and anything else that escaped a command run under this manager."""
        jobs = [j for j in self._jobs.values() if isinstance(j, Job) and j.running]
        escaped = [j for j in self._jobs.values() if isinstance(j, EscapedJob) and j.running]
        tokens = set(self._procs)

        def collect() -> set[int]:
            pids: set[int] = set()
            for job in jobs:
                pids |= REAPER.tree(job.proc.token)
            for entry in escaped:
                pids |= entry._alive()
            pids |= {e.pid for e in REAPER.escapees() if e.token in tokens}
            return pids

        return [j.proc.pgid for j in jobs], collect

    async def shutdown(self) -> None:
        """Kill every job's process group and every escaped process (TERM, then KILL after 2 s)
        and remove their output files."""
        with anyio.CancelScope(shield=True):
            for job in self._jobs.values():
                if isinstance(job, Job) and job.running:
                    job.proc.killed = True
            pgids, collect = self._everything()
            await anyio.to_thread.run_sync(REAPER.terminate_sync, pgids, collect)
            for job in self._jobs.values():
                if isinstance(job, Job):
                    await job.proc.wait(1.0)
        self._closed = True
        for job in self._jobs.values():
            if isinstance(job, Job) and job.proc.sink.path is not None:
                with contextlib.suppress(OSError):
                    job.proc.sink.path.unlink()
        self._unsubscribe()
        atexit.unregister(self.kill_all)

    def kill_all(self) -> None:
        """Synchronous fallback (atexit): kill every job's process group and escaped process."""
        pgids, collect = self._everything()
        REAPER.terminate_sync(pgids, collect)

    def describe(self) -> str:
        if not self._jobs:
            return "There are no background jobs."

        def state(j: AnyJob) -> str:
            if j.running:
                return "running" if j.kind == "job" else f"running, pid {j.pid}, escaped"
            return f"exit {j.exit_code}"

        return "Jobs: " + "; ".join(f"{j.id} ({state(j)})" for j in self._jobs.values())


def job_manager(ctx: ToolContext) -> JobManager:
    jobs = ctx.service("jobs")
    if not isinstance(jobs, JobManager):
        raise ToolError("Background jobs are not available in this session.")
    return jobs


def _get_job(ctx: ToolContext, job_id: str) -> tuple[JobManager, AnyJob]:
    jobs = job_manager(ctx)
    job = jobs.get(job_id)
    if job is None:
        raise ToolError(f"There is no job {job_id!r}. {jobs.describe()}")
    return jobs, job


def _snapshot(path: Path | None, trailer: str = "") -> Path | None:
    """A copy of a job's output file the loop may take over (the job keeps its own), with
    ``trailer`` (the job's status) on a line of its own at the end: the loop shows the file's head
    and tail in place of the result's text."""
    if path is None:
        return None
    fd, name = tempfile.mkstemp(prefix="job-", suffix=".log", dir=path.parent)
    with open(fd, "wb") as out, path.open("rb") as src:
        shutil.copyfileobj(src, out)
        if trailer:
            out.flush()
            end = b""
            if out.tell():
                src.seek(-1, 2)
                end = src.read(1)
            out.write((("" if end in (b"", b"\n") else "\n") + f"\n[{trailer}]\n").encode())
    return Path(name)


def job_result(job: AnyJob, header: str) -> ToolOutput:
    if isinstance(job, EscapedJob):
        return escaped_result(job, header)
    output = job.proc.sink.preview()
    full = _snapshot(job.proc.sink.path, header) if not job.running else None
    body = f"{header}\nOutput:\n{output}" if output.strip() else f"{header}\n(no output)"
    if job.running:
        body += "\nYou will be told when it ends; no need to poll."
        if job.proc.sink.path is not None:
            body += f" Full log so far: {job.proc.sink.path}"
    details: dict[str, object] = {"job_id": job.id, "running": job.running, "exit_code": job.proc.exit_code}
    if job.running:
        details["status"] = f"still running as job {job.id}"
    else:
        how = ", killed" if job.proc.killed else ""
        details["status"] = f"job {job.id} finished, exit code {job.proc.exit_code}{how}"
    note = job.proc.sandbox_note()
    if note:
        body += f"\n{note}"
        details["sandbox_blocked"] = True
        details["sandbox_note"] = note
    return ToolOutput(body, full_output=full, details=details)


def escaped_result(job: EscapedJob, header: str) -> ToolOutput:
    body = (f"{header}\nIt outlived the command that started it, so OwlTUI adopted it; its output "
            "was not captured.")
    if job.running:
        body += " job_kill stops it; OwlTUI kills it when it exits."
    status = (f"still running as job {job.id} (pid {job.pid})" if job.running
              else f"job {job.id} (pid {job.pid}) ended, exit code {job.exit_code}")
    return ToolOutput(body, details={"job_id": job.id, "running": job.running, "exit_code": job.exit_code,
                                     "pid": job.pid, "escaped": True, "status": status})


class JobOutputParams(Params):
    job_id: str = Field(description="Id of the background job, as given when the job started.")
    wait: float = Field(
        DEFAULT_WAIT,
        ge=0,
        le=MAX_WAIT,
        description=f"Seconds to wait for the job to finish before answering (default {DEFAULT_WAIT:.0f}, "
        f"max {MAX_WAIT:.0f}); 0 answers at once.",
    )


class JobOutputTool:
    name = "job_output"
    description = (
        "Wait for a background job to finish (up to `wait` seconds, default 90) and return its exit code "
        "and output. It waits, so call it once rather than polling; if the job is still running when the "
        "wait ends you get the output so far. You are told when a job ends anyway."
    )
    params = JobOutputParams
    read_only = True

    async def run(self, args: JobOutputParams, ctx: ToolContext) -> ToolOutput:
        jobs, job = _get_job(ctx, args.job_id)
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await ctx.cancel.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            await job.wait(args.wait, jobs.clock)
            tg.cancel_scope.cancel()
        return job_result(job, job.status_line())


class JobKillParams(Params):
    job_id: str = Field(description="Id of the background job to stop.")


class JobKillTool:
    name = "job_kill"
    description = ("Stop a background job (or a process listed as a job after it outlived its command): "
                   "its whole process group and every process it started get TERM, then KILL after 2 s.")
    params = JobKillParams
    read_only = False

    async def run(self, args: JobKillParams, ctx: ToolContext) -> ToolOutput:
        jobs, job = _get_job(ctx, args.job_id)
        if not job.running:
            return job_result(job, f"Job {job.id} had already finished with exit code {job.exit_code}.")
        await jobs.kill(job.id)
        pid = f"pid {job.pid}, " if isinstance(job, EscapedJob) else ""
        return job_result(job, f"Killed job {job.id} ({pid}exit code {job.exit_code}): {job.command}")
