"""OwlTUI as subreaper (issue 11 item 5): descendants that escape a command (``&``, ``nohup``,
``setsid``) are killed with it on abort, listed as jobs when they outlive a command that finished,
killed at exit, and reaped — without taking the exit status of anyone else's child."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from owltui.tools.exec import reaper as reaper_mod
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.proc import Proc
from owltui.tools.exec.procfs import children, read_stat
from owltui.tools.exec.reaper import REAPER
from owltui.tools.exec.subreaper import become_subreaper
from owltui.tools.jobs.entries import EscapedJob
from owltui.tools.jobs.manager import JobManager
from owltui.tools.jobs.tools import JobKillParams, JobKillTool, JobOutputParams, JobOutputTool
from tests.tools.conftest import Events, MakeCtx
from tests.tools.conftest import until as until_async

pytestmark = pytest.mark.anyio

ESCAPES = {
    "ampersand": "sleep 300 &",
    "nohup": "nohup sleep 300 >/dev/null 2>&1 &",
    "setsid": "setsid sleep 300 &",
}


def gone(pid: int) -> bool:
    """No process and no zombie: it ended and was reaped."""
    return not os.path.exists(f"/proc/{pid}")


def state(pid: int) -> str | None:
    st = read_stat(pid)
    return st.state if st is not None else None


def until(cond: Callable[[], bool], within: float = 5.0, what: str = "condition") -> float:
    """Seconds until ``cond()`` holds; fails after ``within``."""
    start = time.monotonic()
    while not cond():
        assert time.monotonic() - start < within, f"{what} not reached in {within} s"
        time.sleep(0.005)
    return time.monotonic() - start


def my_zombies() -> list[int]:
    return [pid for pid in children(os.getpid()) if state(pid) == "Z"]


@pytest.mark.parametrize("how", list(ESCAPES))
async def test_escaped_process_is_listed_after_the_command_and_killed_at_shutdown(
    how: str, make_ctx: MakeCtx, events: Events, tmp_path: Path
) -> None:
    jobs = JobManager(events, spill_dir=tmp_path / "spill")
    out = await BashTool().run(BashParams(command=f"{ESCAPES[how]} echo started"), make_ctx(jobs))
    assert not out.is_error, out.content
    [entry] = out.details["escaped"]
    pid = entry["pid"]
    assert entry["job_id"] == "1" and state(pid) in ("S", "R")
    assert out.details["status"] == f"exit code 0, left running: job 1 (pid {pid})"
    assert "started\n" in out.content
    assert (
        f"still running in the background as job 1 (pid {pid}: sleep 300); job_kill stops it; "
        "OwlTUI kills it when it exits.]"
    ) in out.content
    await until_async(lambda: jobs.still_running()[0]["command"] == "sleep 300", what="exec")
    assert jobs.still_running() == [{"kind": "escaped", "id": "1", "pid": pid, "command": "sleep 300"}]
    assert not jobs.running  # nothing OwlTUI started itself: print mode would not wait
    [info] = jobs.jobs()
    assert (info.kind, info.pid, info.running) == ("escaped", pid, True)
    assert [(e.kind, e.job_id, e.escaped, e.pid) for e in events.items] == [("started", "1", True, pid)]
    started = time.monotonic()
    await jobs.shutdown()
    took = time.monotonic() - started
    assert gone(pid), f"{pid} is {state(pid)} after shutdown"
    assert took < 1.0
    assert jobs.still_running() == []


async def test_escaped_processes_die_with_an_aborted_command(make_ctx: MakeCtx, tmp_path: Path) -> None:
    jobs = JobManager(spill_dir=tmp_path / "spill")
    pids: list[int] = []
    shown = ""

    def progress(text: str) -> None:
        nonlocal shown
        shown += text
        pids[:] = [int(x) for x in shown.split()]

    ctx = make_ctx(jobs, progress=progress)
    command = (
        "sleep 300 & echo $!; nohup sleep 301 >/dev/null 2>&1 & echo $!; setsid sleep 302 & echo $!; "
        "setsid sh -c 'sleep 303 & echo $!; wait' & sleep 60"
    )
    result = []

    async def run() -> None:
        result.append(await BashTool().run(BashParams(command=command), ctx))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await until_async(lambda: len(pids) == 4, what="four pids")
        await until_async(lambda: all(state(p) in ("S", "R") for p in pids))
        setsid_pid = pids[2]
        await until_async(lambda: getattr(read_stat(setsid_pid), "sid", 0) == setsid_pid, what="setsid")
        started = time.monotonic()
        ctx.cancel.cancel("aborted")
    until(lambda: all(gone(p) for p in pids), 2.0, "escaped processes gone")
    elapsed = time.monotonic() - started  # from the abort to the last one reaped
    assert result[0].details["cancelled"]
    assert elapsed < 1.0, elapsed
    assert jobs.still_running() == []
    await jobs.shutdown()


async def test_tree_of_an_escaped_root_is_killed_with_it(
    make_ctx: MakeCtx, jobs: JobManager, ws: Path
) -> None:
    out = await BashTool().run(
        BashParams(
            command="setsid sh -c 'sleep 300 & echo $! > child; sleep 301' >/dev/null 2>&1 & "
            "while [ ! -s child ]; do sleep 0.01; done"
        ),
        make_ctx(jobs),
    )
    [entry] = out.details["escaped"]
    child = int((ws / "child").read_text())
    assert state(child) in ("S", "R", "D") and state(entry["pid"]) in ("S", "R", "D")  # alive (D: in exec)
    killed = await JobKillTool().run(JobKillParams(job_id=entry["job_id"]), make_ctx(jobs))
    assert f"Killed job {entry['job_id']} (pid {entry['pid']}, exit code 143)" in killed.content
    until(lambda: gone(child) and gone(entry["pid"]), 10.0, "root and child gone")
    again = await JobKillTool().run(JobKillParams(job_id=entry["job_id"]), make_ctx(jobs))
    assert "already finished with exit code 143" in again.content


async def test_escaped_job_ends_with_its_exit_code(
    make_ctx: MakeCtx, jobs: JobManager, events: Events, ws: Path
) -> None:
    gate = ws / "gate"
    out = await BashTool().run(
        BashParams(command=f"setsid sh -c 'while [ ! -e {gate} ]; do sleep 0.02; done; exit 5' &"),
        make_ctx(jobs),
    )
    [entry] = out.details["escaped"]
    job = jobs.get(entry["job_id"])
    assert isinstance(job, EscapedJob)
    waited = await JobOutputTool().run(JobOutputParams(job_id=job.id, wait=0.2), make_ctx(jobs))
    assert "is still running" in waited.content and waited.details["running"]
    gate.touch()
    with anyio.fail_after(5):
        await events.finished.wait()
    done = events.items[-1]
    assert (done.kind, done.job_id, done.exit_code, done.escaped) == ("finished", job.id, 5, True)
    assert gone(entry["pid"])
    result = await JobOutputTool().run(JobOutputParams(job_id=job.id, wait=0), make_ctx(jobs))
    assert "ended with exit code 5" in result.content and not result.details["running"]


async def test_a_job_that_ends_lists_what_it_left_running(
    make_ctx: MakeCtx, jobs: JobManager, events: Events, ws: Path
) -> None:
    gate = ws / "gate"
    out = await BashTool().run(
        BashParams(command=f"setsid sleep 300 & while [ ! -e {gate} ]; do sleep 0.02; done", timeout=0.3),
        make_ctx(jobs),
    )
    assert out.details["background"]
    gate.touch()
    with anyio.fail_after(5):
        await events.finished.wait()
    kinds = [(e.kind, e.job_id, e.escaped) for e in events.items]
    assert kinds == [("started", "1", False), ("finished", "1", False), ("started", "2", True)]
    assert "still running in the background as job 2 (pid" in events.items[1].tail
    [left] = jobs.still_running()
    assert left["kind"] == "escaped" and left["id"] == "2"
    await jobs.shutdown()
    assert gone(left["pid"])  # type: ignore[arg-type]


async def test_still_running_lists_jobs_and_escaped_processes(make_ctx: MakeCtx, jobs: JobManager) -> None:
    await BashTool().run(BashParams(command="setsid sleep 300 &"), make_ctx(jobs))
    await BashTool().run(BashParams(command="sleep 60", timeout=0.1), make_ctx(jobs))
    listed = jobs.still_running()
    assert [(x["kind"], x["id"]) for x in listed] == [("escaped", "1"), ("job", "2")]
    assert listed[1]["command"] == "sleep 60" and isinstance(listed[1]["pid"], int)
    await jobs.kill("1")
    assert [x["id"] for x in jobs.still_running()] == ["2"]
    await BashTool().run(BashParams(command="setsid sleep 300 & setsid sleep 301 &"), make_ctx(jobs))
    assert [x["id"] for x in jobs.still_running()] == ["2", "3", "4"]
    assert await jobs.kill_running(["#3", "4"]) == ["3", "4"]
    assert [x["id"] for x in jobs.still_running()] == ["2"]
    assert await jobs.kill_running() == ["2"]
    assert jobs.still_running() == []


def test_kill_all_at_exit_kills_escaped_processes(ws: Path, tmp_path: Path) -> None:
    manager = JobManager(spill_dir=tmp_path / "spill")

    async def main() -> list[int]:
        job = await manager.start("setsid sleep 300 & echo $!; sleep 300", ws)
        await until_async(lambda: job.proc.sink.chars > 0)
        return [job.proc.pid, int(job.proc.sink.preview().split()[0])]

    pids = anyio.run(main)
    manager.kill_all()
    until(lambda: all(gone(p) for p in pids), 3.0, "all gone")


async def test_without_a_job_manager_escaped_processes_are_named_and_killed_at_exit(
    make_ctx: MakeCtx,
) -> None:
    out = await BashTool().run(BashParams(command="setsid sleep 300 &"), make_ctx())
    [entry] = out.details["escaped"]
    assert "OwlTUI kills it when it exits" in out.content
    assert state(entry["pid"]) in ("S", "R")
    REAPER.kill_all()  # what atexit runs
    until(lambda: gone(entry["pid"]), 2.0, "escaped process gone")


async def test_zombies_of_killed_groups_are_reaped(ws: Path, tmp_path: Path) -> None:
    proc = Proc("for i in 1 2 3; do sleep 300 & echo $!; done; wait", ws, tmp_path)
    await until_async(lambda: len(proc.sink.preview().split()) == 3)
    pids = [int(x) for x in proc.sink.preview().split()]
    await proc.terminate()
    until(lambda: all(gone(p) for p in pids) and gone(proc.pid), 2.0, "no zombies")
    assert not [p for p in my_zombies() if p in pids]


async def test_reaping_never_takes_the_status_of_other_children(make_ctx: MakeCtx, jobs: JobManager) -> None:
    """Popen and asyncio children (in OwlTUI's session or their own) keep their exit codes while the
    reaper scans; a Popen child left unwaited as a zombie is not reaped from under its owner."""
    await BashTool().run(BashParams(command="setsid sleep 300 &"), make_ctx(jobs))  # the reaper is busy
    assert REAPER.escapees()
    _popen_children_keep_their_status()
    for code in range(20):
        done = await anyio.run_process(["sh", "-c", f"exit {code}"], check=False, start_new_session=True)
        assert done.returncode == code


def _popen_children_keep_their_status() -> None:
    held = subprocess.Popen([sys.executable, "-c", "raise SystemExit(9)"], start_new_session=True)
    held_same_session = subprocess.Popen(["sh", "-c", "exit 8"])
    until(lambda: state(held.pid) == "Z" and state(held_same_session.pid) == "Z", 5.0, "zombies")
    for _ in range(10):
        REAPER.scan()
    for code in range(20):
        assert subprocess.run(["sh", "-c", f"exit {code}"], check=False).returncode == code
    assert held.wait() == 9 and held_same_session.wait() == 8


async def test_an_unattributed_setsid_zombie_is_reaped_after_it_lingers(
    monkeypatch: pytest.MonkeyPatch, make_ctx: MakeCtx, ws: Path
) -> None:
    """A setsid orphan without OwlTUI's mark that died before any scan saw it."""
    monkeypatch.setattr(reaper_mod, "LINGER", 0.2)
    out = await BashTool().run(
        BashParams(
            command="(env -u OWLTUI_PROC setsid sh -c 'sleep 0.1; echo $$ > pid' &); "
            "while [ ! -s pid ]; do sleep 0.01; done"
        ),
        make_ctx(),
    )
    assert not out.is_error
    pid = int((ws / "pid").read_text())
    until(lambda: gone(pid), 3.0, "zombie reaped")


async def test_subreaper_is_set(make_ctx: MakeCtx) -> None:
    await BashTool().run(BashParams(command="true"), make_ctx())
    assert become_subreaper()
    # the bit itself is not in /proc; an orphan's new parent shows it (the command's shell still runs)
    out = await BashTool().run(BashParams(command="sh -c 'sleep 300 & echo $!'; true"), make_ctx())
    pid = int(out.content.split()[0])
    assert read_stat(pid).ppid == os.getpid()  # type: ignore[union-attr]
    REAPER.kill_all()
    until(lambda: gone(pid), 2.0)
