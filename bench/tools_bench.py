"""grep, find and read against ripgrep and head as the floor.

A generated git tree of 5,000 files (Python-like text, nested .gitignore, an ignored vendor directory
of 500 more files) and one file of a single 200 MB line (and one of 300 MB). Each operation is
timed as the median of several runs of the tool's ``run`` inside one event loop; the floor is the
same work done by the ``rg`` or ``head`` process (its start included, since the tool starts one
too). grep asks rg for output sorted by path (a stable answer; rg then searches on one thread), so
its second floor is ``rg --sort path``. read's peak RSS is measured in a fresh process, next to the RSS of a process that only
imports the tool.

    python bench/tools_bench.py [--files 5000] [--read-mb 200 300] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import anyio

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext
from owltui.tools.base import rg_path
from owltui.tools.search.tools import FindParams, FindTool, GrepParams, GrepTool

WORDS = "status value request response handler config model view queue token client server".split()


def make_tree(root: Path, files: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("vendor/\n*.pyc\nbuild/\n")
    dirs = [root / f"pkg{i:02d}" / f"mod{j:02d}" for i in range(25) for j in range(8)]
    for d in dirs:
        d.mkdir(parents=True)
        (d / ".gitignore").write_text("*.tmp\n")
    for n in range(files):
        d = dirs[n % len(dirs)]
        ext = ".py" if n % 3 else rng.choice([".txt", ".md", ".js"])
        lines = []
        for k in range(rng.randint(40, 400)):
            w = rng.sample(WORDS, 3)
            if rng.random() < 0.002:
                lines.append(f"    assert response.status_code==200  # {n}.{k}")
            elif k % 20 == 0:
                lines.append(f"def {w[0]}_{w[1]}_{k}(self, {w[2]}):")
            else:
                lines.append(f"    {w[0]} = {w[1]}.{w[2]}({k}, {rng.randint(0, 9999)})  # {' '.join(w)}")
        (d / f"file{n:05d}{ext}").write_text("\n".join(lines) + "\n")
    vendor = root / "vendor"
    vendor.mkdir()
    for n in range(500):
        (vendor / f"lib{n}.py").write_text("assert response.status_code==200\n" * 50)


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def tool_time(tool, params, ws: Path, runs: int) -> tuple[float, str]:
    ctx = ToolContext(workspace=ws, cancel=CancelToken())
    times = []
    out = None
    for _ in range(runs):
        start = time.perf_counter()
        out = await tool.run(params, ctx)
        times.append(time.perf_counter() - start)
    assert out is not None
    return statistics.median(times), out.content


def run_floor(cmd: list[str], cwd: Path, runs: int) -> float:
    return timed(lambda: subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, check=False), runs)


READ_CHILD = textwrap.dedent(
    """
    import resource, sys, time, anyio
    from pathlib import Path
    from owltui.agent.cancel import CancelToken
    from owltui.agent.tool import ToolContext
    from owltui.tools.files.tools import ReadParams, ReadTool
    path, column = sys.argv[1], int(sys.argv[2])
    if column >= 0:
        ctx = ToolContext(workspace=Path(path).parent, cancel=CancelToken())
        start = time.perf_counter()
        params = ReadParams(path=path, offset=1, column=column) if column else ReadParams(path=path)
        out = anyio.run(ReadTool().run, params, ctx)
        took = time.perf_counter() - start
        print(took, len(out.content.encode()), out.content.rsplit(chr(10), 1)[-1][:90])
    else:
        print(0, 0, "imports only")
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


def read_child(path: Path, column: int) -> tuple[float, int, str, int]:
    done = subprocess.run(
        [sys.executable, "-c", READ_CHILD, str(path), str(column)], capture_output=True, text=True, check=True
    )
    first, rss = done.stdout.strip().splitlines()
    took, size, note = first.split(" ", 2)
    return float(took), int(size), note, int(rss)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--read-mb", type=int, nargs="*", default=[200, 300])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rg = rg_path()
    assert rg, "rg not found"
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "tree"
        start = time.perf_counter()
        make_tree(ws, args.files)
        listed = subprocess.run([rg, "--files"], cwd=ws, capture_output=True).stdout.count(b"\n")
        print(f"tree: {listed} files rg lists (+500 ignored), made in {time.perf_counter() - start:.1f} s")
        print(
            f"{'operation':44} {'tool':>9} {'floor':>9} {'ratio':>6} {'sorted':>9} {'ratio':>6}  floor command"
        )
        cases = [
            ("grep status_code==200 (few matches)", GrepParams(pattern="status_code==200"),
             [rg, "-n", "status_code==200"]),
            ("grep status_code==200 glob *.py", GrepParams(pattern="status_code==200", glob="*.py"),
             [rg, "-n", "-g", "*.py", "status_code==200"]),
            ("grep 'def ' (~60k matching lines)", GrepParams(pattern="def "), [rg, "-n", "def "]),
            ("grep 'def ' glob pkg0*/**/*.py", GrepParams(pattern="def ", glob="pkg0*/**/*.py"),
             [rg, "-n", "-g", "pkg0*/**/*.py", "def "]),
            ("find *.py", FindParams(pattern="*.py"), [rg, "--files", "-g", "*.py"]),
            ("find pkg01/**", FindParams(pattern="pkg01/**"), [rg, "--files", "pkg01"]),
        ]  # fmt: skip
        for label, params, floor_cmd in cases:
            tool = GrepTool() if isinstance(params, GrepParams) else FindTool()
            run_floor(floor_cmd, ws, 1)  # warm the page cache
            took, content = anyio.run(tool_time, tool, params, ws, args.runs)
            floor = run_floor(floor_cmd, ws, args.runs)
            # grep sorts by path (one rg thread, a stable answer): rg doing the same is the second floor
            same = run_floor([*floor_cmd, "--sort", "path"], ws, args.runs) if "-n" in floor_cmd else floor
            print(
                f"{label:44} {took * 1000:7.1f}ms {floor * 1000:7.1f}ms {took / floor:6.2f} "
                f"{same * 1000:7.1f}ms {took / same:6.2f}  {' '.join(floor_cmd[1:])}"
            )
            tail = content.rsplit("\n", 1)[-1]
            if tail.startswith("["):
                print(f"{'':44} {tail[:100]}")
        _, _, _, base_rss = read_child(ws, -1)
        print(f"\nread: a process that only imports the tools peaks at {base_rss / 1024:.0f} MB RSS")
        for mb in args.read_mb:
            big = Path(tmp) / f"line{mb}.txt"
            with big.open("wb") as fh:
                block = b"abcdefghij" * 100_000
                for _ in range(mb):
                    fh.write(block)
            subprocess.run(["cat", str(big)], stdout=subprocess.DEVNULL, check=True)
            for column, floor_cmd in (
                (0, ["head", "-c", "51200", str(big)]),
                (mb * 1_000_000 // 2, ["sh", "-c", f"tail -c +{mb * 500_000} {big} | head -c 51200"]),
            ):
                took, size, note, rss = read_child(big, column)
                floor = run_floor(floor_cmd, Path(tmp), args.runs)
                where = "first page" if not column else f"page at column {column:,}"
                print(
                    f"read {mb} MB single line, {where:30} {took * 1000:7.1f}ms {floor * 1000:7.1f}ms "
                    f"{took / floor:6.1f}  peak RSS {rss / 1024:.0f} MB ({size} bytes shown)"
                )
                print(f"{'':44} {note}")
            big.unlink()
    print(f"\nthis process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    main()
