"""Keeping checkpoint stores small: what no session can reach goes, and a store over its budget
drops the checkpoints of its least recently used sessions.

A workspace's shared store (``<data dir>/checkpoints/<workspace key>.git``) holds one ref and one
list file per session (``refs/sessions/<stem>``, ``sessions/<stem>.json``); the session itself is
``<data dir>/sessions/<workspace key>/<stem>.jsonl``. ``prune_store``:

- removes the checkpoints of sessions whose session file is gone (deleted: nothing can resume
  them), once their list has not changed for ``QUIET_S`` (a session being started may not have
  written its file yet);
- while the store's disk use is over ``budget`` bytes, removes the checkpoints of the session used
  least recently (its list file's time), never those of ``keep`` (the session running it) nor of a
  session used within ``QUIET_S``; each such session keeps a ``sessions/<stem>.pruned`` note that
  its rewind shows (``pruned_note``);
- then repacks and drops the objects nothing refers to any more (the private index's blobs, what
  the next snapshot builds on, stay). A store still borrowing objects from the user's repository is
  not repacked (the borrowed blobs are not in it yet); the next pass does it. A store whose trees
  name blobs never copied (``unread``) has only its unreachable loose objects dropped.

Before shared stores, each session kept its own store (``<session dir>/checkpoints.git``): one whose
session file is gone is removed whole (``prune_old_stores``), as is a shared store whose workspace
has no session file left. Every pass takes the store's lock without waiting (a store in use by
another process is left for later: ``busy``) and holds it to the end: snapshots, which take the same
lock, never race the repack (which drops unreachable objects a snapshot might be reusing).

Once a day per store (``due``) a session looks whether anything is to be done (``wanted``: cheap, no
git) and if so starts ``python -m owltui.session.checkpoints.prune`` as a process of its own, which
runs ``prune_workspace`` holding the store's lock to the end even if the session exits meanwhile;
``owltui --gc`` runs ``prune_everything`` at once and prints what it freed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from owltui.session.checkpoints.git import ShadowGit
from owltui.session.checkpoints.records import CheckpointError
from owltui.session.checkpoints.shared import store_lock
from owltui.session.checkpoints.unread import has_unread

DEFAULT_BUDGET_MB = 2048  # per workspace store
PRUNE_EVERY_S = 24 * 3600
QUIET_S = 3600.0
STAMP_FILE = "owltui-pruned"
OLD_STORE = "checkpoints.git"
SESSION_REFS = "refs/sessions/"


@dataclass
class PruneReport:
    """What one pass over a store did (sizes in bytes, on disk)."""

    store: Path
    before: int = 0
    after: int = 0
    unreachable: list[str] = field(default_factory=list)  # sessions whose file is gone
    over_budget: list[str] = field(default_factory=list)  # sessions dropped to meet the budget
    still_over: bool = False  # over budget with nothing left it may drop
    busy: bool = False  # another process held the store: nothing done
    removed: bool = False  # the whole store went (no session can use it)
    error: str | None = None  # git failed on it

    @property
    def freed(self) -> int:
        return max(0, self.before - self.after)

    def line(self) -> str:
        """One line for ``owltui --gc``."""
        if self.error is not None:
            return f"{self.store}: not pruned: {self.error}"
        if self.busy:
            return f"{self.store}: in use, left for later"
        if self.removed:
            return f"{self.store}: removed (no session left uses it), {_mb(self.before)} freed"
        parts = [f"{_mb(self.before)} -> {_mb(self.after)}"]
        if self.unreachable:
            parts.append(f"{len(self.unreachable)} deleted sessions' checkpoints removed")
        if self.over_budget:
            parts.append(f"{len(self.over_budget)} least recently used sessions' checkpoints removed")
        if self.still_over:
            parts.append("still over the budget (the workspace's own files need that much)")
        return f"{self.store}: " + ", ".join(parts)


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def disk_usage(path: Path) -> int:
    """Bytes allocated under ``path``."""
    total = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


def due(directory: Path, now: float | None = None) -> bool:
    """The store was not pruned within ``PRUNE_EVERY_S``."""
    try:
        stamp = (directory / STAMP_FILE).stat().st_mtime
    except OSError:
        return True
    return (now if now is not None else time.time()) - stamp >= PRUNE_EVERY_S


def pruned_note(directory: Path, session: str) -> str | None:
    """Why this session's checkpoints are gone, if a budget pass removed them."""
    try:
        return (directory / "sessions" / f"{session}.pruned").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _git(directory: Path, env: Mapping[str, str]) -> ShadowGit:
    g = ShadowGit(directory, directory, dict(env))
    g.env.pop("GIT_WORK_TREE", None)
    return g


def _sessions(directory: Path) -> list[tuple[float, str]]:
    """(last used, name) of the sessions with checkpoints in the store, least recently used first."""
    found = []
    for entry in (directory / "sessions").glob("*.json"):
        try:
            found.append((entry.stat().st_mtime, entry.stem))
        except OSError:
            continue
    return sorted(found)


def _drop(g: ShadowGit, directory: Path, name: str, note: str | None) -> None:
    g.run(["update-ref", "-d", SESSION_REFS + name], check=False)
    (directory / "sessions" / f"{name}.json").unlink(missing_ok=True)
    if note is not None:
        (directory / "sessions" / f"{name}.pruned").write_text(note + "\n", encoding="utf-8")


def _repack(g: ShadowGit) -> None:
    if g.borrowed() is not None:
        return  # the borrowed blobs are not in the store yet: a repack would miss them
    if not has_unread(g):  # a repack stops at the first blob never copied: loose objects only then
        g.run(["repack", "-a", "-d", "-q"])
    g.run(["prune", "--expire=now"])


def prune_store(
    directory: Path,
    sessions_dir: Path,
    *,
    budget: int,
    env: Mapping[str, str],
    keep: str | None = None,
    now: float | None = None,
) -> PruneReport:
    """One pass over the shared store ``directory`` whose sessions live in ``sessions_dir`` (see the
    module); CheckpointError if git fails."""
    report = PruneReport(directory)
    now = time.time() if now is None else now
    with store_lock(directory, wait=False) as held:
        if not held:
            report.busy = True
            return report
        report.before = report.after = disk_usage(directory)
        g = _git(directory, env)
        changed = False
        for used, name in _sessions(directory):
            if now - used >= QUIET_S and not (sessions_dir / f"{name}.jsonl").exists() and name != keep:
                _drop(g, directory, name, None)
                report.unreachable.append(name)
                changed = True
        if changed:
            _repack(g)
            report.after = disk_usage(directory)
        for used, name in _sessions(directory):
            if report.after <= budget:
                break
            if name == keep or now - used < QUIET_S:
                continue
            when = time.strftime("%Y-%m-%d", time.localtime(now))
            _drop(
                g,
                directory,
                name,
                f"The checkpoints of this session were removed on {when}: the workspace's checkpoint "
                f"store was over its budget of {_mb(budget)} (config checkpoint_budget_mb).",
            )
            report.over_budget.append(name)
            _repack(g)
            report.after = disk_usage(directory)
        report.still_over = report.after > budget
        (directory / STAMP_FILE).touch()
    return report


def _remove_whole(store: Path) -> PruneReport:
    """Remove a store no session can use; left alone while another process holds it or something
    wrote to it within ``QUIET_S``."""
    report = PruneReport(store)
    with store_lock(store, wait=False) as held:
        newest = max((p.stat().st_mtime for p in store.glob("*") if p.is_file()), default=0.0)
        if not held or time.time() - newest < QUIET_S:
            report.busy = True
            return report
        report.before = disk_usage(store)
        shutil.rmtree(store, ignore_errors=True)
    report.removed = True
    return report


def prune_old_stores(sessions_dir: Path) -> list[PruneReport]:
    """Remove the per-session stores (``<stem>/checkpoints.git``) of sessions whose file is gone."""
    return [
        _remove_whole(store)
        for store in sorted(sessions_dir.glob(f"*/{OLD_STORE}"))
        if not (sessions_dir / f"{store.parent.name}.jsonl").exists()
    ]


def prune_workspace(
    store: Path, sessions_dir: Path, *, budget: int, env: Mapping[str, str], keep: str | None
) -> list[PruneReport]:
    """A session's daily pass: its workspace's shared store and old per-session stores."""
    reports = prune_old_stores(sessions_dir)
    if (store / "objects").is_dir():
        reports.append(prune_store(store, sessions_dir, budget=budget, env=env, keep=keep))
    return reports


def prune_everything(data: Path, *, budget: int, env: Mapping[str, str]) -> list[PruneReport]:
    """``owltui --gc``: every workspace's store under the data directory ``data``, now. A store
    whose workspace has no session file left is removed whole. A store git fails on is reported
    (``error``) and the others still pruned."""
    reports: list[PruneReport] = []
    sessions_root = data / "sessions"
    if sessions_root.is_dir():
        for sessions_dir in sorted(p for p in sessions_root.iterdir() if p.is_dir()):
            reports += prune_old_stores(sessions_dir)
    for store in sorted((data / "checkpoints").glob("*.git")):
        sessions_dir = sessions_root / store.name.removesuffix(".git")
        if not any(sessions_dir.glob("*.jsonl")):
            reports.append(_remove_whole(store))
            continue
        try:
            reports.append(prune_store(store, sessions_dir, budget=budget, env=env))
        except CheckpointError as exc:
            reports.append(PruneReport(store, error=str(exc)))
    return reports


def wanted(
    store: Path, sessions_dir: Path, *, budget: int, keep: str | None, now: float | None = None
) -> bool:
    """Whether a pass would remove anything (no git run): an old store or a session whose file is
    gone, or the store over its budget. Marks the store as looked at today."""
    now = time.time() if now is None else now
    try:
        (store / STAMP_FILE).touch()
    except OSError:
        return False
    if any(
        not (sessions_dir / f"{s.parent.name}.jsonl").exists() for s in sessions_dir.glob(f"*/{OLD_STORE}")
    ):
        return True
    for used, name in _sessions(store):
        if name != keep and now - used >= QUIET_S and not (sessions_dir / f"{name}.jsonl").exists():
            return True
    return disk_usage(store) > budget


def spawn(
    store: Path, sessions_dir: Path, *, budget: int, keep: str, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    """Start the pass as a process of its own (see the module); it outlives the session."""
    args = ["--store", str(store), "--sessions", str(sessions_dir), "--budget", str(budget), "--keep", keep]
    return subprocess.Popen(
        [sys.executable, "-m", "owltui.session.checkpoints.prune", *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=store,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="prune one workspace's checkpoint store")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--budget", type=int, required=True)
    parser.add_argument("--keep", required=True)
    args = parser.parse_args(argv)
    try:
        prune_workspace(args.store, args.sessions, budget=args.budget, env=os.environ, keep=args.keep)
    except (CheckpointError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
