"""Big command outputs through the bash tool against the command writing to a file.

Each case is a command printing a lot: 1 MB, 100 MB and (with ``--gb``) 1 GB of short lines
(``yes``), and a 200 MB single line. The tool's cost is what the loop pays for a large result: the
``bash`` tool's run (output pumped, sanitised, scrubbed, spilled to a file as it streams), then
``ResultStore.save`` and ``preview`` (the head and tail the model gets). It is measured in a fresh
process per run (after one ``true`` through the tool, so the first call's imports are not counted),
which also reports its peak RSS; the floor is the same command with its output sent
to a file (``sh -c 'cmd > file'``), timed in the same run, interleaved with the tool's runs. The
figure is the ratio of the medians, with the spread of the ratios of each run to the floor timed
beside it.

    python bench/big_output.py [--runs 3] [--gb]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "1 MB short lines": "yes | head -c 1000000",
    "100 MB short lines": "yes | head -c 100000000",
    "200 MB single line": "head -c 200000000 /dev/zero | tr '\\0' x",
}
GB_CASE = ("1 GB short lines", "yes | head -c 1000000000")


def run_tool(command: str, workspace: Path) -> None:
    """One run of the tool's path (in this process): prints seconds, peak RSS and the preview's size."""
    import anyio

    from owltui.agent.cancel import CancelToken
    from owltui.agent.results import ResultStore
    from owltui.agent.services import Services
    from owltui.agent.tool import ToolContext
    from owltui.tools.exec.bash import BashParams, BashTool
    from owltui.tools.jobs.manager import JobManager

    async def main() -> dict[str, float]:
        jobs = JobManager(spill_dir=workspace / "spill")
        ctx = ToolContext(workspace=workspace, cancel=CancelToken(), services=Services(jobs=jobs))
        store = ResultStore(workspace / "results")
        await BashTool().run(BashParams(command="true"), ctx)  # first-call costs (imports) out of the figure
        start = time.perf_counter()
        out = await BashTool().run(BashParams(command=command, timeout=600), ctx)
        ran = time.perf_counter()
        rid, path = store.save(out.content, out.full_output)
        preview = store.preview(rid, path, "bash", lines=out.full_output_lines)
        done = time.perf_counter()
        await jobs.shutdown()
        return {"seconds": done - start, "tool": ran - start, "preview": done - ran, "chars": len(preview)}

    result = anyio.run(main)
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def tool_once(command: str, workspace: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--one", command, "--workspace", str(workspace)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    shutil.rmtree(workspace / "results", ignore_errors=True)
    return result


def floor_once(command: str, workspace: Path) -> float:
    target = workspace / "floor.out"
    start = time.perf_counter()
    subprocess.run(["sh", "-c", f"{command} > {target}"], check=True)
    took = time.perf_counter() - start
    target.unlink()
    return took


def bench(runs: int, cases: dict[str, str]) -> None:
    print(
        f"{'case':<22}{'cmd > file':>12}{'tool':>10}{'ratio':>8}{'spread':>14}{'preview':>10}{'peak RSS':>10}"
    )
    for label, command in cases.items():
        floors: list[float] = []
        tools: list[dict[str, float]] = []
        with tempfile.TemporaryDirectory(prefix="owltui-big-") as tmp:
            workspace = Path(tmp)
            for _ in range(runs):
                floors.append(floor_once(command, workspace))
                tools.append(tool_once(command, workspace))
        floor = statistics.median(floors)
        tool = statistics.median(t["seconds"] for t in tools)
        preview = statistics.median(t["preview"] for t in tools)
        rss = max(t["rss_mb"] for t in tools)
        pairs = sorted(t["seconds"] / f for t, f in zip(tools, floors, strict=True))
        spread = f"{pairs[0]:.2f}-{pairs[-1]:.2f}x"
        print(
            f"{label:<22}{floor:>11.3f}s{tool:>9.3f}s{tool / floor:>7.2f}x{spread:>14}{preview:>9.3f}s"
            f"{rss:>8.0f}MB",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gb", action="store_true", help="also the 1 GB case (several seconds a run)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_tool(args.one, Path(args.workspace))
        return
    cases = dict(CASES)
    if args.gb:
        cases[GB_CASE[0]] = GB_CASE[1]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, median of {args.runs} runs")
    bench(args.runs, cases)


if __name__ == "__main__":
    main()
