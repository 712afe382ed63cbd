"""Checkpoints: the workspace's files before each user turn, and rewinding them (issue 14, item 3).

A ``CheckpointStore`` keeps a *shadow* git object store in a directory of the session (for example
``<session dir>/checkpoints.git``) and drives the ``git`` program with its own ``GIT_DIR``,
``GIT_WORK_TREE`` and a private ``GIT_INDEX_FILE``. The user's repository (its index, refs, stash,
config, hooks) is never read for anything but its ignore rules and never written. So a checkpoint
captures whatever happened to the files, whoever did it: the edit and write tools, and shell
commands (``echo x > g.txt``, ``sed -i``, ``rm``, a formatter run through bash).

What is recorded
    Every file under the workspace that the workspace's ignore rules do not exclude: the
    ``.gitignore`` files in the workspace and in the directories above it up to the enclosing
    repository's top level (when the workspace lies inside one), that repository's
    ``.git/info/exclude`` and the user's global ignore file at its default place
    (``$XDG_CONFIG_HOME/git/ignore``). ``.git`` directories are never recorded, and nested
    repositories (a directory holding its own ``.git``) are left out whole. Regular files larger
    than ``max_file_bytes`` (default 5 MB) are left out and listed with the checkpoint
    (``skipped``). Symbolic links are recorded as links, the executable bit is kept. Bytes are
    kept exactly: every git attribute that transforms content (``text``/``eol``, ``filter``,
    ``ident``, ``working-tree-encoding``) is switched off, whatever ``.gitattributes`` says.

Safety
    Git runs with ``GIT_CONFIG_NOSYSTEM=1``, ``GIT_CONFIG_GLOBAL=/dev/null``, ``HOME`` and
    ``XDG_CONFIG_HOME`` pointing into the store, a fresh environment (no ``GIT_*`` variable of the
    caller leaks in), a config file written by this module (no fsmonitor, no hooks, no gpg signing,
    no gc) and the same settings again as ``-c`` options. Filter drivers, hooks and fsmonitor
    commands of the user's repository or global config are therefore never run.

Cost
    The private index keeps stat information, so a snapshot after the first one is one
    ``ls-files`` walk (changed and new files), an incremental ``git add`` of just the changes and a
    ``write-tree``: a few tens of milliseconds for 5,000 files (``bench/checkpoint_cost.py``). The
    first snapshot hashes every file; ``warm()`` does it ahead of the first turn. All methods are
    synchronous (they run ``git``) and thread-safe: call them from a worker thread
    (``anyio.to_thread.run_sync``).

The checkpoint list lives in ``checkpoints.json`` in the store directory (written atomically) and
every checkpoint is also a commit on ``refs/heads/checkpoints`` whose message holds its record, so
the list is rebuilt from git if the JSON file is lost. It survives restarts (``-c``).
"""

from __future__ import annotations

import builtins
import json
import os
import shutil
import stat
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_FILES = 100_000  # new files in one snapshot above which the workspace is refused
PROMPT_MAX = 4000  # characters of the prompt kept with a checkpoint (for the picker)
STATE_FILE = "checkpoints.json"
INDEX_FILE = "owltui-index"
RESTORE_INDEX = "owltui-restore-index"
REF = "refs/heads/checkpoints"
FORMAT_VERSION = 1
GITLINK = "160000"
_NULL_MODE = "000000"

SkipReason = Literal["too large", "repository", "ignored"]

# Passed as -c to every git call (and written to the store's config): nothing of the user's runs.
_SAFE_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.bare", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.ignorecase", "false"),
    ("core.quotepath", "false"),
    ("core.sparseCheckout", "false"),
    ("core.splitIndex", "false"),
    ("core.untrackedCache", "false"),
    ("core.attributesFile", os.devnull),
    ("commit.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.addIgnoredFile", "false"),
    ("index.version", "4"),
    ("user.name", "OwlTUI checkpoints"),
    ("user.email", "checkpoints@owltui.invalid"),
)
# Highest-precedence attributes (GIT_DIR/info/attributes): content goes in and out byte for byte.
_ATTRIBUTES = "* -text -crlf -eol -filter -ident -working-tree-encoding -diff -merge\n"


class CheckpointError(Exception):
    """Checkpoints cannot be taken or restored here: the message is one sentence for the user."""


@dataclass(frozen=True)
class Skipped:
    """A path a checkpoint does not hold. ``path`` is relative to the workspace; a directory ends in
    ``/``. ``reason``: ``"too large"`` (``size`` bytes, over ``max_file_bytes``), ``"repository"``
    (a nested git repository, left out whole) or ``"ignored"`` (matched by the ignore rules)."""

    path: str
    reason: SkipReason
    size: int | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "reason": self.reason}
        if self.size is not None:
            out["size"] = self.size
        return out


@dataclass(frozen=True)
class Checkpoint:
    """The workspace's files just before one user turn.

    - ``id``: the turn id given to ``checkpoint`` (unique in the store).
    - ``prompt``: the turn's prompt (scrubbed, at most ``PROMPT_MAX`` characters).
    - ``at``: when it was taken, ISO 8601 in UTC (``2025-01-31T12:00:00+00:00``).
    - ``files``: how many paths changed between this checkpoint and the next one — what this turn
      (and anything else between the two turns) changed. For the newest checkpoint it is counted
      against the workspace as it is now by ``list()`` (``None`` when not known yet); once a
      restore happens or the next checkpoint is taken, the number is fixed.
    - ``leaf``: the conversation entry the session stood at when the checkpoint was taken (given
      by the caller), where a conversation rewind forks.
    - ``skipped``: what was left out at this checkpoint (too large, nested repositories).
    - ``tree``: the git tree of the workspace's files (workspace-relative paths).
    """

    id: str
    prompt: str
    at: str
    files: int | None
    tree: str
    commit: str = ""
    leaf: str | None = None
    skipped: tuple[Skipped, ...] = field(default=())

    def wire(self) -> dict[str, Any]:
        """The RPC ``checkpoints`` item: ``{id, prompt, at, files}``."""
        return {"id": self.id, "prompt": self.prompt, "at": self.at, "files": self.files}

    def record(self) -> dict[str, Any]:
        """The persisted form (``checkpoints.json`` and the commit message)."""
        return {"id": self.id, "prompt": self.prompt, "at": self.at, "files": self.files,
                "tree": self.tree, "commit": self.commit, "leaf": self.leaf,
                "skipped": [s.wire() for s in self.skipped]}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Checkpoint:
        skipped = tuple(Skipped(str(s["path"]), s["reason"], s.get("size"))
                        for s in data.get("skipped") or () if isinstance(s, dict) and "path" in s
                        and s.get("reason") in ("too large", "repository", "ignored"))
        files = data.get("files")
        leaf = data.get("leaf")
        return cls(id=str(data["id"]), prompt=str(data.get("prompt", "")), at=str(data.get("at", "")),
                   files=files if isinstance(files, int) else None, tree=str(data["tree"]),
                   commit=str(data.get("commit") or ""), leaf=leaf if isinstance(leaf, str) else None,
                   skipped=skipped)


@dataclass(frozen=True)
class _Change:
    """One row of ``git diff-tree --raw`` between a checkpoint (old) and another state (new)."""

    path: str
    old_mode: str
    new_mode: str

    @property
    def gitlink(self) -> bool:
        return GITLINK in (self.old_mode, self.new_mode)

    @property
    def added(self) -> bool:
        """Present now, absent at the checkpoint: restoring deletes it."""
        return self.old_mode == _NULL_MODE


@dataclass
class _Snapshot:
    tree: str
    skipped: list[Skipped]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _enclosing_repo(workspace: Path) -> tuple[Path, Path | None]:
    """The work tree git should use (the nearest directory at or above the workspace holding a
    ``.git``, else the workspace) and the user's git directory there, if any."""
    for directory in (workspace, *workspace.parents):
        dotgit = directory / ".git"
        if dotgit.is_dir():
            return directory, dotgit
        if dotgit.is_file():
            return directory, _gitfile_target(dotgit)
    return workspace, None


def _gitfile_target(dotgit: Path) -> Path | None:
    try:
        text = dotgit.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:"):].strip())
            return target if target.is_absolute() else (dotgit.parent / target)
    return None


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ""


def _user_excludes(user_gitdir: Path | None, env: dict[str, str]) -> str:
    """The user's exclude patterns git would apply at the repository level: the repository's
    ``info/exclude`` (a linked worktree's common directory too) and the default global ignore file."""
    parts: list[str] = []
    if user_gitdir is not None:
        parts.append(_read(user_gitdir / "info" / "exclude"))
        common = _read(user_gitdir / "commondir").strip()
        if common:
            base = Path(common) if os.path.isabs(common) else user_gitdir / common
            parts.append(_read(base / "info" / "exclude"))
    xdg = env.get("XDG_CONFIG_HOME", "")
    home = env.get("HOME", "")
    if xdg and os.path.isabs(xdg):
        parts.append(_read(Path(xdg) / "git" / "ignore"))
    elif home:
        parts.append(_read(Path(home) / ".config" / "git" / "ignore"))
    return "\n".join(p for p in parts if p.strip())


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _z(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


class CheckpointStore:
    """Checkpoints of ``workspace`` kept in ``directory`` (created if needed, mode 0700).

    ``max_file_bytes``: regular files larger than this are left out (``Skipped``, "too large").
    ``max_files``: a snapshot that would add more new files than this raises ``CheckpointError``
    (a home directory or a data dump is not checkpointed). ``scrub``: applied to the prompt before
    it is stored (the session's ``Redactor.scrub``). ``env``: where the user's global ignore file
    is looked up (``HOME``/``XDG_CONFIG_HOME``) and ``PATH`` for finding git; ``os.environ`` by
    default. Raises ``CheckpointError`` when git is missing or the directory cannot be used.
    """

    def __init__(self, workspace: Path, directory: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 max_files: int = DEFAULT_MAX_FILES, scrub: Callable[[str], str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.directory = Path(directory)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._scrub = scrub or (lambda text: text)
        self._lock = threading.RLock()
        source_env = dict(os.environ if env is None else env)
        git = shutil.which("git", path=source_env.get("PATH") or os.defpath)
        if git is None:
            raise CheckpointError("Checkpoints need the git program, which is not installed (not on PATH).")
        self._gitexe = git
        if not self.workspace.is_dir():
            raise CheckpointError(f"Cannot take checkpoints of {self.workspace}: it is not a directory.")
        self._source_env = source_env
        self._index = self.directory / INDEX_FILE
        self._neutral = self.directory / "home"
        self._hooks = self.directory / "no-hooks"
        self._env = {
            "PATH": source_env.get("PATH") or os.defpath,
            "GIT_DIR": str(self.directory),
            "GIT_INDEX_FILE": str(self._index),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "OwlTUI checkpoints",
            "GIT_AUTHOR_EMAIL": "checkpoints@owltui.invalid",
            "GIT_COMMITTER_NAME": "OwlTUI checkpoints",
            "GIT_COMMITTER_EMAIL": "checkpoints@owltui.invalid",
            "HOME": str(self._neutral),
            "XDG_CONFIG_HOME": str(self._neutral / ".config"),
            "LC_ALL": "C",
        }
        self._config_args: list[str] = []
        for key, value in (*_SAFE_CONFIG, ("core.hooksPath", str(self._hooks))):
            self._config_args += ["-c", f"{key}={value}"]
        self._checkpoints: list[Checkpoint] = []
        self._nested_cleared: set[str] = set()
        self._init_store()
        self._set_root(*_enclosing_repo(self.workspace))
        if self._prefix:
            # Inside a repository, its ignore rules above the workspace count too (git reads the
            # .gitignore files from its top level down) — unless they ignore the workspace itself.
            self._sync_excludes()
            probe = self._run(["check-ignore", "-q", "--no-index", self._prefix], cwd=self._root, check=False)
            if probe.returncode == 0:
                self._set_root(self.workspace, None)
        self._load()

    def _set_root(self, root: Path, user_gitdir: Path | None) -> None:
        self._root, self._user_gitdir = root, user_gitdir
        rel = self.workspace.relative_to(root).as_posix()
        self._prefix = "" if rel == "." else rel + "/"
        self._env["GIT_WORK_TREE"] = str(root)

    # ---- public API ----------------------------------------------------------------------
    def checkpoint(self, turn_id: str, prompt: str, *, leaf: str | None = None) -> Checkpoint:
        """Record the workspace's files now, before the turn ``turn_id`` (a unique id; the
        checkpoint's ``id``) with ``prompt`` runs. Also fixes the previous checkpoint's ``files``.
        CheckpointError when ``turn_id`` is already used or git fails."""
        with self._lock:
            turn_id = turn_id or uuid.uuid4().hex[:12]
            if any(c.id == turn_id for c in self._checkpoints):
                raise CheckpointError(f"There is already a checkpoint with id {turn_id}.")
            snap = self._snapshot()
            if self._checkpoints and self._checkpoints[-1].files is None:
                last = self._checkpoints[-1]
                self._checkpoints[-1] = replace(last, files=len(self._changes(last.tree, snap.tree)))
            prompt = self._scrub(prompt)[:PROMPT_MAX]
            cp = Checkpoint(id=turn_id, prompt=prompt, at=_now_iso(), files=None, tree=snap.tree,
                            leaf=leaf, skipped=tuple(snap.skipped))
            parent = self._checkpoints[-1].commit if self._checkpoints else ""
            message = json.dumps(cp.record(), ensure_ascii=True).encode() + b"\n"
            args = ["commit-tree", snap.tree, *(["-p", parent] if parent else [])]
            commit = self._git(*args, input=message).decode().strip()
            self._git("update-ref", REF, commit)
            cp = replace(cp, commit=commit)
            self._checkpoints.append(cp)
            self._save()
            return cp

    def warm(self) -> None:
        """Take a snapshot without recording a checkpoint, so the first turn's checkpoint is
        incremental (the first snapshot hashes every file)."""
        with self._lock:
            self._snapshot()

    def list(self, *, current: bool = True) -> builtins.list[Checkpoint]:
        """Every checkpoint, oldest first. With ``current`` the newest one's ``files`` is counted
        against the workspace now (one snapshot); otherwise it may be ``None``."""
        with self._lock:
            changed = False
            for i in range(len(self._checkpoints) - 1):
                cp = self._checkpoints[i]
                if cp.files is None:
                    nxt = self._checkpoints[i + 1]
                    self._checkpoints[i] = replace(cp, files=len(self._changes(cp.tree, nxt.tree)))
                    changed = True
            if changed:
                self._save()
            out = builtins.list(self._checkpoints)
            if current and out and out[-1].files is None:
                out[-1] = replace(out[-1], files=len(self._changes(out[-1].tree, self._snapshot().tree)))
            return out

    def get(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with this id; CheckpointError when there is none."""
        with self._lock:
            for cp in self._checkpoints:
                if cp.id == checkpoint_id:
                    return cp
        raise CheckpointError(f"There is no checkpoint {checkpoint_id}.")

    def latest(self) -> Checkpoint | None:
        with self._lock:
            return self._checkpoints[-1] if self._checkpoints else None

    def changed_since(self, checkpoint_id: str) -> builtins.list[str]:
        """The workspace paths that differ now from checkpoint ``checkpoint_id`` (sorted): what
        ``restore`` would rewrite, recreate or delete. A path that restore finally keeps because
        the checkpoint's own ignore rules exclude it may be listed here."""
        with self._lock:
            cp = self.get(checkpoint_id)
            writes, deletes = self._plan(cp, self._snapshot().tree)
            return sorted({*writes, *deletes})

    def restore(self, checkpoint_id: str) -> builtins.list[str]:
        """Put the workspace's files back as they were at checkpoint ``checkpoint_id``: files
        modified since are rewritten, files deleted since are recreated, files created since are
        deleted (and directories their deletion leaves empty removed). Left alone: ignored files
        (under the checkpoint's ignore rules), files too large at the checkpoint, nested
        repositories, and a path where a directory now stands in place of a checkpointed file.
        Returns the paths rewritten, recreated or deleted, sorted (workspace-relative).

        The state before the restore is snapshotted first (its objects stay in the store) and
        fixes the newest checkpoint's ``files``. The checkpoints are kept (also those after
        ``checkpoint_id``): a later restore can go forward again."""
        with self._lock:
            cp = self.get(checkpoint_id)
            now = self._snapshot().tree
            last = self._checkpoints[-1]
            if last.files is None:
                self._checkpoints[-1] = replace(last, files=len(self._changes(last.tree, now)))
                self._save()
            writes, deletes = self._plan(cp, now)
            if not writes and not deletes:
                return []
            done: set[str] = set()
            ignore_files = {p for p in (*writes, *deletes) if p.rsplit("/", 1)[-1] == ".gitignore"}
            if ignore_files and deletes:
                # The checkpoint's ignore rules decide which of the new files existed then unseen:
                # put its .gitignore files back first, then ask git which deletions they ignore.
                done |= self._delete([p for p in deletes if p in ignore_files])
                done |= self._checkout(cp.tree, [p for p in writes if p in ignore_files])
                rest = [p for p in deletes if p not in ignore_files]
                kept = set(self._ignored(rest))
                deletes = [p for p in rest if p not in kept]
                writes = [p for p in writes if p not in ignore_files]
            done |= self._delete(deletes)
            done |= self._checkout(cp.tree, writes)
            return sorted(done)

    def undo(self) -> builtins.list[str]:
        """Rewind the last turn's file changes: ``restore`` of the newest checkpoint."""
        last = self.latest()
        if last is None:
            raise CheckpointError("There is no checkpoint to go back to yet.")
        return self.restore(last.id)

    def skipped(self, checkpoint_id: str) -> builtins.list[Skipped]:
        """What checkpoint ``checkpoint_id`` does not hold, for the picker: files too large and
        nested repositories at the time it was taken, then the ignored files and directories
        present in the workspace now (``"ignored"``; a wholly ignored directory is one entry
        ending in ``/``)."""
        with self._lock:
            cp = self.get(checkpoint_id)
            out = builtins.list(cp.skipped)
            listed = {s.path for s in out}
            ignored = _split_z(self._git("ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                                         "--directory", "--no-empty-directory"))
            out += [Skipped(p, "ignored") for p in sorted(ignored) if p not in listed]
            return out

    # ---- the shadow repository -----------------------------------------------------------
    def _init_store(self) -> None:
        fresh = not (self.directory / "objects").is_dir()
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            if fresh:
                env = {k: v for k, v in self._env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
                self._run(["init", "--quiet", "--bare", "--template=", str(self.directory)], env=env,
                          cwd=self.directory)
            for sub in ("info", "no-hooks", "home"):
                (self.directory / sub).mkdir(exist_ok=True, mode=0o700)
            sections: dict[str, list[str]] = {"core": ["repositoryformatversion = 0",
                                                       "logallrefupdates = false",
                                                       f"hooksPath = {self._hooks}"]}
            for key, value in _SAFE_CONFIG:
                section, name = key.split(".", 1)
                sections.setdefault(section, []).append(f"{name} = {value}")
            text = "".join(f"[{section}]\n" + "".join(f"\t{line}\n" for line in lines)
                           for section, lines in sections.items())
            self._write_if_changed(self.directory / "config", text)
            self._write_if_changed(self.directory / "info" / "attributes", _ATTRIBUTES)
        except OSError as exc:
            raise CheckpointError(f"Cannot keep checkpoints in {self.directory}: "
                                  f"{(exc.strerror or str(exc)).lower()}.") from None

    @staticmethod
    def _write_if_changed(path: Path, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        try:
            if path.read_bytes() == data:
                return
        except OSError:
            pass
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def _sync_excludes(self) -> None:
        """The store's ``info/exclude``: the user's repository-level and global excludes (kept
        current; reading them runs nothing)."""
        text = "# maintained by OwlTUI: the user's exclude rules\n/.git\n"
        text += _user_excludes(self._user_gitdir, self._source_env)
        self._write_if_changed(self.directory / "info" / "exclude", text + "\n")

    def _run(self, args: Sequence[str], *, env: dict[str, str] | None = None, input: bytes | None = None,
             cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run([self._gitexe, *self._config_args, *args], cwd=cwd or self.workspace,
                                  env=env or self._env, input=input, capture_output=True,
                                  stdin=None if input is not None else subprocess.DEVNULL)
        except OSError as exc:
            raise CheckpointError(f"Cannot run git for checkpoints: {exc.strerror or exc}.") from None
        if check and proc.returncode != 0:
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            why = detail[-1].removeprefix("fatal: ").removeprefix("error: ") if detail else \
                f"exit status {proc.returncode}"
            raise CheckpointError(f"Checkpoint git {args[0]} failed: {why}")
        return proc

    def _git(self, *args: str, input: bytes | None = None) -> bytes:
        return self._run(args, input=input).stdout

    # ---- snapshots -----------------------------------------------------------------------
    def _snapshot(self) -> _Snapshot:
        """Bring the private index up to the workspace and write its tree (workspace-relative)."""
        self._sync_excludes()
        out = self._git("ls-files", "-z", "-t", "--modified", "--deleted", "--others", "--exclude-standard")
        entries = [(e[0], e[2:]) for e in _split_z(out) if len(e) > 2]
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
                st = os.lstat(self.workspace / path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > self.max_file_bytes:
                skipped.append(Skipped(path, "too large", st.st_size))
                excluded.add(path)
                if tag == "C":
                    tracked_large.append(path)
        if new_files > self.max_files:
            raise CheckpointError(f"Checkpoints are off for {self.workspace}: it has {new_files} files to "
                                  f"record, more than the limit of {self.max_files}; ignore rules "
                                  "(.gitignore) can leave the bulk out.")
        if any(path not in excluded for _, path in entries):
            pathspecs = [".", *(f":(exclude,literal){p}" for p in sorted(excluded))]
            self._run(["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"], input=_z(pathspecs))
        stale = tracked_large + [p for p in nested if p not in self._nested_cleared]
        if stale:
            specs = _z(f":(literal){p}" for p in stale)
            self._run(["rm", "-r", "--cached", "--force", "--quiet", "--ignore-unmatch",
                       "--pathspec-from-file=-", "--pathspec-file-nul"], input=specs)
            self._nested_cleared.update(nested)
        skipped.sort(key=lambda s: s.path)
        return _Snapshot(self._write_tree(), skipped)

    def _write_tree(self) -> str:
        if not self._prefix:
            return self._git("write-tree").decode().strip()
        proc = self._run(["write-tree", f"--prefix={self._prefix}"], check=False)
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
        return self._empty_tree()  # nothing under the workspace is in the index

    def _empty_tree(self) -> str:
        return self._git("mktree", input=b"").decode().strip()

    def _changes(self, old: str, new: str) -> builtins.list[_Change]:
        if old == new:
            return []
        out = self._git("diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-ext-diff", old, new)
        fields = out.split(b"\0")
        changes: builtins.list[_Change] = []
        i = 0
        while i + 1 < len(fields):
            meta = fields[i]
            if not meta.startswith(b":"):
                i += 1
                continue
            old_mode, new_mode = meta[1:].decode().split(" ")[:2]
            change = _Change(os.fsdecode(fields[i + 1]), old_mode, new_mode)
            if not change.gitlink:
                changes.append(change)
            i += 2
        return changes

    # ---- restoring -----------------------------------------------------------------------
    def _plan(self, cp: Checkpoint, now: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(paths to write from the checkpoint, paths to delete) to go from ``now`` to ``cp``."""
        left_out = [s.path for s in cp.skipped if s.reason != "ignored"]
        writes: builtins.list[str] = []
        deletes: builtins.list[str] = []
        for change in self._changes(cp.tree, now):
            if not change.added:
                writes.append(change.path)
            elif not any(change.path == p or (p.endswith("/") and change.path.startswith(p))
                         for p in left_out):
                deletes.append(change.path)
        return writes, deletes

    def _ignored(self, paths: Sequence[str]) -> builtins.list[str]:
        if not paths:
            return []
        proc = self._run(["check-ignore", "-z", "--no-index", "--stdin"], input=_z(paths), check=False)
        if proc.returncode not in (0, 1):
            raise CheckpointError("Checkpoint git check-ignore failed: "
                                  + proc.stderr.decode("utf-8", "replace").strip())
        return _split_z(proc.stdout)

    def _safe_parent(self, rel: str) -> bool:
        """Every directory between the workspace and ``rel`` is a real directory (no symbolic link
        leads out of the workspace)."""
        current = self.workspace
        for part in rel.split("/")[:-1]:
            current = current / part
            try:
                if not stat.S_ISDIR(os.lstat(current).st_mode):
                    return False
            except OSError:
                return False
        return True

    def _delete(self, paths: Sequence[str]) -> set[str]:
        done: set[str] = set()
        parents: set[Path] = set()
        for rel in paths:
            if not self._safe_parent(rel):
                continue
            target = self.workspace / rel
            try:
                if stat.S_ISDIR(os.lstat(target).st_mode):
                    continue  # a directory stands there now: not what the snapshot saw
                os.unlink(target)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise CheckpointError(f"Cannot delete {rel} while restoring a checkpoint: "
                                      f"{(exc.strerror or str(exc)).lower()}.") from None
            done.add(rel)
            parents.add(target.parent)
        for directory in sorted(parents, key=lambda p: len(p.parts), reverse=True):
            while directory != self.workspace and self.workspace in directory.parents:
                try:
                    directory.rmdir()
                except OSError:
                    break
                directory = directory.parent
        return done

    def _checkout(self, tree: str, paths: Sequence[str]) -> set[str]:
        todo = []
        for rel in paths:
            try:
                if stat.S_ISDIR(os.lstat(self.workspace / rel).st_mode):
                    continue  # a directory (maybe holding ignored files) is never swept away
            except OSError:
                pass
            todo.append(rel)
        if not todo:
            return set()
        scratch = self.directory / RESTORE_INDEX
        scratch.unlink(missing_ok=True)
        env = {**self._env, "GIT_INDEX_FILE": str(scratch)}
        try:
            args = ["read-tree", *([f"--prefix={self._prefix}"] if self._prefix else []), tree]
            self._run(args, env=env)
            self._run(["checkout-index", "--force", "-z", "--stdin"], env=env, input=_z(todo))
        finally:
            scratch.unlink(missing_ok=True)
        return set(todo)

    # ---- persistence ---------------------------------------------------------------------
    def _state_path(self) -> Path:
        return self.directory / STATE_FILE

    def _load(self) -> None:
        data: dict[str, Any] | None = None
        try:
            loaded = json.loads(self._state_path().read_bytes())
            if isinstance(loaded, dict) and isinstance(loaded.get("checkpoints"), builtins.list):
                data = loaded
        except (OSError, ValueError):
            data = None
        if data is not None:
            try:
                self._checkpoints = [Checkpoint.from_record(r) for r in data["checkpoints"]]
            except (KeyError, TypeError):
                data = None
        if data is None:
            self._checkpoints = self._rebuild()
        elif data.get("root") != str(self._root) or data.get("prefix") != self._prefix:
            # The workspace moved inside or out of a repository: the index's paths no longer fit.
            self._index.unlink(missing_ok=True)
        if data is None and self._checkpoints:
            self._save()

    def _rebuild(self) -> builtins.list[Checkpoint]:
        """The checkpoint list from the commits on REF (when ``checkpoints.json`` is lost)."""
        proc = self._run(["log", "--reverse", "--format=%H%x00%B%x00", REF, "--"], check=False)
        if proc.returncode != 0:
            return []
        fields = proc.stdout.split(b"\0")
        out: builtins.list[Checkpoint] = []
        for i in range(0, len(fields) - 1, 2):
            commit = fields[i].decode().strip()
            try:
                record = json.loads(fields[i + 1])
                out.append(replace(Checkpoint.from_record(record), commit=commit))
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def _save(self) -> None:
        data = {"version": FORMAT_VERSION, "workspace": str(self.workspace), "root": str(self._root),
                "prefix": self._prefix, "checkpoints": [c.record() for c in self._checkpoints]}
        payload = json.dumps(data, ensure_ascii=True, indent=1).encode() + b"\n"
        path = self._state_path()
        tmp = path.with_name(path.name + ".tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise CheckpointError(f"Cannot save the checkpoint list in {self.directory}: "
                                  f"{(exc.strerror or str(exc)).lower()}.") from None
