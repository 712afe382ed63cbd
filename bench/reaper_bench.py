"""Escaped processes and pause freezing with real processes (issues 11 item 5, 14 item 1).

- abort: a command that started ``sleep &``, ``nohup sleep &``, ``setsid sleep &`` and a ``setsid``
  shell with a child is cancelled; time from the cancel to every one of them gone *and reaped*
  (no /proc entry left);
- listing: time from the end of ``setsid sleep 300 &`` to its result naming the escaped job;
- shutdown: ``JobManager.shutdown`` with N escaped jobs;
- freeze: a command with N processes (half escaped with setsid) — gate closed → all in state T,
  gate opened → none in T;
- watching cost: one ``REAPER.scan()`` while commands run, and the CPU the process uses (all
  threads) while a 3 s command runs, against the same wait with nothing running.

    python bench/reaper_bench.py [--runs 20] [--procs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from owltui.agent.cancel import CancelToken
from owltui.agent.pause import PauseGate
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.freeze import Freezer
from owltui.tools.exec.procfs import read_stat
from owltui.tools.exec.reaper import REAPER
from owltui.tools.jobs.manager import JobManager


def gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}")


def state(pid: int) -> str | None:
    st = read_stat(pid)
    return st.state if st is not None else None


async def until(cond: Callable[[], bool], within: float = 10.0) -> float:
    start = time.monotonic()
    with anyio.fail_after(within):
        while not cond():  # noqa: ASYNC110
            await anyio.sleep(0.001)
    return time.monotonic() - start


def fmt(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1000:.1f} ms, max {max(xs) * 1000:.1f} ms (n={len(xs)})"


async def abort_once(ws: Path, jobs: JobManager) -> float:
    shown = ""

    def progress(text: str) -> None:
        nonlocal shown
        shown += text

    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(jobs=jobs), progress=progress)
    command = (
        "sleep 300 & echo $!; nohup sleep 301 >/dev/null 2>&1 & echo $!; setsid sleep 302 & echo $!; "
        "setsid sh -c 'sleep 303 & echo $!; wait' & sleep 60"
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(BashTool().run, BashParams(command=command), ctx)
        await until(lambda: len(shown.split()) == 4)
        pids = [int(x) for x in shown.split()]
        await until(lambda: getattr(read_stat(pids[2]), "sid", 0) == pids[2])
        started = time.monotonic()
        ctx.cancel.cancel("aborted")
    await until(lambda: all(gone(p) for p in pids))
    return time.monotonic() - started


async def listing_once(ws: Path, jobs: JobManager) -> float:
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(jobs=jobs))
    started = time.monotonic()
    out = await BashTool().run(BashParams(command="setsid sleep 300 & exit 0"), ctx)
    took = time.monotonic() - started
    assert out.details.get("escaped"), out.content
    return took


async def main(runs: int, procs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        jobs = JobManager(spill_dir=ws / ".spill")
        aborts = [await abort_once(ws, jobs) for _ in range(runs)]
        print(f"abort → 4 escaped processes (&, nohup, setsid, setsid tree) killed and reaped: {fmt(aborts)}")
        base = []
        for _ in range(runs):
            started = time.monotonic()
            await BashTool().run(
                BashParams(command="exit 0"),
                ToolContext(workspace=ws, cancel=CancelToken(), services=Services(jobs=jobs)),
            )
            base.append(time.monotonic() - started)
        listings = [await listing_once(ws, jobs) for _ in range(runs)]
        print(
            f"bash 'setsid sleep 300 & exit 0' with the escaped job named: {fmt(listings)} "
            f"(bash 'exit 0': {fmt(base)})"
        )
        started = time.monotonic()
        await jobs.shutdown()
        print(f"shutdown with {runs} escaped jobs: {(time.monotonic() - started) * 1000:.1f} ms")

        gate = PauseGate()
        jobs = JobManager(spill_dir=ws / ".spill")
        freezer = Freezer(gate, jobs)  # listens to the gate
        half = procs // 2
        command = " ".join(["sleep 300 &"] * half + ["setsid sleep 300 &"] * (procs - half) + ["wait"])
        job = await jobs.start(command, ws)
        await until(lambda: len(REAPER.tree(job.proc.token)) >= procs)
        pids = sorted(REAPER.tree(job.proc.token) | {job.pid})
        await until(lambda: all(state(p) == "S" for p in pids))
        pauses, resumes = [], []
        for _ in range(runs):
            started = time.monotonic()
            gate.pause()
            await until(lambda: all(state(p) == "T" for p in pids))
            pauses.append(time.monotonic() - started)
            started = time.monotonic()
            gate.resume()
            await until(lambda: not any(state(p) == "T" for p in pids))
            resumes.append(time.monotonic() - started)
        print(f"freeze {len(pids)} processes (gate.pause → all in T): {fmt(pauses)}; thaw: {fmt(resumes)}")
        scans = []
        for _ in range(runs * 5):
            started = time.perf_counter()
            REAPER.scan()
            scans.append(time.perf_counter() - started)
        print(f"REAPER.scan() with a running job of {len(pids)} processes: {fmt(scans)}")
        await jobs.shutdown()
        freezer.close()

        def cpu() -> float:
            t = os.times()
            return t.user + t.system

        c0, w0 = cpu(), time.monotonic()
        await anyio.sleep(3)
        idle = (cpu() - c0) / (time.monotonic() - w0)
        c0, w0 = cpu(), time.monotonic()
        await BashTool().run(BashParams(command="sleep 3"), ToolContext(workspace=ws, cancel=CancelToken()))
        busy = (cpu() - c0) / (time.monotonic() - w0)
        print(
            f"CPU of OwlTUI's process while a 3 s command runs: {busy * 100:.2f} % of a core "
            f"(idle wait: {idle * 100:.2f} %)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--procs", type=int, default=20)
    args = parser.parse_args()
    anyio.run(main, args.runs, args.procs)
