"""Background jobs: commands that outlived their ``bash`` call, and the ``job_output``/``job_kill`` tools.

The ``JobManager`` (``ctx.services.jobs``) owns them: it reports ``started``/``finished`` events
to the host (which turns ``finished`` into an aside that wakes an idle agent), lists jobs for the
UI and kills every process group when OwlTUI exits.

It also lists *escaped* processes (``EscapedJob``): descendants that outlived a command that ended
(``sleep 300 &``, ``nohup``, ``setsid``), which OwlTUI adopted as subreaper (``reaper``). They are
jobs with an id, a pid and their command line from /proc; their events carry ``escaped=True``, so
the host neither waits for them (print mode) nor wakes the agent when they end; they are killed
with ``job_kill`` and at exit. ``still_running()`` lists both kinds after an interrupt.

This module owns the ``job_output``/``job_kill`` tools and the results they return; the jobs
themselves live in ``entries`` (importable from here) and the manager in ``manager``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import anyio
from pydantic import Field

from owltui.agent.services import BackgroundJobs
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.tools.base import Params
from owltui.tools.jobs.entries import AnyJob as AnyJob
from owltui.tools.jobs.entries import Clock as Clock
from owltui.tools.jobs.entries import EscapedJob
from owltui.tools.jobs.entries import Job as Job
from owltui.tools.jobs.entries import JobEvent as JobEvent
from owltui.tools.jobs.entries import JobInfo as JobInfo
from owltui.tools.jobs.entries import escaped_note as escaped_note

MAX_WAIT = 600.0
DEFAULT_WAIT = 90.0


def job_manager(ctx: ToolContext) -> BackgroundJobs:
    jobs = ctx.services.jobs
    if jobs is None:
        raise ToolError("Background jobs are not available in this session.")
    return jobs


def _get_job(ctx: ToolContext, job_id: str) -> tuple[BackgroundJobs, AnyJob]:
    jobs = job_manager(ctx)
    job: AnyJob | None = jobs.get(job_id)
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


async def job_result(job: AnyJob, header: str) -> ToolOutput:
    if isinstance(job, EscapedJob):
        return escaped_result(job, header)
    output = job.proc.sink.preview()
    full = None
    if not job.running:  # the spilled output may be large: copied off the event loop
        full = await anyio.to_thread.run_sync(_snapshot, job.proc.sink.path, header)
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
    body = (
        f"{header}\nIt outlived the command that started it, so OwlTUI adopted it; its output "
        "was not captured."
    )
    if job.running:
        body += " job_kill stops it; OwlTUI kills it when it exits."
    status = (
        f"still running as job {job.id} (pid {job.pid})"
        if job.running
        else f"job {job.id} (pid {job.pid}) ended, exit code {job.exit_code}"
    )
    return ToolOutput(
        body,
        details={
            "job_id": job.id,
            "running": job.running,
            "exit_code": job.exit_code,
            "pid": job.pid,
            "escaped": True,
            "status": status,
        },
    )


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
        return await job_result(job, job.status_line())


class JobKillParams(Params):
    job_id: str = Field(description="Id of the background job to stop.")


class JobKillTool:
    name = "job_kill"
    description = (
        "Stop a background job (or a process listed as a job after it outlived its command): "
        "its whole process group and every process it started get TERM, then KILL after 2 s."
    )
    params = JobKillParams
    read_only = False

    async def run(self, args: JobKillParams, ctx: ToolContext) -> ToolOutput:
        jobs, job = _get_job(ctx, args.job_id)
        if not job.running:
            return await job_result(job, f"Job {job.id} had already finished with exit code {job.exit_code}.")
        await jobs.kill(job.id)
        pid = f"pid {job.pid}, " if isinstance(job, EscapedJob) else ""
        return await job_result(job, f"Killed job {job.id} ({pid}exit code {job.exit_code}): {job.command}")
