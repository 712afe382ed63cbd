"""Checkpoints past the file limit: a plain directory of more files than a snapshot copies.

    PYTHONPATH=/work/main python bench/checkpoint_cliff.py [--sizes 120000] [--runs 5]

A directory (not a git repository) of N files (the layout of ``bench/checkpoint_cost.py``), more
than ``DEFAULT_MAX_FILES`` (100,000): the first snapshot records them by hash only (no bytes copied)
instead of turning checkpoints off. Measured, each against its floor in the same run:

- the first snapshot (``warm``) — against ``git ls-files --others`` (the walk) plus
  ``git hash-object --stdin-paths`` of every file (the least work that knows every file's content);
  and the store's disk use after it;
- run by run, a turn edits 3 files, creates one and deletes one with a shell command, and the next
  ``checkpoint()`` is timed — against ``git status --porcelain`` on a scratch repository holding the
  same files (its index made the same way, so both find what changed by stat data);
- a one-file turn (an edit of a file the store holds the bytes of) and its ``restore()`` (``/undo``)
  — against ``git status --porcelain`` + ``git checkout -- FILE`` in the scratch repository.

Medians with min-max, the ratio of medians and the spread of the per-run ratios; wall time around
the calls, which includes starting every git process.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.checkpoint_cost import make_workspace  # noqa: E402
from bench.checkpoint_vs_git import ms, report  # noqa: E402
from owltui.session.checkpoints.checkpoints import DEFAULT_MAX_FILES, CheckpointStore  # noqa: E402
from owltui.session.checkpoints.prune import disk_usage  # noqa: E402


def scratch(root: Path, gitdir: Path) -> dict[str, str]:
    """A scratch repository of ``root`` (objects only for what changes later), its git environment."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_DIR": str(gitdir),
        "GIT_WORK_TREE": str(root),
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x.invalid",
    }

    def run(*args: str, data: bytes | None = None) -> bytes:
        return subprocess.run(
            ["git", *args], cwd=root, env=env, input=data, check=True, capture_output=True
        ).stdout

    run("init", "-q")
    listed = run("ls-files", "-z", "--others", "--exclude-standard")
    run("update-index", "--add", "--info-only", "-z", "--stdin", data=listed)
    tree = run("write-tree", "--missing-ok").decode().strip()
    commit = run("commit-tree", tree, "-m", "base").decode().strip()
    run("update-ref", "HEAD", commit)
    return env


def git(env: dict[str, str], root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True).stdout


def commit_all(env: dict[str, str], root: Path, message: str) -> None:
    git(env, root, "add", "-A")
    tree = git(env, root, "write-tree", "--missing-ok").decode().strip()
    head = git(env, root, "rev-parse", "HEAD").decode().strip()
    new = subprocess.run(
        ["git", "commit-tree", tree, "-p", head, "-m", message],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    ).stdout.decode()
    git(env, root, "update-ref", "HEAD", new.strip())


def one_size(nfiles: int, runs: int) -> None:
    rng = random.Random(29)
    with tempfile.TemporaryDirectory(prefix="owltui-ckpt-cliff-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        files = make_workspace(root, nfiles, rng)
        old = time.time() - 3600
        for path in files:
            os.utime(path, (old, old))
        plain = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
        walk_and_hash = []
        for _ in range(2):  # the floor, twice (the first run warms the page cache for both)
            start = time.perf_counter()
            listed = subprocess.run(
                ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "--no-index"],
                env=plain,
                check=False,
                capture_output=True,
            ).stdout
            if not listed:
                listed = "".join(f"{p.relative_to(root)}\n" for p in files).encode()
            subprocess.run(
                ["git", "hash-object", "--stdin-paths"],
                cwd=root,
                env=plain,
                input=listed,
                capture_output=True,
                check=True,
            )
            walk_and_hash.append(ms(start))
        store_dir = Path(tmp) / "data" / "ws.git"
        store = CheckpointStore(root, store_dir, session="bench")
        start = time.perf_counter()
        store.warm()
        first = ms(start)
        floor = min(walk_and_hash)
        print(
            f"{nfiles} files, no git (limit {DEFAULT_MAX_FILES}): first snapshot {first:.0f} ms, "
            f"walk + hash every file {floor:.0f} ms: {first / floor:.2f}x; "
            f"store {disk_usage(store_dir) / 1e6:.1f} MB for {sum(p.stat().st_size for p in files) / 1e6:.0f} MB of files"
        )
        print(f"  said: {store.notices[0] if store.notices else '(nothing)'}")
        env = scratch(root, Path(tmp) / "scratch.git")
        snap, status, undo, floor_undo = [], [], [], []
        for i in range(runs):
            for path in rng.sample(files, 3):
                with open(path, "a") as fh:
                    fh.write(f"# edited {i}\n")
            (root / f"new_{i}.py").write_text(f"created = {i}\n")
            victim = rng.choice(files)
            files.remove(victim)
            subprocess.run(["rm", str(victim)], check=True)
            start = time.perf_counter()
            store.checkpoint(f"t{i}", f"turn {i}")
            snap.append(ms(start))
            start = time.perf_counter()
            git(env, root, "status", "--porcelain")
            status.append(ms(start))
            commit_all(env, root, f"turn {i}")
            target = root / f"new_{i}.py"
            store.checkpoint(f"u{i}", "before the one-file turn")
            target.write_text("the turn's edit\n")
            latest = store.latest()
            assert latest is not None
            start = time.perf_counter()
            done, lost = store.restore_report(latest.id)
            undo.append(ms(start))
            assert done == [target.name] and not lost, (done, lost)
            target.write_text("the same edit, undone by git\n")
            start = time.perf_counter()
            git(env, root, "status", "--porcelain")
            git(env, root, "checkout", "--", target.name)
            floor_undo.append(ms(start))
        report(snap, status, undo, floor_undo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="120000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        one_size(n, args.runs)


if __name__ == "__main__":
    main()
