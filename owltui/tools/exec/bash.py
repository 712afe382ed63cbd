"""The ``bash`` tool: run a command in the user's shell, wait up to a cap, then hand it to the jobs.

Commands run under the session's sandbox (``ctx.services.sandbox``, a ``SandboxPolicy``; without
one, the default workspace-write policy for the workspace) with their output scrubbed by
``ctx.services.redactor``. A command the sandbox stopped gets a result that says so, with
``details["sandbox_blocked"] = True``. When the host offers ``ctx.services.sandbox_rerun`` (an
``async (call_id, command, reason) -> bool`` that asks the user), a blocked command is re-run once
outside the sandbox if the user agrees; ``run(..., sandboxed=False)`` does that directly. Neither is
a parameter the model can set.

While the pause gate is closed the command is frozen (``ctx.services.freezer``, a ``Freezer``) and
its cap is measured on the freezer's clock, which stands still meanwhile. Processes the command
leaves running (``&``, ``nohup``, ``setsid``) are listed as jobs when it ends (the result names them)
and killed with it when it is cancelled. A result whose output spilled to a file keeps its status
(exit code, "killed after", what is still running) at the end of that file, where the preview shows it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from pydantic import Field

from owltui.agent.services import BackgroundJobs, Sandbox
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.tools.base import Params
from owltui.tools.exec import spawn
from owltui.tools.exec.escapees import Escapee
from owltui.tools.exec.proc import PROGRESS_GAP, Proc, default_spill_dir
from owltui.tools.exec.procfs import read_cmdline
from owltui.tools.exec.reaper import REAPER
from owltui.tools.jobs.entries import EscapedJob, Job, escaped_note
from owltui.tools.jobs.tools import job_result

LAUNCHERS = frozenset({"nohup", "setsid", "env", "nice", "ionice", "stdbuf", "chrt", "taskset"})
EXEC_GRACE = 0.2
log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 90.0
MAX_TIMEOUT = 600.0


class BashParams(Params):
    command: str = Field(description="The shell command to run (via `$SHELL -c`, in the workspace).")
    timeout: float | None = Field(
        None,
        gt=0,
        le=MAX_TIMEOUT,
        description=f"Seconds to wait for the command (default {DEFAULT_TIMEOUT:.0f}, "
        f"max {MAX_TIMEOUT:.0f}). A command still running then continues as a background job.",
    )


_default_policies: dict[Path, SandboxPolicy] = {}


def sandbox_for(ctx: ToolContext) -> Sandbox:
    """The session's sandbox, or the default (workspace-write) one for a host that set none."""
    if ctx.services.sandbox is not None:
        return ctx.services.sandbox
    policy = _default_policies.get(ctx.workspace)
    if policy is None:
        policy = _default_policies[ctx.workspace] = SandboxPolicy("workspace-write", ctx.workspace)
    return policy


def _launching(esc: Escapee, proc: Proc) -> bool:
    """Still a fork of the command's shell, or a launcher (``nohup``, ``setsid``) before its exec?"""
    if esc.command == " ".join(proc.argv):
        return True
    first = esc.command.split(" ", 1)[0]
    return first.rsplit("/", 1)[-1] in LAUNCHERS


async def _let_escapees_exec(proc: Proc, within: float = EXEC_GRACE) -> None:
    """What a command leaves running is often a fork that execs its program a moment after the
    shell ended (``nohup x &``): give it that moment (at most ``within`` s), so the listing names
    the program rather than the shell or the launcher."""
    deadline = time.monotonic() + within
    REAPER.scan_since(proc.ended_at)
    while True:
        pending = [e for e in REAPER.escapees(proc.token) if _launching(e, proc)]
        if not pending or time.monotonic() >= deadline:
            return
        await anyio.sleep(0.005)
        for esc in pending:
            esc.command = read_cmdline(esc.pid)


def _start_is_cheap(sandbox: Sandbox, sandboxed: bool) -> bool:
    """Starting the command costs about a millisecond (the git look reads nothing again and the fork
    server is up, or no sandbox applies: ``Popen`` vforks): it is done on the event loop, sparing two
    thread hand-offs."""
    if not isinstance(sandbox, SandboxPolicy):
        return False
    if not sandboxed or not sandbox.enforced:
        return True
    return sandbox.git_look_cheap() and spawn.SPAWNER.ready  # the one start_shell uses


def _audit_git(proc: Proc) -> list[str]:
    """Git repositories and git configuration the command planted, renamed (see ``GitAudit``)."""
    return proc.sandbox.audit_git() if isinstance(proc.sandbox, SandboxPolicy) else []


async def _audited(proc: Proc) -> list[str]:
    """``_audit_git`` in a worker thread (a walk of the workspace's changed directories), shielded so
    a cancelled call still renames what it planted; on the event loop when nothing there changed
    (``audit_git_now``: the same look, a few ``lstat``s)."""
    if not isinstance(proc.sandbox, SandboxPolicy):
        return []
    if (cheap := proc.sandbox.audit_git_now()) is not None:
        return cheap
    with anyio.CancelScope(shield=True):
        notes = await anyio.to_thread.run_sync(_audit_git, proc)
    return notes


def _audit_job(proc: Proc) -> None:
    for note in _audit_git(proc):
        log.warning("%s", note)


def _finished(
    proc: Proc, jobs: BackgroundJobs | None, planted: list[str], killed_after: float | None = None
) -> ToolOutput:
    """The result of a command that ended (or was killed at its cap: ``killed_after`` seconds);
    ``planted``: what the git metadata look after it renamed (``_audit_git``, in a worker thread)."""
    output = proc.sink.preview()
    code = proc.exit_code
    details: dict[str, object] = {"exit_code": code, "lines": proc.sink.lines, "chars": proc.sink.chars}
    status: list[str] = []  # what must survive a spill: it also goes at the end of the file
    words = [f"exit code {code}"]  # details["status"]: the loop shows it after a spilled preview
    if killed_after is not None:
        words.insert(0, f"killed after {killed_after:g} s")
        status.append(f"[killed after {killed_after:g} s: the command did not finish within its time cap]")
        details["killed_after"] = killed_after
    if code != 0:
        status.append(f"[exit code {code}]")
    note = proc.sandbox_note() if code != 0 else None
    if note:
        status.append(note)
        details["sandbox_blocked"] = True
        details["sandbox_note"] = note
    if planted:
        status += planted
        details["git_quarantined"] = planted
    if jobs is not None:
        entries: list[EscapedJob] = jobs.collect_escaped(proc)
        if entries:
            status.append(escaped_note(entries))
            words.append(f"left running: {', '.join(f'job {e.id} (pid {e.pid})' for e in entries)}")
            details["escaped"] = [{"job_id": e.id, "pid": e.pid, "command": e.command} for e in entries]
    else:
        REAPER.scan()
        left = REAPER.escapees(proc.token)
        if left:
            status.append(escaped_note(left, managed=False))
            words.append(f"left running: {', '.join(f'pid {e.pid}' for e in left)}")
            details["escaped"] = [{"pid": e.pid, "command": e.command} for e in left]
    details["status"] = ", ".join(words)
    if status:
        proc.sink.note_in_file("\n".join(status))
    if code == 0 and not status:
        return ToolOutput(
            output if output.strip() else "(no output)",
            full_output=proc.sink.path,
            full_output_lines=proc.sink.file_lines,
            details=details,
        )
    body = output.rstrip() if output.strip() else "(no output)"
    body += ("\n\n" if output.strip() else "\n") + "\n".join(status)
    if killed_after is not None:
        body = f"The command did not finish within {killed_after:g} s and was killed.\n{body}"
    return ToolOutput(
        body,
        is_error=code != 0 or killed_after is not None,
        full_output=proc.sink.path,
        full_output_lines=proc.sink.file_lines,
        details=details,
    )


class BashTool:
    name = "bash"
    description = (
        "Run a shell command in the workspace and wait for it to finish (up to `timeout` seconds, default "
        "90, max 600), so call it once rather than polling. Output (stdout and stderr) is returned; a "
        "non-zero exit code is an error. A command still running at the timeout keeps running as a "
        "background job: you get its id and the output so far, and you are told when it ends "
        "(job_output waits for it, job_kill stops it)."
    )
    params = BashParams
    read_only = False

    async def run(self, args: BashParams, ctx: ToolContext, *, sandboxed: bool = True) -> ToolOutput:
        """Run the command; ``sandboxed=False`` runs it outside the sandbox (only ever on the user's
        word: the approved re-run of a blocked command)."""
        if not args.command.strip():
            raise ToolError("command is empty")
        started = time.monotonic()
        out = await self._run(args, ctx, sandboxed)
        rerun = ctx.services.sandbox_rerun
        if not (
            sandboxed
            and out.details.get("sandbox_blocked")
            and rerun is not None
            and not ctx.cancel.cancelled
        ):
            return out
        if not await rerun(ctx.call_id, args.command, str(out.details.get("sandbox_note", ""))):
            return out
        timeout = args.timeout or DEFAULT_TIMEOUT
        again = args.model_copy(update={"timeout": max(1.0, timeout - (time.monotonic() - started))})
        if out.full_output is not None:  # only its preview is kept below
            out.full_output.unlink(missing_ok=True)
        second = await self._run(again, ctx, sandboxed=False)
        second.content = (
            f"[The sandbox blocked the command; the user approved one run outside it.]\n"
            f"First run:\n{out.content}\n\nRun outside the sandbox:\n{second.content}"
        )
        second.details["rerun_outside_sandbox"] = True
        return second

    async def _run(self, args: BashParams, ctx: ToolContext, sandboxed: bool) -> ToolOutput:
        jobs, freezer = ctx.services.jobs, ctx.services.freezer
        clock = freezer.clock if freezer is not None else time.monotonic
        cap = args.timeout or DEFAULT_TIMEOUT
        left = ctx.cancel.time_left()
        if left is not None:
            cap = min(cap, left)
        start = functools.partial(
            Proc,
            args.command,
            ctx.workspace,
            jobs.spill_dir if jobs else default_spill_dir(),
            sandbox=sandbox_for(ctx),
            sandboxed=sandboxed,
            scrubber=ctx.services.redactor,
        )
        try:
            if _start_is_cheap(sandbox_for(ctx), sandboxed):
                proc = start()
            else:  # a git look that reads directories, or a fork of OwlTUI: off the event loop
                with anyio.CancelScope(shield=True):  # a process that was started is always owned
                    proc = await anyio.to_thread.run_sync(start)
        except OSError as exc:
            raise ToolError(f"Could not start the shell: {exc}") from exc
        if jobs is not None:
            jobs.watch(proc)
        if isinstance(proc.sandbox, SandboxPolicy):  # what it writes while it runs is never the user's
            proc.sandbox.watch(lambda: not proc.done or bool(REAPER.escapees(proc.token)))
        handed_off = False
        try:
            with freezer.command(proc) if freezer is not None else contextlib.nullcontext():
                async with anyio.create_task_group() as tg:

                    async def watch() -> None:
                        await ctx.cancel.wait()
                        tg.cancel_scope.cancel()

                    tg.start_soon(watch)
                    await self._follow(proc, ctx, clock() + cap, clock)
                    tg.cancel_scope.cancel()
            if proc.done:
                if proc.start_error is not None:  # the fork server's child could not exec the shell
                    raise ToolError(f"Could not start the shell: {proc.start_error}")
                await _let_escapees_exec(proc)
                return _finished(proc, jobs, await _audited(proc))
            if ctx.cancel.cancelled:
                await proc.terminate()
                proc.discard_output()
                planted = "".join(f"\n{n}" for n in await _audited(proc))
                return ToolOutput(
                    f"Cancelled ({ctx.cancel.reason}); the command's processes were killed.\n"
                    + proc.sink.tail(40, 8000)
                    + planted,
                    is_error=True,
                    details={"cancelled": True, "status": "cancelled, its processes were killed"},
                )
            if jobs is None:
                await proc.terminate()
                return _finished(proc, jobs, await _audited(proc), killed_after=cap)
            job: Job = jobs.adopt(proc)
            handed_off = True
            if not proc.add_exit_listener(_audit_job):  # a background job is audited when it ends
                _audit_job(proc)
            header = (
                f"The command is still running after {cap:g} s; it continues as background job {job.id} "
                f'(job_output {{"job_id": "{job.id}"}} waits for it, job_kill stops it).'
            )
            result = await job_result(job, header)
            result.details["background"] = True
            result.details["status"] = f"still running as job {job.id}"
            return result
        except BaseException:
            if not handed_off:
                await proc.terminate()
                proc.discard_output()
            raise
        finally:
            if not handed_off and not proc.done:
                await proc.terminate()

    @staticmethod
    async def _follow(
        proc: Proc, ctx: ToolContext, deadline: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """Stream output to the progress callback until the command ends or the deadline (on
        ``clock``) passes."""
        version = 0
        while True:
            now = clock()
            if proc.done or now >= deadline:
                break
            version = await proc.wait_change(version, deadline - now, min(PROGRESS_GAP, deadline - now))
            text = proc.sink.take_progress()
            if text:
                ctx.progress(text)
        text = proc.sink.take_progress()
        if text:
            ctx.progress(text)
