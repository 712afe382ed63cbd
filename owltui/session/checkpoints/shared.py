"""One shadow store for a workspace's sessions: its lock, its index layout, and starting from git.

Every session of a workspace keeps its checkpoints in the same store (each on its own ref), so
the private index — the stat cache that makes a snapshot cost what changed — is shared, and a new
session's first snapshot walks only what changed since the last one. ``store_lock`` (an ``flock``
on a file in the store) serialises every use of that index between processes and threads: two
sessions snapshot one after the other, never at once.

In a git repository the very first snapshot starts from what git already knows: ``seed_index``
copies the user's index (read as data: its stat data and object names) as the private index, so
only the files changed or untracked are hashed. The blobs of the unchanged ones stay in the user's
repository for a while (``owltui-borrowed`` names its objects directory) and are only ever read
from there (restoring a file, copying them), never through ``objects/info/alternates``: git would
then freshen (touch) the user's objects whenever it writes one that exists there. So
``write-tree`` runs with ``--missing-ok`` while the store borrows. Seeding is refused (the
snapshot hashes everything, as without it) when the user's blobs may differ from the bytes on
disk: content attributes (``text``, ``eol``, ``filter``, ``ident``, ``working-tree-encoding``),
``core.autocrlf`` or ``core.attributesFile`` in the config files git would read, skip-worktree or
assume-unchanged entries, or an index this git cannot read. Because the user's ``gc`` may prune
objects the checkpoints refer to, ``adopt_borrowed`` then copies every borrowed object reachable
from the checkpoints or the index into the store (one ``pack-objects``, meant for a background
thread) and stops borrowing, under the lock, once nothing is missing.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from owltui.session.checkpoints.git import BORROWED_FILE, ShadowGit, split_z, z
from owltui.session.checkpoints.records import CheckpointError
from owltui.session.checkpoints.unread import absent, has_unread

LOCK_FILE = "owltui.lock"
COPY_LOCK_FILE = "owltui-copy.lock"
LAYOUT_FILE = "owltui-layout"
_GITLINK = "160000"
_TRANSFORMING = re.compile(r"\b(text|eol|crlf|filter|ident|working-tree-encoding)\b")
_AUTOCRLF = re.compile(r"^\s*autocrlf\s*=\s*(true|input)\b", re.IGNORECASE | re.MULTILINE)


@contextmanager
def store_lock(directory: Path, name: str = LOCK_FILE, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on ``directory/name`` (yields False when ``wait`` is off and
    another holder has it). CheckpointError when the lock file cannot be opened."""
    try:
        fd = os.open(directory / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise CheckpointError(
            f"Cannot lock the checkpoint store {directory}: {(exc.strerror or str(exc)).lower()}."
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def check_layout(g: ShadowGit, legacy_root: str | None, legacy_prefix: str | None) -> None:
    """Drop the private index when the workspace moved inside or out of a repository (its paths
    no longer fit); ``legacy_*``: what an older store's list file says, when there is no layout file."""
    marker = g.directory / LAYOUT_FILE
    want = f"{g.root}\n{g.prefix}\n"
    try:
        have: str | None = marker.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        have = None
    if have is None:
        stale = legacy_root is not None and (legacy_root != str(g.root) or legacy_prefix != g.prefix)
    else:
        stale = have != want
    if stale:
        g.index.unlink(missing_ok=True)
    if have != want:
        tmp = marker.with_name(marker.name + ".tmp")
        tmp.write_text(want, encoding="utf-8", errors="surrogateescape")
        os.replace(tmp, marker)


def _common_dir(user_gitdir: Path) -> Path:
    try:
        common = (user_gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return user_gitdir
    return Path(common) if os.path.isabs(common) else user_gitdir / common


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _transforms(g: ShadowGit, user_gitdir: Path, common: Path, tracked: list[str]) -> bool:
    """Whether the user's git may store blobs that differ from the bytes on disk."""
    env = g.source_env
    home = Path(env.get("HOME") or "/nonexistent")
    xdg = Path(env["XDG_CONFIG_HOME"]) if os.path.isabs(env.get("XDG_CONFIG_HOME", "")) else home / ".config"
    configs = [
        user_gitdir / "config",
        common / "config",
        user_gitdir / "config.worktree",
        home / ".gitconfig",
        xdg / "git" / "config",
    ]
    config_text = "\n".join(_read(p) for p in configs)
    if _AUTOCRLF.search(config_text) or re.search(r"attributesfile", config_text, re.IGNORECASE):
        return True
    attributes = [user_gitdir / "info" / "attributes", common / "info" / "attributes"]
    attributes.append(xdg / "git" / "attributes")
    attributes += [g.root / p for p in tracked if p.rsplit("/", 1)[-1] == ".gitattributes"]
    for path in attributes:
        for line in _read(path).splitlines():
            if not line.lstrip().startswith("#") and _TRANSFORMING.search(line):
                return True
    return False


def seed_index(g: ShadowGit, max_file_bytes: int) -> bool:
    """Start the private index from the user's (see the module); False (and nothing left behind)
    when it cannot be used. Call under the store lock, with no private index yet."""
    user_gitdir = g.user_gitdir
    if user_gitdir is None or g.index.exists():
        return False
    common = _common_dir(user_gitdir)
    objects = common / "objects"
    source = user_gitdir / "index"
    if not objects.is_dir() or not source.is_file():
        return False
    borrowing = g.borrowed() is not None  # checkpoints taken before may still need the marker
    try:
        seed = g.index.with_name(g.index.name + ".seed")
        shutil.copy2(source, seed)  # keeps its mtime: git's check for racily clean entries holds
        os.replace(seed, g.index)
        _write(g.directory / BORROWED_FILE, f"{objects.resolve()}\n")
        proc = g.run(["ls-files", "-z", "-s", "-t", "-v"], cwd=g.root, check=False)
        if proc.returncode != 0:
            raise CheckpointError("the user's index cannot be read")
        entries = [e.split("\t", 1) for e in split_z(proc.stdout)]
        rows = [(meta.split(" "), path) for meta, path in (e for e in entries if len(e) == 2)]
        tracked = [path for _, path in rows]
        if any(meta[0] != "H" for meta, _ in rows) or _transforms(g, user_gitdir, common, tracked):
            raise CheckpointError("the user's index does not hold the bytes on disk")
        drop = [path for meta, path in rows if not path.startswith(g.prefix) or meta[1] == _GITLINK]
        for meta, path in rows:
            if meta[1] != _GITLINK and path.startswith(g.prefix):
                try:
                    st = os.lstat(g.root / path)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size > max_file_bytes:
                    drop.append(path)  # left for the snapshot to list as too large
        if drop:
            g.run(["update-index", "--force-remove", "-z", "--stdin"], cwd=g.root, input=z(drop))
        _copy_head_trees(g, user_gitdir, common, objects)
    except (OSError, CheckpointError):
        g.index.unlink(missing_ok=True)
        if not borrowing:
            (g.directory / BORROWED_FILE).unlink(missing_ok=True)
        return False
    return True


def _head(user_gitdir: Path, common: Path) -> str | None:
    """The commit the user's ``HEAD`` names, read from the ref files (nothing of git runs)."""
    head = _read(user_gitdir / "HEAD").strip()
    for _ in range(5):
        if not head.startswith("ref: "):
            return head if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head) else None
        name = head[len("ref: ") :].strip()
        loose = _read(user_gitdir / name).strip() or _read(common / name).strip()
        if not loose:
            for line in _read(common / "packed-refs").splitlines():
                if line.endswith(" " + name):
                    loose = line.split(" ", 1)[0]
                    break
        head = loose
    return None


def _copy_head_trees(g: ShadowGit, user_gitdir: Path, common: Path, objects: Path) -> None:
    """Copy the trees of the user's ``HEAD`` into the store as one pack: ``write-tree`` then finds
    the unchanged directories' trees instead of writing each as a loose object. Best effort."""
    commit = _head(user_gitdir, common)
    if commit is None:
        return
    env = {**g.env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)}
    root = g.run(["rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"], env=env, check=False)
    listed = g.run(["ls-tree", "-r", "-d", "-z", "--full-tree", commit], env=env, check=False)
    if root.returncode != 0 or listed.returncode != 0:
        return
    trees = [root.stdout.decode().strip()]
    trees += [row.split("\t", 1)[0].split(" ")[2] for row in split_z(listed.stdout) if " tree " in row]
    pack = str(g.directory / "objects" / "pack" / "pack")
    g.run(["pack-objects", "-q", pack], env=env, input="".join(f"{t}\n" for t in trees).encode(), check=False)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
    os.replace(tmp, path)


def adopt_borrowed(g: ShadowGit) -> bool:
    """Copy the borrowed blobs the checkpoints and the index refer to into the store, then stop
    borrowing; True when nothing is borrowed any more. The copy can take seconds: call it from a
    background thread (one copier at a time; snapshots go on meanwhile, and what they borrow in
    the meantime is copied under the store lock at the end)."""
    if g.borrowed() is None:
        return True
    with store_lock(g.directory, COPY_LOCK_FILE, wait=False) as mine:
        if not mine:
            return False
        if not _copy_missing(g):
            return False
        with store_lock(g.directory):
            if not _copy_missing(g):
                return False
            (g.directory / BORROWED_FILE).unlink(missing_ok=True)
    return True


def _copy_missing(g: ShadowGit) -> bool:
    """Pack the objects reachable from any ref or the private index that the store lacks, reading
    them from the user's objects directory (read only: a pack is written in the store)."""
    borrowed = g.borrowed()
    if borrowed is None:
        return True
    args = ["rev-list", "--objects", "--all", "--indexed-objects", "--missing=print", "--no-object-names"]
    proc = g.run(args, check=False)
    if proc.returncode != 0:
        return False
    missing = [line[1:] for line in proc.stdout.decode().split() if line.startswith("?")]
    env = {**g.env, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(borrowed)}
    if missing and has_unread(g):  # blobs recorded by hash only are in neither store: not wanted
        never = absent(g, missing, env)
        missing = [oid for oid in missing if oid not in never]
    if missing:
        pack = str(g.directory / "objects" / "pack" / "pack")
        ids = "".join(f"{oid}\n" for oid in missing).encode()
        proc = g.run(["pack-objects", "-q", "--window=0", pack], env=env, input=ids, check=False)
        if proc.returncode != 0:
            return False
    return True
