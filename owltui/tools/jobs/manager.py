"""The ``JobManager`` (``ctx.services.jobs``): adopts commands as background jobs and lists the
processes that escaped them, reports ``started``/``finished`` events in the event-loop thread, and
kills every job and escaped process (on request, after an interrupt, at exit)."""

from __future__ import annotations

import atexit
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from owltui.agent.services import Scrubber
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.tools.exec.escapees import Escapee
from owltui.tools.exec.proc import Proc, default_spill_dir
from owltui.tools.exec.procfs import read_stat
from owltui.tools.exec.reaper import REAPER
from owltui.tools.jobs.entries import AnyJob, Clock, EscapedJob, Job, JobEvent, JobInfo, escaped_note

log = logging.getLogger(__name__)


class JobManager:
    """Owns background jobs. ``on_event`` is called in the event-loop thread that adopted the job.
    ``sandbox`` and ``scrubber`` apply to the jobs ``start`` starts (``bash`` hands over its own).
    ``clock`` measures waits (a ``Freezer`` sets one that stops while processes are frozen)."""

    def __init__(
        self,
        on_event: Callable[[JobEvent], None] | None = None,
        spill_dir: Path | None = None,
        *,
        sandbox: SandboxPolicy | None = None,
        scrubber: Scrubber | None = None,
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
        job = self.adopt(
            Proc(command, cwd, self.spill_dir, sandbox=sandbox, sandboxed=sandboxed, scrubber=self.scrubber)
        )
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
        # what it finds is taken below (not announced by ``_found``: not settled yet); a scan since
        # the command's end (the bash tool's, a moment ago) has seen it all
        REAPER.scan_since(proc.ended_at if proc.done else None)
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

    def _listed(self, esc: Escapee) -> EscapedJob | None:
        """The entry of ``esc`` (same pid and start time), if it is listed already."""
        return next(
            (
                job
                for job in self._jobs.values()
                if isinstance(job, EscapedJob) and job.pid == esc.pid and job.start == esc.start
            ),
            None,
        )

    def _entry_for(self, esc: Escapee) -> tuple[EscapedJob | None, bool]:
        listed = self._listed(esc)
        if listed is not None:
            return listed, False
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
        entry = self._listed(esc)
        if entry is not None and entry.running:
            entry.mark_ended(esc.exit_code)
            self._emit(
                JobEvent("finished", entry.id, entry.command, esc.exit_code, escaped=True, pid=entry.pid)
            )

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
        return [
            {"kind": job.kind, "id": job.id, "pid": job.pid, "command": job.command}
            for job in self.running_jobs()
        ]

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
                elif job.running and not _same_process_alive(job.pid, job.start):
                    job.mark_ended(None)  # killed just now; the reaper's own notice may come later
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


def _same_process_alive(pid: int, start: int) -> bool:
    """Whether ``pid`` is still the process that started at ``start`` (not a reused pid) and alive."""
    st = read_stat(pid)
    return st is not None and st.alive and st.start == start
