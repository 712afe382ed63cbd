"""``grep`` of a common word in a big repository against unsorted ripgrep with the same output cap.

A synthetic git repository of N small Python files (``--sizes``; 10,000 and 100,000 by default) is
made once in a temporary directory; the tool (``GrepTool.run``: the page of the first 100 matches in
path order and the total) is timed against its floor, ``rg -n --stats`` unsorted with the same walk
flags, of which the first 100 lines are kept and the rest is read and dropped (what the least code
giving a page and a total does), and against the old way, ``rg --sort path`` (single-threaded).
Runs alternate; each figure is a median, with the spread of the per-run ratios.

    python bench/grep_cost.py [--runs 7] [--sizes 10000,100000] [--word return]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

WORDS = "alpha beta gamma delta import return value self the data error".split()


def make_repo(root: Path, files: int) -> None:
    rng = random.Random(1)
    per_dir = 100
    for i in range(files):
        d = root / f"d{i // (per_dir * 10)}" / f"s{(i // per_dir) % 10}"
        if i % per_dir == 0:
            d.mkdir(parents=True, exist_ok=True)
        lines = (" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(30))
        (d / f"f{i % per_dir}.py").write_text("\n".join(lines) + "\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def tool_once(root: Path, word: str) -> float:
    import anyio

    from owltui.agent.cancel import CancelToken
    from owltui.agent.services import Services
    from owltui.agent.tool import ToolContext
    from owltui.tools.search.tools import GrepParams, GrepTool

    ctx = ToolContext(workspace=root, cancel=CancelToken(), services=Services())

    async def run() -> float:
        start = time.perf_counter()
        await GrepTool().run(GrepParams(pattern=word), ctx)
        return time.perf_counter() - start

    return anyio.run(run)


def rg_once(root: Path, word: str, *extra: str) -> float:
    from owltui.tools.base import require_rg
    from owltui.tools.search.rg import WALK_FLAGS, run_rg

    kept: list[bytes] = []

    def consume(chunk: bytes) -> bool:
        if len(kept) < 100:
            kept.extend(chunk.split(b"\n")[: 100 - len(kept)])
        return True

    require_rg()
    start = time.perf_counter()
    args = [*WALK_FLAGS, "-n", "--null", "--stats", *extra, "--regexp", word, "--", "./"]
    run_rg(args, root, consume, threading.Event())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--word", default="return")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cpus, median of {args.runs} runs, word {args.word!r}")
    print(f"{'files':>8}{'rg -n':>9}{'tool':>9}{'ratio':>8}{'spread':>13}{'--sort path':>13}{'ratio':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="owltui-grep-") as tmp:
            root = Path(tmp)
            make_repo(root, size)
            rg_once(root, args.word)  # the page cache warm for every contender
            floors, tools, sorts = [], [], []
            for _ in range(args.runs):
                floors.append(rg_once(root, args.word))
                tools.append(tool_once(root, args.word))
                sorts.append(rg_once(root, args.word, "--sort", "path"))
            floor, tool, old = (statistics.median(x) for x in (floors, tools, sorts))
            pairs = sorted(t / f for t, f in zip(tools, floors, strict=True))
            print(
                f"{size:>8}{floor:>8.3f}s{tool:>8.3f}s{tool / floor:>7.2f}x"
                f"{f'{pairs[0]:.2f}-{pairs[-1]:.2f}x':>13}{old:>12.3f}s{old / floor:>7.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
