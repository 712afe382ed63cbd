"""The per-turn checkpoint and ``/undo`` in a large git repository, against git doing the same work.

    PYTHONPATH=/work/main python bench/checkpoint_vs_git.py [--sizes 10000,100000] [--runs 7]

A committed git repository of N files (the layout of ``bench/checkpoint_cost.py``, file times an hour
old as in a working copy) gets a workspace-shared ``CheckpointStore`` as a session makes it (in a
data directory), and its first snapshot (seeded from the repository's index). Then, run by run
alternating:

- a turn edits 3 files, creates one and deletes one with a shell command, and the next
  ``checkpoint()`` is timed — against ``git status --porcelain`` timed on the same tree just after
  it (the floor: the least work that finds what changed); target <= 1.5x;
- a one-file turn (an edit of one tracked file, checkpoint taken before it) and its ``restore()``
  (what ``/undo`` runs) — against ``git status --porcelain`` + ``git checkout -- FILE`` after the
  same one-file edit; target <= 1.5x.

Medians, the ratio of medians and the spread of the per-run ratios. Wall time around the calls,
which includes starting every git process.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.checkpoint_cost import git_commit_all, make_workspace  # noqa: E402
from owltui.session.checkpoints.checkpoints import CheckpointStore  # noqa: E402

GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True, stdout=subprocess.DEVNULL)


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})"


def report(
    snap: list[float], status: list[float], undo: list[float], floor: list[float], tail: str = ""
) -> None:
    """The per-turn checkpoint against ``git status``, ``/undo`` against status + checkout: medians
    with min-max, the ratio of medians and the spread of the per-run ratios."""
    for what, ours, base, theirs in (
        ("checkpoint after a turn ", snap, "git status --porcelain", status),
        ("/undo of a one-file turn", undo, "git status + checkout -- FILE", floor),
    ):
        ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
        print(f"  {what} {spread(ours)} ms  {base} {spread(theirs)} ms")
        print(
            f"  ratio {statistics.median(ours) / statistics.median(theirs):.2f}x "
            f"(per run {min(ratios):.2f}-{max(ratios):.2f}){tail}"
        )


def one_size(nfiles: int, runs: int) -> None:
    rng = random.Random(23)
    with tempfile.TemporaryDirectory(prefix="owltui-ckpt-vs-git-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        files = make_workspace(root, nfiles, rng)
        old = time.time() - 3600
        for path in files:
            os.utime(path, (old, old))
        git_commit_all(root)
        git(root, "status", "--porcelain")  # the user's index refreshed, as after any git command
        store = CheckpointStore(root, Path(tmp) / "data" / "ws.git", session="bench", copy_borrowed=True)
        start = time.perf_counter()
        store.checkpoint("t0", "first")
        print(f"{nfiles} files: first snapshot (seeded from the index) {ms(start):.0f} ms")
        snap, status, undo, floor = [], [], [], []
        for i in range(runs):
            for path in rng.sample(files, 3):
                with open(path, "a") as fh:
                    fh.write(f"# edited {i}\n")
            (root / f"new_{i}.py").write_text(f"created = {i}\n")
            victim = rng.choice(files)
            files.remove(victim)
            subprocess.run(["rm", str(victim)], check=True)
            start = time.perf_counter()
            store.checkpoint(f"t{i + 1}", f"turn {i + 1}")
            snap.append(ms(start))
            start = time.perf_counter()
            git(root, "status", "--porcelain")
            status.append(ms(start))
            # /undo of a one-file turn
            target = rng.choice(files)
            store.checkpoint(f"u{i}", "before the one-file turn")
            with open(target, "a") as fh:
                fh.write("# the turn's edit\n")
            latest = store.latest()
            assert latest is not None
            start = time.perf_counter()
            store.restore(latest.id)
            undo.append(ms(start))
            with open(target, "a") as fh:
                fh.write("# the same edit, undone by git\n")
            start = time.perf_counter()
            git(root, "status", "--porcelain")
            git(root, "checkout", "--", str(target.relative_to(root)))
            floor.append(ms(start))
            git(root, "add", "-A")
            git(root, "-c", "user.name=b", "-c", "user.email=b@x.invalid", "commit", "-q", "-m", f"turn {i}")
        report(snap, status, undo, floor, "  target <= 1.5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        one_size(n, args.runs)


if __name__ == "__main__":
    main()
