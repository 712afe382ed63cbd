"""Git's configuration surface in the workspace, and the audit that keeps planted repositories inert.

Git reads configuration (and so may run commands: ``core.fsmonitor``, hooks, ``core.pager`` ...)
from more places than ``.git/config``. ``git_surfaces(root)`` names them for one repository root:
the ``.git`` pointer file when ``.git`` is a file (a linked worktree, a submodule), and in the
resolved git directory and its common directory the entries ``SURFACE_NAMES``. The sandbox binds
the existing ones read-only; names that do not exist yet cannot be bound (``commondir`` must not
even exist as an empty file), so the audit watches them instead.

``GitAudit`` owns a snapshot of the workspace's directories (their ctimes) and of the repositories
in it. ``look(judge=False)`` runs before a command and accepts what the user changed meanwhile;
``look(judge=True)`` runs after a command or a file tool's write (and before a command while a
process an earlier one started may still run) and renames what appeared since:

- a ``.git`` file or directory below the workspace (also a nested repository recorded as a gitlink
  in the index: git reads its ``.git/config`` only through that entry) becomes
  ``.git.owltui-quarantine-N``;
- a directory that newly looks like a git directory (``HEAD``, ``objects/``, ``refs/``: git would
  take it for a bare repository when run inside it) has its ``HEAD`` renamed likewise;
- a surface name that was missing in a known git directory (``commondir``, ``config.worktree`` ...)
  is renamed likewise.

Only directories that changed are read again. Which ones is known from an inotify queue
(``dirwatch``: an event for everything that moves a directory's ctime, queued before the system
call returns), so a look costs one read of the queue plus a ``stat`` and a read of each directory
that changed. Directories the kernel will not watch (the per-user watch limit; no inotify), and
all of them after the queue overflowed, are ``stat``-ed at every look: read again when their ctime
changed (or changed just before the command, within the kernel's timestamp granularity). The
ctime, not the mtime: ``touch -d`` can set an mtime back to what it was, nothing but the clock sets
a ctime.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from owltui.policy.sandbox.dirwatch import DirWatch

__all__ = ["QUARANTINE", "SURFACE_NAMES", "GitAudit", "GitSurfaces", "git_surfaces"]

SURFACE_NAMES = ("config", "config.worktree", "hooks", "commondir", "info", "modules", "worktrees")
QUARANTINE = ".owltui-quarantine"
MAX_DIRS = 100_000  # beyond this the audit stops walking (the README says so)
HOT_NS = 50_000_000  # a directory changed this recently is read again after the command anyway
_GITDIR_MARKS = frozenset({"HEAD", "objects", "refs"})


@dataclass
class GitSurfaces:
    """One repository root's configuration surface: ``pointer`` (the ``.git`` file, if a file), the
    git directories git reads (``gitdirs``: the resolved one and its common directory), the
    surface entries present and the ones missing."""

    root: Path
    pointer: Path | None = None
    gitdirs: list[Path] = field(default_factory=list)
    present: list[Path] = field(default_factory=list)
    missing: list[Path] = field(default_factory=list)


def _read_pointer(path: Path, prefix: str) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if prefix:
        return text[len(prefix) :].strip() if text.startswith(prefix) else None
    return text or None


def git_surfaces(root: Path) -> GitSurfaces:
    """The configuration surface of the repository whose work tree is ``root`` (``root/.git``)."""
    out = GitSurfaces(root)
    dotgit = root / ".git"
    if dotgit.is_symlink():
        gitdir: Path | None = Path(os.path.realpath(dotgit))
    elif dotgit.is_file():
        out.pointer = dotgit
        named = _read_pointer(dotgit, "gitdir:")
        gitdir = None if named is None else Path(os.path.normpath(root / named))
    elif dotgit.is_dir():
        gitdir = dotgit
    else:
        return out
    if gitdir is None:
        return out
    out.gitdirs.append(gitdir)
    common = _read_pointer(gitdir / "commondir", "")
    if common is not None:
        out.gitdirs.append(Path(os.path.normpath(gitdir / common)))
    for gd in out.gitdirs:
        for name in SURFACE_NAMES:
            path = gd / name
            if not os.path.lexists(path):
                out.missing.append(path)
            elif any(path in g.parents for g in out.gitdirs):
                # a linked worktree's own git directory lies in worktrees/: bind its siblings, not it
                out.present += [
                    c for c in _children(path) if not any(c == g or c in g.parents for g in out.gitdirs)
                ]
            else:
                out.present.append(path)
    return out


def _children(path: Path) -> list[Path]:
    try:
        return [path / name for name in os.listdir(path)]
    except OSError:
        return []


def _free_name(path: Path) -> Path:
    n = 1
    while True:
        cand = path.with_name(f"{path.name}{QUARANTINE}-{n}")
        if not os.path.lexists(cand):
            return cand
        n += 1


def quarantine(path: Path, why: str) -> str:
    """Rename ``path`` out of git's way; the sentence that says so (for the user and the model)."""
    target = _free_name(path)
    try:
        os.rename(path, target)
    except OSError as exc:
        return f"could not neutralise {path} ({why}): {exc.strerror}"
    return (
        f"{path} ({why}) was renamed to {target.name} so that git run by the user cannot read it; "
        "rename it back only after checking its config and hooks"
    )


class GitAudit:
    """The workspace's directories and repositories as last seen; see the module docstring."""

    def __init__(self, workspace: Path, max_dirs: int = MAX_DIRS) -> None:
        self.workspace = workspace
        self.max_dirs = max_dirs
        self.truncated = False
        self._dirs: dict[str, int] = {}  # directory -> ctime_ns (unlike the mtime, no one can set it back)
        self._hot: set[str] = set()
        self._entries: dict[str, frozenset[str]] = {}  # directory -> the names git cares about in it
        self._repos: dict[str, GitSurfaces] = {}  # repository root -> its surface
        self._watch: DirWatch | None = None  # opened with the first walk
        self._unwatched: set[str] = set()  # directories inotify does not cover: stat-ed at every look
        self._lock = threading.Lock()

    # ---- what the sandbox binds ------------------------------------------------------------------
    def surfaces(self) -> list[GitSurfaces]:
        """Every repository known in the workspace (the workspace's own first), as of the last look."""
        with self._lock:
            if not self._dirs:
                self._walk(str(self.workspace), accept=True, notes=[])
            return sorted(self._repos.values(), key=lambda s: len(s.root.parts))

    def quiet(self) -> bool:
        """A look now would read no directory again: every one is watched and no event is queued
        (it costs the ``lstat``s of the repositories' surfaces)."""
        with self._lock:
            watch = self._watch
            return bool(self._dirs) and watch is not None and not self._unwatched and not watch.pending()

    # ---- before and after a command ---------------------------------------------------------------
    def look(self, judge: bool) -> list[str]:
        """Read again what changed since the last look. ``judge``: neutralise what appeared (after a
        command, or while one of its processes may still run); else accept it as the user's own work
        (between commands). One sentence per thing renamed."""
        notes: list[str] = []
        with self._lock:
            if not self._dirs:
                self._walk(str(self.workspace), accept=True, notes=notes)
                return notes
            if judge:
                for surf in list(self._repos.values()):
                    for path in surf.missing:
                        if os.path.lexists(path):
                            notes.append(quarantine(path, "git configuration written by a command"))
            self._pass(accept=not judge, notes=notes)
            self._repos = {k: git_surfaces(Path(k)) for k in self._repos}
        return notes

    # ---- the walk -----------------------------------------------------------------------------------
    def _pass(self, accept: bool, notes: list[str]) -> None:
        now = time.time_ns()
        hot, self._hot = self._hot, set()
        dirty: set[str] = set()
        if self._watch is None:
            todo = list(self._dirs)
        else:
            changes = self._watch.drain()
            for gone in changes.gone:  # deleted or moved away: its path and those below it are stale
                self._forget_tree(gone)
            if changes.overflow:
                todo = list(self._dirs)
            else:
                dirty = changes.dirty
                todo = [d for d in (dirty | self._unwatched | hot) if d in self._dirs]
        for d in todo:
            seen = self._dirs.get(d)
            if seen is None:  # forgotten meanwhile
                continue
            try:
                ctime = os.stat(d, follow_symlinks=False).st_ctime_ns
            except OSError:
                self._forget(d)
                continue
            if ctime != seen or d in hot or d in dirty:
                self._dirs[d] = ctime
                for sub in self._scan(d, accept, notes):  # new directories: walked and judged now
                    self._walk(sub, accept, notes)
            if now - ctime < HOT_NS and (self._watch is None or d in self._unwatched):
                self._hot.add(d)

    def _forget(self, d: str) -> None:
        self._dirs.pop(d, None)
        self._entries.pop(d, None)
        self._repos.pop(d, None)
        self._unwatched.discard(d)
        if self._watch is not None:
            self._watch.discard(d)

    def _forget_tree(self, top: str) -> None:
        below = top.rstrip("/") + "/"
        for d in [d for d in self._dirs if d == top or d.startswith(below)]:
            self._forget(d)

    def _walk(self, top: str, accept: bool, notes: list[str]) -> None:
        if self._watch is None and not self._dirs:
            self._watch = DirWatch.open()
        stack = [top]
        while stack:
            d = stack.pop()
            if len(self._dirs) >= self.max_dirs:
                self.truncated = True
                return
            # watched before it is read: a change after the read is in the queue at the next look
            if self._watch is None or not self._watch.add(d):
                self._unwatched.add(d)
            try:
                self._dirs[d] = os.stat(d, follow_symlinks=False).st_ctime_ns
            except OSError:
                self._forget(d)
                continue
            stack += self._scan(d, accept, notes)

    def _scan(self, d: str, accept: bool, notes: list[str]) -> list[str]:
        """Read ``d`` again, judge new git entries in it, return its subdirectories not seen before."""
        subdirs: list[str] = []
        names: set[str] = set()
        try:
            with os.scandir(d) as it:
                for entry in it:
                    name = entry.name
                    if name == ".git" or name in _GITDIR_MARKS:
                        names.add(name)
                    if name == ".git":
                        continue
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if is_dir and entry.path not in self._dirs:
                        subdirs.append(entry.path)
        except (FileNotFoundError, NotADirectoryError):
            self._forget(d)
            return []
        except OSError:  # unreadable now: looked at again when its ctime changes (chmod back)
            return []
        before = self._entries.get(d, frozenset())
        looks_gitdir = _GITDIR_MARKS <= names
        if not accept and d not in self._repos and ".git" in names and ".git" not in before:
            notes.append(quarantine(Path(d) / ".git", "a git repository planted by a command"))
            names.discard(".git")
        if not accept and looks_gitdir and not _GITDIR_MARKS <= before:
            notes.append(quarantine(Path(d) / "HEAD", "a directory made to look like a git repository"))
            names.discard("HEAD")
            looks_gitdir = False
        self._entries[d] = frozenset(names)
        if ".git" in names and d not in self._repos:
            self._repos[d] = git_surfaces(Path(d))
        elif ".git" not in names:
            self._repos.pop(d, None)
        if looks_gitdir:  # a git directory (bare, or someone's objects): never walked into
            return []
        return subdirs
