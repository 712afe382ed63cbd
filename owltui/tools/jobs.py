"""Background jobs: commands that outlived their ``bash`` call, and the ``job_output``/``job_kill`` tools.

The ``JobManager`` (``ctx.services["jobs"]``) owns them: it reports ``started``/``finished`` events
to the host (which turns ``finished`` into an aside that wakes an idle agent), lists jobs for the
UI and kills every process group when OwlTUI exits.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import anyio.from_thread
import anyio.lowlevel
from pydantic import Field

from owltui.agent.events import JobFinished, JobStarted
from owltui.agent.tool import ToolContext, ToolError, ToolOutput

from .base import Params
from .proc import Proc, Scrubber, default_spill_dir, kill_groups_sync
from .sandbox import SandboxPolicy

log = logging.getLogger(__name__)

MAX_WAIT = 600.0
DEFAULT_WAIT = 90.0


@dataclass(frozen=True)
class JobEvent:
    """``started`` when a command becomes a background job; ``finished`` when it ends."""

    kind: Literal["started", "finished"]
    job_id: str
    command: str
    exit_code: int | None = None
    tail: str = ""

    def to_event(self) -> JobStarted | JobFinished:
        """The CONTRACTS section 3 event (``job_started`` / ``job_finished``)."""
        if self.kind == "started":
            return JobStarted(job_id=self.job_id, command=self.command)
        return JobFinished(job_id=self.job_id, command=self.command, exit_code=self.exit_code)

    def aside_text(self) -> str:
        """The aside the host delivers to the agent when the job ends."""
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


class Job:
    def __init__(self, job_id: str, proc: Proc) -> None:
        self.id = job_id
        self.proc = proc
        self.command = proc.command

    @property
    def running(self) -> bool:
        return not self.proc.done

    def info(self) -> JobInfo:
        return JobInfo(self.id, self.command, self.running, self.proc.exit_code, self.proc.started)

    def status_line(self) -> str:
        age = time.time() - self.proc.started
        if self.running:
            return f"Job {self.id} is still running ({age:.0f} s since it started): {self.command}"
        how = " (killed)" if self.proc.killed else ""
        return f"Job {self.id} finished with exit code {self.proc.exit_code}{how}: {self.command}"


class JobManager:
    """Owns background jobs. ``on_event`` is called in the event-loop thread that adopted the job.
    ``sandbox`` and ``scrubber`` apply to the jobs ``start`` starts (``bash`` hands over its own)."""

    def __init__(
        self, on_event: Callable[[JobEvent], None] | None = None, spill_dir: Path | None = None, *,
        sandbox: SandboxPolicy | None = None, scrubber: Scrubber | None = None,
    ) -> None:
        self.on_event = on_event
        self.spill_dir = spill_dir or default_spill_dir()
        self.sandbox = sandbox
        self.scrubber = scrubber
        self._jobs: dict[str, Job] = {}
        self._next = 1
        atexit.register(self.kill_all)

    def _emit(self, event: JobEvent) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception:
            log.exception("job event handler failed")

    def adopt(self, proc: Proc) -> Job:
        """Make a running command a background job (call from the event loop)."""
        job = Job(str(self._next), proc)
        self._next += 1
        self._jobs[job.id] = job
        self._emit(JobEvent("started", job.id, job.command))
        token = anyio.lowlevel.current_token()

        def finished(p: Proc) -> None:  # reader thread
            note = p.sandbox_note()
            tail = f"{p.sink.tail()}\n{note}" if note else p.sink.tail()
            event = JobEvent("finished", job.id, job.command, p.exit_code, tail)
            try:
                anyio.from_thread.run_sync(self._emit, event, token=token)
            except RuntimeError:  # the event loop is gone
                self._emit(event)

        if not proc.add_exit_listener(finished):
            self._emit(JobEvent("finished", job.id, job.command, proc.exit_code, proc.sink.tail()))
        return job

    async def start(self, command: str, cwd: Path, *, sandboxed: bool = True) -> Job:
        """Start ``command`` directly as a background job (sandboxed by ``self.sandbox``, or the
        default workspace-write policy for ``cwd`` when there is none)."""
        sandbox = self.sandbox or SandboxPolicy("workspace-write", cwd)
        return self.adopt(Proc(command, cwd, self.spill_dir, sandbox=sandbox, sandboxed=sandboxed,
                               scrubber=self.scrubber))

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(str(job_id).strip().lstrip("#"))

    def jobs(self) -> list[JobInfo]:
        return [job.info() for job in self._jobs.values()]

    @property
    def running(self) -> bool:
        return any(job.running for job in self._jobs.values())

    async def kill(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job is None:
            raise KeyError(job_id)
        if job.running:
            await job.proc.terminate()
        return job

    async def shutdown(self) -> None:
        """Kill every job's process group (TERM, then KILL after 2 s) and remove their output files."""
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for job in self._jobs.values():
                    tg.start_soon(job.proc.terminate)
        for job in self._jobs.values():
            if job.proc.sink.path is not None:
                with contextlib.suppress(OSError):
                    job.proc.sink.path.unlink()
        atexit.unregister(self.kill_all)

    def kill_all(self) -> None:
        """Synchronous fallback (atexit): kill every job's process group."""
        kill_groups_sync([job.proc.pgid for job in self._jobs.values()])

    def describe(self) -> str:
        if not self._jobs:
            return "There are no background jobs."
        return "Jobs: " + "; ".join(
            f"{j.id} ({'running' if j.running else f'exit {j.proc.exit_code}'})" for j in self._jobs.values()
        )


def job_manager(ctx: ToolContext) -> JobManager:
    jobs = ctx.service("jobs")
    if not isinstance(jobs, JobManager):
        raise ToolError("Background jobs are not available in this session.")
    return jobs


def _get_job(ctx: ToolContext, job_id: str) -> tuple[JobManager, Job]:
    jobs = job_manager(ctx)
    job = jobs.get(job_id)
    if job is None:
        raise ToolError(f"There is no job {job_id!r}. {jobs.describe()}")
    return jobs, job


def _snapshot(path: Path | None) -> Path | None:
    """A copy of a job's output file the loop may take over (the job keeps its own)."""
    if path is None:
        return None
    fd, name = tempfile.mkstemp(prefix="job-", suffix=".log", dir=path.parent)
    with open(fd, "wb") as out, path.open("rb") as src:
        shutil.copyfileobj(src, out)
    return Path(name)


def job_result(job: Job, header: str) -> ToolOutput:
    output = job.proc.sink.preview()
    full = _snapshot(job.proc.sink.path) if not job.running else None
    body = f"{header}\nOutput:\n{output}" if output.strip() else f"{header}\n(no output)"
    if job.running:
        body += "\nYou will be told when it ends; no need to poll."
        if job.proc.sink.path is not None:
            body += f" Full log so far: {job.proc.sink.path}"
    details: dict[str, object] = {"job_id": job.id, "running": job.running, "exit_code": job.proc.exit_code}
    note = job.proc.sandbox_note()
    if note:
        body += f"\n{note}"
        details["sandbox_blocked"] = True
        details["sandbox_note"] = note
    return ToolOutput(body, full_output=full, details=details)


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
        _, job = _get_job(ctx, args.job_id)
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await ctx.cancel.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            await job.proc.wait(args.wait)
            tg.cancel_scope.cancel()
        return job_result(job, job.status_line())


class JobKillParams(Params):
    job_id: str = Field(description="Id of the background job to stop.")


class JobKillTool:
    name = "job_kill"
    description = "Stop a background job: its whole process group gets TERM, then KILL after 2 s."
    params = JobKillParams
    read_only = False

    async def run(self, args: JobKillParams, ctx: ToolContext) -> ToolOutput:
        jobs, job = _get_job(ctx, args.job_id)
        if not job.running:
            return job_result(job, f"Job {job.id} had already finished with exit code {job.proc.exit_code}.")
        await jobs.kill(job.id)
        return job_result(job, f"Killed job {job.id} (exit code {job.proc.exit_code}): {job.command}")
