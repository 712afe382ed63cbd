"""Benchmarks for the bash tool: cancel-to-group-gone latency and peak memory on 100 MB of output.

    python bench/cancel.py [--runs 20]

Targets: median cancel latency under 100 ms; peak RSS under 200 MB while a command prints 100 MB.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.signals import group_alive

BIG_COMMAND = "head -c 100000000 /dev/zero | tr '\\0' 'x' | fold -w 100"


def _members(pgid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        count += int(fields[2]) == pgid and fields[0] not in (b"Z", b"X")
    return count


async def one_cancel(workspace: Path) -> float:
    pids: list[int] = []
    seen = anyio.Event()

    def progress(text: str) -> None:
        if not pids and text.strip():
            pids.append(int(text.split()[0]))
            seen.set()

    ctx = ToolContext(workspace=workspace, cancel=CancelToken(), progress=progress)
    async with anyio.create_task_group() as tg:
        tg.start_soon(BashTool().run, BashParams(command="echo $$; sleep 60 & sleep 60", timeout=None), ctx)
        with anyio.fail_after(10):
            await seen.wait()
            while _members(pids[0]) < 3:  # noqa: ASYNC110 (polling /proc is the only way)
                await anyio.sleep(0.005)
        start = time.perf_counter()
        ctx.cancel.cancel("aborted")  # what the loop does: set the token and cancel the scope
        tg.cancel_scope.cancel()
    while group_alive(pids[0]):
        if time.perf_counter() - start > 5:
            raise RuntimeError("process group survived the cancel")
        await anyio.sleep(0.001)
    return time.perf_counter() - start


async def cancel_bench(runs: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        return [await one_cancel(Path(tmp)) for _ in range(runs)]


def rss_child() -> None:
    """Run in a fresh interpreter: print baseline and peak RSS (KB) and seconds for the big command."""
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    async def run() -> tuple[int, Path | None, int]:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = ToolContext(workspace=Path(tmp), cancel=CancelToken())
            out = await BashTool().run(BashParams(command=BIG_COMMAND, timeout=600), ctx)
            size = out.full_output.stat().st_size if out.full_output else 0
            if out.full_output:
                out.full_output.unlink()
            return len(out.content), out.full_output, size

    start = time.perf_counter()
    content_len, _, size = anyio.run(run)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{base} {peak} {took:.2f} {content_len} {size}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child()
        return
    times = anyio.run(cancel_bench, args.runs)
    ms = sorted(t * 1000 for t in times)
    print(
        f"cancel -> group gone over {len(ms)} runs: median {statistics.median(ms):.1f} ms, "
        f"min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms (target < 100 ms)"
    )
    out = subprocess.run(
        [sys.executable, __file__, "--rss-child"], capture_output=True, text=True, check=True
    ).stdout.split()
    base, peak, took, content_len, size = int(out[0]), int(out[1]), float(out[2]), int(out[3]), int(out[4])
    print(
        f"100 MB through bash: peak RSS {peak / 1024:.1f} MB (baseline {base / 1024:.1f} MB, target < 200 MB), "
        f"{took:.1f} s, spilled file {size / 1e6:.1f} MB, preview {content_len} chars"
    )


if __name__ == "__main__":
    main()
