"""Checkpoint cost: the per-turn snapshot of a 5,000-file workspace, and a restore.

Method: a temporary workspace of N files (default 5,000; 50 directories of 10 subdirectories,
200 B – 8 KB of text each, plus a .gitignore and an ignored build/ directory of 200 files), once as
a plain directory and once as a git repository with everything committed. For each, the store is
created and the first checkpoint taken (it hashes every file); then, R times (default 10), a
simulated turn edits 3 files, writes a new one and deletes one through a shell command, and the
next ``checkpoint()`` is timed (median, min, max). Also timed, R times each: a checkpoint with
nothing changed, ``list()`` (which snapshots to count the newest turn's files), and
``restore()`` of the newest checkpoint after a turn that changed 5 files (edits, a new file, a
deleted file). Wall time around the Python call (``time.perf_counter``), which includes starting
every git process.

Sessions (``--sessions``, at each of ``--sizes``, default 1,000 and 10,000 files): the real
``owltui -p hi`` as a subprocess against the scripted server of ``tests/cli/fake_openai.py``, in a
git repository of N files (committed, file times an hour old as in a working copy) and, run by
run alternating, in a repository of one file (the floor). Reported, median and spread of R runs:
the whole run with a warm store (the workspace's shared store after two earlier sessions) and its
ratio to the floor's (target <= 1.3); with a cold store (a fresh data directory: the first session
ever) the wait of the first tool call — the time from the model's first request to its second,
which a ``read`` call sits between — against the same in the one-file repository (target <= 1.0 s);
and the disk one more session adds on a warm store (the data directory, session file included;
target <= 1 MB). ``--code DIR`` runs another tree's ``owltui`` (say, ``git archive`` of HEAD) for a
before/after comparison.

Usage: python bench/checkpoint_cost.py [--files N] [--runs R] [--json]
       python bench/checkpoint_cost.py --sessions [--sizes 1000,10000] [--runs R] [--code DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from owltui.session.checkpoints.checkpoints import CheckpointStore  # noqa: E402
from owltui.session.checkpoints.prune import disk_usage as disk  # noqa: E402
from tests.cli.fake_openai import FakeOpenAI, Turn  # noqa: E402
from tests.cli.helpers import cli_env, openai_args  # noqa: E402


def make_workspace(root: Path, files: int, rng: random.Random) -> list[Path]:
    paths: list[Path] = []
    for i in range(files):
        directory = root / f"pkg{i % 50:02d}" / f"mod{(i // 50) % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"file{i:05d}.py"
        line = f"value_{i} = {i}  # some source text for file {i}\n"
        path.write_text(line * max(1, rng.randint(200, 8000) // len(line)))
        paths.append(path)
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for i in range(200):
        (root / "build").mkdir(exist_ok=True)
        (root / "build" / f"out{i}.o").write_bytes(b"\0" * 512)
    return paths


def git_commit_all(root: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x.invalid",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values), 1),
        "min_ms": round(min(values), 1),
        "max_ms": round(max(values), 1),
    }


def turn(root: Path, files: list[Path], rng: random.Random, n: int, tag: str) -> None:
    """A turn: edits (tools), a new file, and a shell command that writes and deletes."""
    for path in rng.sample(files, n):
        with open(path, "a") as fh:
            fh.write(f"# edited {tag}\n")
    (root / f"new_{tag}.py").write_text(f"created = {tag!r}\n")
    victim = rng.choice(files)
    files.remove(victim)
    subprocess.run(f"echo {tag} > shell_{tag}.txt && rm {victim}", shell=True, cwd=root, check=True)


def bench(kind: str, nfiles: int, runs: int) -> dict[str, Any]:
    rng = random.Random(14)
    with tempfile.TemporaryDirectory(prefix="owltui-checkpoint-bench-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        files = make_workspace(root, nfiles, rng)
        if kind == "git":
            git_commit_all(root)
        store_dir = Path(tmp) / "session" / "checkpoints.git"
        created: list[CheckpointStore] = []
        open_ms = timed(lambda: created.append(CheckpointStore(root, store_dir)))
        store = created[0]
        first_ms = timed(lambda: store.checkpoint("t0", "first"))
        subsequent: list[float] = []
        for i in range(runs):
            turn(root, files, rng, 3, f"a{i}")
            subsequent.append(timed(partial(store.checkpoint, f"t{i + 1}", f"turn {i + 1}")))
        unchanged = [timed(partial(store.checkpoint, f"u{i}", "nothing changed")) for i in range(runs)]
        listing = [timed(store.list) for _ in range(runs)]
        restores: list[float] = []
        restored = 0
        for i in range(runs):
            turn(root, files, rng, 3, f"r{i}")
            last = store.latest()
            assert last is not None
            start = time.perf_counter()
            restored = len(store.restore(last.id))
            restores.append((time.perf_counter() - start) * 1000)
            files = [p for p in files if p.exists()]
        reopen_ms = timed(lambda: CheckpointStore(root, store_dir).list(current=False))
        return {
            "workspace": kind,
            "files": nfiles,
            "runs": runs,
            "open_ms": round(open_ms, 1),
            "first_snapshot_ms": round(first_ms, 1),
            "snapshot": summary(subsequent),
            "snapshot_unchanged": summary(unchanged),
            "list": summary(listing),
            "restore": summary(restores),
            "restored_paths_per_restore": restored,
            "reopen_ms": round(reopen_ms, 1),
            "checkpoints": len(store.list(current=False)),
        }


def spread(values: list[float], scale: float = 1.0, digits: int = 3) -> dict[str, float]:
    return {
        "median": round(statistics.median(values) * scale, digits),
        "min": round(min(values) * scale, digits),
        "max": round(max(values) * scale, digits),
    }


def repository(root: Path, nfiles: int) -> str:
    """A committed git repository of ``nfiles`` files an hour old; a file a ``read`` call reads."""
    root.mkdir(parents=True)
    paths = make_workspace(root, nfiles, random.Random(7)) if nfiles > 1 else [root / "only.py"]
    if nfiles <= 1:
        paths[0].write_text("value = 1\n")
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))
    git_commit_all(root)
    return paths[0].relative_to(root).as_posix()


class Runner:
    """``owltui -p`` runs against one scripted server, each in a workspace and a data directory."""

    def __init__(self, base: Path, code: Path) -> None:
        self.fake = FakeOpenAI()
        self.base = base
        self.code = code

    def env(self, data: Path) -> dict[str, str]:
        env = cli_env(self.base, XDG_DATA_HOME=str(data), PYTHONPATH=str(self.code))
        return env

    def drain(self) -> None:
        while True:
            try:
                self.fake.arrivals.get_nowait()
            except queue.Empty:
                return

    def hi(self, ws: Path, data: Path) -> float:
        """One whole ``owltui -p hi`` (seconds)."""
        self.fake.add(Turn(text="hello"))
        args = [sys.executable, "-m", "owltui.cli", *openai_args(self.fake.url), "-p", "hi"]
        start = time.perf_counter()
        subprocess.run(args, cwd=ws, env=self.env(data), check=True, capture_output=True, timeout=300)
        took = time.perf_counter() - start
        self.drain()
        return took

    def first_tool(self, ws: Path, data: Path, path: str) -> float:
        """Seconds from the first model request to the second (a ``read`` call between)."""
        self.drain()
        self.fake.add(Turn(text="Reading.", calls=[("read", {"path": path})]), Turn(text="done"))
        args = [sys.executable, "-m", "owltui.cli", *openai_args(self.fake.url), "--yes", "-p", "look"]
        proc = subprocess.Popen(
            args, cwd=ws, env=self.env(data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            self.fake.wait_request(timeout=300)
            first = time.perf_counter()
            self.fake.wait_request(timeout=300)
            wait = time.perf_counter() - first
        finally:
            proc.wait(timeout=300)
        return wait


def sessions(sizes: list[int], runs: int, code: Path) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="owltui-checkpoint-sessions-") as tmp:
        base = Path(tmp)
        runner = Runner(base, code)
        floor_ws = base / "floor"
        floor_file = repository(floor_ws, 1)
        for nfiles in sizes:
            ws = base / f"ws{nfiles}"
            big_file = repository(ws, nfiles)
            warm = base / f"data{nfiles}"
            for _ in range(2):  # the first session ever, then one on the warmed store
                runner.hi(ws, warm)
                runner.hi(floor_ws, warm)
            floor_s: list[float] = []
            big_s: list[float] = []
            for i in range(runs):
                order = [(floor_ws, floor_s), (ws, big_s)]
                for where, into in order if i % 2 == 0 else order[::-1]:
                    into.append(runner.hi(where, warm))
            before = disk(warm)
            runner.hi(ws, warm)
            added = disk(warm) - before
            cold_big: list[float] = []
            cold_floor: list[float] = []
            for i in range(runs):
                pairs = [(floor_ws, floor_file, cold_floor), (ws, big_file, cold_big)]
                for where, path, into in pairs if i % 2 == 0 else pairs[::-1]:
                    into.append(runner.first_tool(where, base / f"cold{nfiles}-{i}-{len(into)}", path))
            ratios = [b / f for b, f in zip(big_s, floor_s, strict=True)]
            results.append(
                {
                    "files": nfiles,
                    "runs": runs,
                    "warm_run_s": spread(big_s),
                    "floor_run_s": spread(floor_s),
                    "warm_ratio": spread(ratios, digits=2),
                    "cold_first_tool_s": spread(cold_big),
                    "floor_first_tool_s": spread(cold_floor),
                    "cold_wait_over_floor_s": round(
                        statistics.median(cold_big) - statistics.median(cold_floor), 3
                    ),
                    "disk_added_by_a_session_kb": round(added / 1024, 1),
                }
            )
        runner.fake.close()
    return results


def print_sessions(results: list[dict[str, Any]]) -> None:
    for r in results:
        w, f, q = r["warm_run_s"], r["floor_run_s"], r["warm_ratio"]
        c, cf = r["cold_first_tool_s"], r["floor_first_tool_s"]
        print(f"{r['files']} files, {r['runs']} runs alternating with a 1-file repository (median, min-max):")
        print(f"  owltui -p hi, warm store   {w['median']:.3f} s ({w['min']:.3f}-{w['max']:.3f})")
        print(f"  same, 1-file repository    {f['median']:.3f} s ({f['min']:.3f}-{f['max']:.3f})")
        print(
            f"  ratio                      {q['median']:.2f}x ({q['min']:.2f}-{q['max']:.2f})  target <= 1.3"
        )
        print(
            f"  cold: first tool call      {c['median']:.3f} s ({c['min']:.3f}-{c['max']:.3f})  target <= 1.0"
        )
        print(f"  same, 1-file repository    {cf['median']:.3f} s ({cf['min']:.3f}-{cf['max']:.3f})")
        print(f"  disk added by a session    {r['disk_added_by_a_session_kb']:.1f} kB  target <= 1024")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--sessions", action="store_true", help="whole owltui -p runs (see above)")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--code", type=Path, default=ROOT, help="the tree whose owltui the runs use")
    args = parser.parse_args()
    if args.sessions:
        found = sessions([int(n) for n in args.sizes.split(",")], args.runs, args.code.resolve())
        if args.json:
            json.dump(found, sys.stdout, indent=1)
            print()
        else:
            print_sessions(found)
        return
    results = [bench(kind, args.files, args.runs) for kind in ("plain", "git")]
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return
    for r in results:
        print(f"{r['workspace']} workspace, {r['files']} files, median of {r['runs']}:")
        print(f"  store open            {r['open_ms']:8.1f} ms")
        print(f"  first snapshot        {r['first_snapshot_ms']:8.1f} ms")
        s = r["snapshot"]
        print(f"  snapshot after a turn {s['median_ms']:8.1f} ms  (min {s['min_ms']}, max {s['max_ms']})")
        s = r["snapshot_unchanged"]
        print(f"  snapshot, no change   {s['median_ms']:8.1f} ms  (min {s['min_ms']}, max {s['max_ms']})")
        s = r["list"]
        print(f"  list()                {s['median_ms']:8.1f} ms  (min {s['min_ms']}, max {s['max_ms']})")
        s = r["restore"]
        print(
            f"  restore ({r['restored_paths_per_restore']} paths)    {s['median_ms']:8.1f} ms  "
            f"(min {s['min_ms']}, max {s['max_ms']})"
        )
        print(f"  reopen + list         {r['reopen_ms']:8.1f} ms")


if __name__ == "__main__":
    main()
