"""Pause freezes the world (issue 14 item 1, tools side): closing the gate stops (SIGSTOP) the
processes of running commands and jobs — escaped ones included — and suspends their time caps;
opening it continues them with the time they had left. ``pause_freeze = false`` parks only."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.pause import PauseGate
from owltui.agent.tool import ToolContext
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.freeze import Freezer
from owltui.tools.exec.procfs import read_stat
from owltui.tools.jobs.manager import JobManager
from owltui.tools.jobs.tools import JobOutputParams, JobOutputTool
from tests.tools.conftest import MakeCtx, until

pytestmark = pytest.mark.anyio


def state(pid: int) -> str | None:
    st = read_stat(pid)
    return st.state if st is not None else None


@pytest.fixture
def gate() -> PauseGate:
    return PauseGate()


class Shown:
    """What a command has streamed so far (its progress callback)."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self, text: str) -> None:
        self.text += text

    def has_pids(self) -> bool:
        return len(self.text.split()) >= 2

    def pids(self) -> tuple[int, int]:
        """``counter_script``'s first two lines: its shell's pid and the escaped sleep's."""
        shell, escaped = self.text.split()[:2]
        return int(shell), int(escaped)


def frozen_ctx(
    gate: PauseGate, make_ctx: MakeCtx, tmp_path: Path, progress: Shown | None = None, **freezer: Any
) -> tuple[JobManager, Freezer, ToolContext]:
    """A job manager, the freezer that follows ``gate`` over it, and a tool context with both."""
    jobs = JobManager(spill_dir=tmp_path / "spill")
    freezer_ = Freezer(gate, jobs, **freezer)
    ctx = make_ctx(jobs, progress=progress)
    ctx.services = replace(ctx.services, freezer=freezer_)
    return jobs, freezer_, ctx


def counter_script(ws: Path, steps: int, name: str = "count") -> str:
    """A loop that writes its pid, then a counter to a file, ``steps`` times, 20 ms apart."""
    return (
        f"echo $$; setsid sleep 300 & echo $!; i=0; while [ $i -lt {steps} ]; do i=$((i+1)); "
        f"echo $i > {ws / name}; sleep 0.02; done; echo finished"
    )


def count(ws: Path, name: str = "count") -> int:
    try:
        return int((ws / name).read_text() or 0)
    except (OSError, ValueError):
        return 0


async def test_a_running_command_is_stopped_while_paused_and_its_cap_is_extended(
    gate: PauseGate, make_ctx: MakeCtx, ws: Path, tmp_path: Path
) -> None:
    shown = Shown()
    jobs, freezer, ctx = frozen_ctx(gate, make_ctx, tmp_path, shown)
    result = []
    cap, hold = 1.5, 2.0
    # about 1 s of work (50 steps), a 1.5 s cap, a 2 s pause: without the pause clock the command
    # would pass its cap while frozen and come back as a background job
    started = time.monotonic()
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            result.append(await BashTool().run(BashParams(command=counter_script(ws, 50), timeout=cap), ctx))

        tg.start_soon(run)
        await until(lambda: count(ws) >= 3 and shown.has_pids(), what="the loop runs")
        shell, escaped = shown.pids()
        await until(lambda: state(escaped) == "S", what="setsid sleep")
        gate.pause()
        assert freezer.frozen() == {"commands": 1, "jobs": 0}
        assert freezer.describe() == "1 command frozen"
        await until(lambda: state(shell) == "T" and state(escaped) == "T", 1.0, "stopped")
        at_pause = count(ws)
        clock_at_pause = freezer.clock()
        await anyio.sleep(hold)  # the pause itself (what is measured, not a synchronisation)
        assert state(shell) == "T" and state(escaped) == "T"
        assert count(ws) == at_pause  # nothing ran
        assert freezer.clock() - clock_at_pause < 0.01  # caps stood still
        gate.resume()
        assert freezer.frozen() == {"commands": 0, "jobs": 0}
        await until(lambda: state(escaped) == "S", 1.0, "continued")
    took = time.monotonic() - started
    out = result[0]
    assert not out.is_error and "background" not in out.details, out.content
    assert "finished\n" in out.content and count(ws) == 50
    assert "still running in the background as job 1" in out.content  # the setsid sleep
    assert took > hold + 0.5  # it really waited past its cap in wall time
    assert freezer.frozen_seconds >= hold
    await jobs.shutdown()


async def test_a_jobs_wait_is_extended_by_the_pause(
    gate: PauseGate, make_ctx: MakeCtx, ws: Path, tmp_path: Path
) -> None:
    jobs, freezer, ctx = frozen_ctx(gate, make_ctx, tmp_path)
    out = await BashTool().run(BashParams(command=counter_script(ws, 40), timeout=0.2), ctx)
    assert out.details["background"]
    job = jobs.get(out.details["job_id"])
    assert job is not None
    waited = []

    async def wait_for_it() -> None:  # 1.2 s wait for ~0.8 s of work; a 2 s pause in between
        waited.append(await JobOutputTool().run(JobOutputParams(job_id=job.id, wait=1.2), ctx))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait_for_it)
        await until(lambda: count(ws) >= 12, what="the job runs")
        gate.pause()
        assert freezer.frozen() == {"commands": 0, "jobs": 1}
        assert freezer.describe() == "1 job frozen"
        await until(lambda: state(job.pid) == "T", 1.0, "job stopped")
        at_pause = count(ws)
        await anyio.sleep(2.0)  # the pause
        assert count(ws) == at_pause and state(job.pid) == "T"
        gate.resume()
    assert "finished with exit code 0" in waited[0].content, waited[0].content
    assert count(ws) == 40
    await jobs.shutdown()


async def test_escaped_jobs_are_frozen_too(gate: PauseGate, make_ctx: MakeCtx, tmp_path: Path) -> None:
    jobs = JobManager(spill_dir=tmp_path / "spill")
    freezer = Freezer(gate, jobs)
    out = await BashTool().run(BashParams(command="setsid sleep 300 &"), make_ctx(jobs))
    pid = out.details["escaped"][0]["pid"]
    await until(lambda: state(pid) == "S")
    gate.pause()
    assert freezer.frozen() == {"commands": 0, "jobs": 1}
    await until(lambda: state(pid) == "T", 1.0, "stopped")
    gate.resume()
    await until(lambda: state(pid) == "S", 1.0, "continued")
    await jobs.shutdown()


@pytest.mark.parametrize("how", ["config", "override"])
async def test_park_only_leaves_processes_running(
    how: str, gate: PauseGate, make_ctx: MakeCtx, ws: Path, tmp_path: Path
) -> None:
    jobs, freezer, _ctx = frozen_ctx(gate, make_ctx, tmp_path, enabled=how == "override")
    job = await jobs.start(f"while :; do echo x >> {ws / 'ticks'}; sleep 0.01; done", ws)

    def ticks() -> int:
        try:
            return len((ws / "ticks").read_text().split())
        except OSError:
            return 0

    await until(lambda: ticks() > 0)
    if how == "override":
        assert freezer.pause(freeze=False)
    else:
        assert gate.pause()
    assert gate.paused
    clock = freezer.clock()
    seen = ticks()
    await until(lambda: ticks() > seen + 5, 2.0, "it keeps running while paused")
    assert state(job.pid) != "T"
    assert freezer.frozen() == {"commands": 0, "jobs": 0} and freezer.describe() == ""
    assert freezer.clock() > clock  # the caps keep counting
    gate.resume()
    if how == "override":  # the override was for one pause only
        gate.pause()
        await until(lambda: state(job.pid) == "T", 1.0, "frozen the next time")
        gate.resume()
    await jobs.shutdown()


async def test_abort_while_frozen_kills_the_command(
    gate: PauseGate, make_ctx: MakeCtx, ws: Path, tmp_path: Path
) -> None:
    shown = Shown()
    jobs, _freezer, ctx = frozen_ctx(gate, make_ctx, tmp_path, shown)
    result = []

    async def run() -> None:
        result.append(await BashTool().run(BashParams(command=counter_script(ws, 1000)), ctx))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await until(shown.has_pids)
        shell, escaped = shown.pids()
        gate.pause()
        await until(lambda: state(shell) == "T", 1.0, "stopped")
        ctx.cancel.cancel("aborted")
    assert result[0].details["cancelled"]
    assert state(shell) is None and state(escaped) is None  # TERM reached them although stopped
    assert gate.paused  # the abort does not open the gate
    gate.resume()
    await jobs.shutdown()


async def test_a_job_started_while_frozen_is_frozen(gate: PauseGate, ws: Path, tmp_path: Path) -> None:
    jobs = JobManager(spill_dir=tmp_path / "spill")
    freezer = Freezer(gate, jobs)
    gate.pause()
    job = await jobs.start("sleep 300", ws)
    await until(lambda: state(job.pid) == "T", 1.0, "stopped")
    assert freezer.frozen() == {"commands": 0, "jobs": 1}
    freezer.close()  # closing the freezer continues what it stopped
    await until(lambda: state(job.pid) == "S", 1.0, "continued")
    gate.resume()
    await jobs.shutdown()
