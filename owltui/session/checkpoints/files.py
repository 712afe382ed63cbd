"""The workspace's files and the store's trees: snapshots, what changed, and putting files back.

``snapshot`` brings the private index up to the workspace (only what ``ls-files`` reports as changed,
deleted or new: no second walk) and writes its tree, leaving out files over the size limit and nested
repositories, and recording by hash only (``unread``) the new files of a snapshot that would add more
than the limit; ``changes`` compares two trees; ``plan`` turns a checkpoint and the tree of now into
paths to write and paths to delete (``unreadable``: those it cannot write); ``delete``, ``checkout`` and
``ignored`` carry that out. Paths are workspace-relative; nothing outside the workspace is touched (no
symlinked parent is followed).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from owltui.session.checkpoints.git import RESTORE_INDEX, ShadowGit, split_z, z
from owltui.session.checkpoints.records import Checkpoint, CheckpointError, Skipped
from owltui.session.checkpoints.unread import absent, has_unread, mark_unread

GITLINK = "160000"
_NULL_MODE = "000000"


@dataclass(frozen=True)
class Change:
    """One row of ``git diff-tree --raw`` between a checkpoint (old) and another state (new)."""

    path: str
    old_mode: str
    new_mode: str
    old_sha: str = ""  # the object at the checkpoint (old) side

    @property
    def gitlink(self) -> bool:
        return GITLINK in (self.old_mode, self.new_mode)

    @property
    def added(self) -> bool:
        """Present now, absent at the checkpoint: restoring deletes it."""
        return self.old_mode == _NULL_MODE


@dataclass
class Snapshot:
    tree: str
    skipped: list[Skipped]
    unread: int = 0  # new files this snapshot recorded by hash only (their bytes not copied)


def snapshot(g: ShadowGit, max_file_bytes: int, max_files: int, nested_cleared: set[str]) -> Snapshot:
    """Bring the private index up to the workspace and write its tree (workspace-relative). More
    than ``max_files`` new files: those are recorded by hash only (``unread``)."""
    g.sync_excludes()
    out = g.git("ls-files", "-z", "-t", "--modified", "--deleted", "--others", "--exclude-standard")
    entries = [(e[0], e[2:]) for e in split_z(out) if len(e) > 2]
    skipped: list[Skipped] = []
    excluded: set[str] = set()
    tracked_large: list[str] = []
    nested: list[str] = []
    new_files = 0
    for tag, path in entries:
        if tag == "?" and path.endswith("/"):
            if path not in excluded:
                skipped.append(Skipped(path, "repository"))
                excluded.add(path)
                nested.append(path)
            continue
        if tag == "?":
            new_files += 1
        if tag not in ("?", "C") or path in excluded:
            continue
        try:
            st = os.lstat(g.workspace / path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size > max_file_bytes:
            skipped.append(Skipped(path, "too large", st.st_size))
            excluded.add(path)
            if tag == "C":
                tracked_large.append(path)
    unread = new_files > max_files
    if unread:
        mark_unread(g, new_files)  # before the index names blobs the store lacks
    _update_index(g, entries, excluded, unread)
    stale = tracked_large + [p for p in nested if p not in nested_cleared]
    if stale:
        specs = z(f":(literal){p}" for p in stale)
        g.run(
            [
                "rm",
                "-r",
                "--cached",
                "--force",
                "--quiet",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ],
            input=specs,
        )
        nested_cleared.update(nested)
    skipped.sort(key=lambda s: s.path)
    return Snapshot(write_tree(g), skipped, new_files if unread else 0)


def _update_index(
    g: ShadowGit, entries: Sequence[tuple[str, str]], excluded: set[str], unread: bool = False
) -> None:
    """Bring exactly the listed paths into the index: one ``update-index`` for what is gone (deleted,
    or now beyond a symbolic link: the workspace's file there is not the one recorded) and one for
    what is new or changed (with ``unread``, the new ones apart, by hash only). No second walk of
    the workspace (``git add --all .`` walked it again)."""
    deleted = {path for tag, path in entries if tag == "R"}
    new = {path for tag, path in entries if tag == "?"} if unread else set()
    gone: set[str] = set()
    present: set[str] = set()
    for tag, path in entries:
        if path in excluded or path.endswith("/") or tag not in ("C", "R", "?"):
            continue
        if path in deleted or not _safe_parent(g.workspace, path):
            gone.add(path)
        else:
            present.add(path)
    if gone:
        g.run(["update-index", "--force-remove", "-z", "--stdin"], input=z(sorted(gone)))
    hashed = present & new
    present -= hashed
    if hashed:
        g.run(["update-index", "--add", "--info-only", "-z", "--stdin"], input=z(sorted(hashed)))
    if present:
        g.run(["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], input=z(sorted(present)))


def write_tree(g: ShadowGit) -> str:
    # Blobs still borrowed from the user's repository, or never read, are not in the store.
    missing_ok = ["--missing-ok"] if g.borrowed() is not None or has_unread(g) else []
    if not g.prefix:
        return g.git("write-tree", *missing_ok).decode().strip()
    proc = g.run(["write-tree", *missing_ok, f"--prefix={g.prefix}"], check=False)
    if proc.returncode == 0:
        return proc.stdout.decode().strip()
    return _empty_tree(g)  # nothing under the workspace is in the index


def _empty_tree(g: ShadowGit) -> str:
    return g.git("mktree", input=b"").decode().strip()


def changes(g: ShadowGit, old: str, new: str) -> list[Change]:
    """The paths that differ between the trees ``old`` and ``new`` (nested repositories left out)."""
    if old == new:
        return []
    out = g.git("diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-ext-diff", old, new)
    fields = out.split(b"\0")
    found: list[Change] = []
    i = 0
    while i + 1 < len(fields):
        meta = fields[i]
        if not meta.startswith(b":"):
            i += 1
            continue
        old_mode, new_mode, old_sha = meta[1:].decode().split(" ")[:3]
        change = Change(os.fsdecode(fields[i + 1]), old_mode, new_mode, old_sha)
        if not change.gitlink:
            found.append(change)
        i += 2
    return found


def plan(cp: Checkpoint, diff: Sequence[Change]) -> tuple[dict[str, Change], list[str]]:
    """(what to write from the checkpoint, by path; paths to delete) to go from the state ``diff``
    was taken against (``changes(g, cp.tree, now)``) back to ``cp``."""
    left_out = [s.path for s in cp.skipped if s.reason != "ignored"]
    writes: dict[str, Change] = {}
    deletes: list[str] = []
    for change in diff:
        if not change.added:
            writes[change.path] = change
        elif not any(change.path == p or (p.endswith("/") and change.path.startswith(p)) for p in left_out):
            deletes.append(change.path)
    return writes, deletes


def ignored(g: ShadowGit, paths: Sequence[str]) -> list[str]:
    """Which of ``paths`` the ignore rules (as the workspace has them now) exclude."""
    if not paths:
        return []
    proc = g.run(["check-ignore", "-z", "--no-index", "--stdin"], input=z(paths), check=False)
    if proc.returncode not in (0, 1):
        raise CheckpointError(
            "Checkpoint git check-ignore failed: " + proc.stderr.decode("utf-8", "replace").strip()
        )
    return split_z(proc.stdout)


def present_ignored(g: ShadowGit) -> list[str]:
    """The ignored files in the workspace now, sorted (a wholly ignored directory as one entry
    ending in ``/``)."""
    args = ["--others", "--ignored", "--exclude-standard", "--directory", "--no-empty-directory"]
    return sorted(split_z(g.git("ls-files", "-z", *args)))


def _safe_parent(workspace: Path, rel: str) -> bool:
    """Every directory between the workspace and ``rel`` is a real directory (no symbolic link
    leads out of the workspace)."""
    current = workspace
    for part in rel.split("/")[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def delete(workspace: Path, paths: Sequence[str]) -> set[str]:
    """Delete ``paths`` (not directories) and the directories that leaves empty; the paths done."""
    done: set[str] = set()
    parents: set[Path] = set()
    for rel in paths:
        if not _safe_parent(workspace, rel):
            continue
        target = workspace / rel
        try:
            if stat.S_ISDIR(os.lstat(target).st_mode):
                continue  # a directory stands there now: not what the snapshot saw
            os.unlink(target)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise CheckpointError(
                f"Cannot delete {rel} while restoring a checkpoint: {(exc.strerror or str(exc)).lower()}."
            ) from None
        done.add(rel)
        parents.add(target.parent)
    for directory in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        while directory != workspace and workspace in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                break
            directory = directory.parent
    return done


def unreadable(g: ShadowGit, writes: dict[str, Change]) -> tuple[dict[str, Change], list[str]]:
    """(the writes whose checkpoint bytes the store holds; the paths, sorted, of those it never
    copied: recorded by hash only, ``unread``)."""
    if not writes or not has_unread(g):
        return writes, []
    gone = absent(g, (c.old_sha for c in writes.values()), alternates(g))
    return {p: c for p, c in writes.items() if c.old_sha not in gone}, sorted(
        p for p, c in writes.items() if c.old_sha in gone
    )


def alternates(g: ShadowGit) -> dict[str, str]:
    """The store's environment reading the user's objects too while it borrows them (read only:
    nothing there is ever written)."""
    borrowed = g.borrowed()
    return {**g.env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(borrowed)} if borrowed is not None else g.env


def checkout(g: ShadowGit, writes: Sequence[Change]) -> set[str]:
    """Write each change's checkpoint side into the workspace (not over a directory); the paths
    done. A scratch index holds just those entries (not the checkpoint's whole tree)."""
    todo = []
    for change in writes:
        try:
            if stat.S_ISDIR(os.lstat(g.workspace / change.path).st_mode):
                continue  # a directory (maybe holding ignored files) is never swept away
        except OSError:
            pass
        todo.append(change)
    if not todo:
        return set()
    scratch = g.directory / RESTORE_INDEX
    scratch.unlink(missing_ok=True)
    env = {**alternates(g), "GIT_INDEX_FILE": str(scratch)}
    info = b"".join(
        f"{c.old_mode} {c.old_sha}\t".encode() + os.fsencode(g.prefix + c.path) + b"\0" for c in todo
    )
    try:
        g.run(["update-index", "-z", "--index-info"], env=env, input=info)
        paths = [c.path for c in todo]
        g.run(["checkout-index", "--force", "-z", "--stdin"], env=env, input=z(paths))
    finally:
        scratch.unlink(missing_ok=True)
    return {c.path for c in todo}
