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

Usage: python bench/checkpoint_cost.py [--files N] [--runs R] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from owltui.session.checkpoints.checkpoints import CheckpointStore


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
            subsequent.append(timed(lambda i=i: store.checkpoint(f"t{i + 1}", f"turn {i + 1}")))
        unchanged = [timed(lambda i=i: store.checkpoint(f"u{i}", "nothing changed")) for i in range(runs)]
        listing = [timed(store.list) for _ in range(runs)]
        restores: list[float] = []
        restored = 0
        for i in range(runs):
            turn(root, files, rng, 3, f"r{i}")
            last = store.latest()
            assert last is not None
            paths: list[str] = []
            restores.append(timed(lambda last=last, paths=paths: paths.extend(store.restore(last.id))))
            restored = len(paths)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
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
