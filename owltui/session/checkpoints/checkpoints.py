"""Checkpoints: the workspace's files before each user turn, and rewinding them.

A ``CheckpointStore`` keeps a *shadow* git object store (one per workspace, shared by its sessions;
or, for sessions from before stores were shared, one in the session's directory) and drives the
``git`` program with its own ``GIT_DIR``, ``GIT_WORK_TREE`` and a private ``GIT_INDEX_FILE``. The
user's repository is never written; it is read for its ignore rules and, for the first snapshot of
a store, as data: its index and objects (``owltui.session.checkpoints.shared``). So a checkpoint
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
    The private index keeps stat information, so a later snapshot is one ``ls-files`` walk, an
    ``update-index`` of just the changes and a ``write-tree`` (``bench/checkpoint_cost.py``). The
    index is the store's: a new session starts from the last one's. A store's first snapshot hashes
    every file (in a git repository only those changed or untracked: it starts from the user's
    index; too many new files are only hashed, not copied: ``unread``); ``warm()`` takes it ahead
    of the first turn. Methods are synchronous (they run git) and thread-safe; the store's file
    lock lets one session at a time use the index: call them from a worker thread.

A session's checkpoint list lives in ``sessions/<session>.json`` in a shared store
(``checkpoints.json`` in a store of one session), written atomically, and every checkpoint is also
a commit on the session's ref (``refs/sessions/<session>``; ``refs/heads/checkpoints``) whose
message holds its record, so the list is rebuilt from git if the JSON file is lost. It survives
restarts (``-c``).

This module owns ``CheckpointStore`` (the public API and the checkpoint list in memory). The
pieces: ``git`` (the shadow store's git: private environment, ``-c`` options, the user's
excludes), ``files`` (snapshots, what changed, putting files back), ``shared`` (the store lock,
starting from the user's index, copying borrowed objects) and ``records`` (``Checkpoint``,
``Skipped``, the list file).
"""

from __future__ import annotations

import builtins
import json
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from owltui.session.checkpoints.files import (
    Snapshot,
    changes,
    checkout,
    delete,
    ignored,
    plan,
    present_ignored,
    snapshot,
    unreadable,
)
from owltui.session.checkpoints.git import REF, ShadowGit, enclosing_repo
from owltui.session.checkpoints.records import (
    FORMAT_VERSION,
    PROMPT_MAX,
    STATE_FILE,
    Checkpoint,
    CheckpointError,
    Skipped,
    parse_log,
    read_state,
    write_state,
)
from owltui.session.checkpoints.shared import adopt_borrowed, check_layout, seed_index, store_lock
from owltui.session.checkpoints.unread import notice

__all__ = ["DEFAULT_MAX_FILES", "DEFAULT_MAX_FILE_BYTES", "CheckpointStore"]

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_FILES = 100_000  # new files in one snapshot above which they are recorded by hash only
SESSIONS_DIR = "sessions"  # in a shared store: one list file per session
SESSION_REFS = "refs/sessions/"


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class CheckpointStore:
    """Checkpoints of ``workspace`` kept in ``directory`` (created if needed, mode 0700).

    ``max_file_bytes``: regular files larger than this are left out (``Skipped``, "too large").
    ``max_files``: a snapshot that would add more new files than this records them by hash only, without
    copying them (``unread``; ``notices`` then holds one line for the user). ``scrub``: applied to the
    prompt before it is stored (the session's ``Redactor.scrub``). ``env``: where the user's global
    ignore file is looked up (``HOME``/``XDG_CONFIG_HOME``) and ``PATH`` for finding git; ``os.environ``
    by default. ``session``: the session's name in a store shared by a workspace's sessions (its
    checkpoints on ``refs/sessions/<session>``, its list in ``sessions/<session>.json``); None: a store
    of one session (``refs/heads/checkpoints``, ``checkpoints.json``). ``copy_borrowed``: when the store
    borrows the user's objects (the first snapshot of a repository started from the user's index), copy
    them into the store in a background thread. Raises ``CheckpointError`` when git is missing or the
    directory cannot be used.
    """

    def __init__(
        self,
        workspace: Path,
        directory: Path,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
        scrub: Callable[[str], str] | None = None,
        env: dict[str, str] | None = None,
        session: str | None = None,
        copy_borrowed: bool = False,
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.directory = Path(directory)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._scrub = scrub or (lambda text: text)
        self._lock = threading.RLock()
        self._held = 0  # depth of ``_guard`` calls holding the store lock (this thread, via _lock)
        self._copy_borrowed = copy_borrowed
        self._copying: threading.Thread | None = None
        if session is None:
            self._ref, self._state = REF, self.directory / STATE_FILE
        else:
            name = re.sub(r"[^A-Za-z0-9_-]+", "-", session).strip("-") or "session"
            self._ref, self._state = SESSION_REFS + name, self.directory / SESSIONS_DIR / f"{name}.json"
        source_env = dict(os.environ if env is None else env)
        self._shadow = ShadowGit(self.workspace, self.directory, source_env)
        if not self.workspace.is_dir():
            raise CheckpointError(f"Cannot take checkpoints of {self.workspace}: it is not a directory.")
        self._checkpoints: list[Checkpoint] = []
        self._nested_cleared: set[str] = set()
        self.notices: builtins.list[str] = []  # lines for the user (taken and cleared by the session)
        try:
            self._state.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise CheckpointError(
                f"Cannot keep checkpoints in {self.directory}: {(exc.strerror or str(exc)).lower()}."
            ) from None
        with self._guard():
            self._open()

    def _open(self) -> None:
        shadow = self._shadow
        shadow.init_store()
        shadow.set_root(*enclosing_repo(self.workspace))
        if shadow.prefix:
            # Inside a repository, its ignore rules above the workspace count too (git reads the
            # .gitignore files from its top level down) — unless they ignore the workspace itself.
            shadow.sync_excludes()
            probe = shadow.run(
                ["check-ignore", "-q", "--no-index", shadow.prefix], cwd=shadow.root, check=False
            )
            if probe.returncode == 0:
                shadow.set_root(self.workspace, None)
        self._load()

    # ---- public API ----------------------------------------------------------------------
    def checkpoint(self, turn_id: str, prompt: str, *, leaf: str | None = None) -> Checkpoint:
        """Record the workspace's files now, before the turn ``turn_id`` (a unique id; the
        checkpoint's ``id``) with ``prompt`` runs. Also fixes the previous checkpoint's ``files``.
        CheckpointError when ``turn_id`` is already used or git fails."""
        with self._guard():
            turn_id = turn_id or uuid.uuid4().hex[:12]
            if any(c.id == turn_id for c in self._checkpoints):
                raise CheckpointError(f"There is already a checkpoint with id {turn_id}.")
            snap = self._snapshot()
            if self._checkpoints and self._checkpoints[-1].files is None:
                last = self._checkpoints[-1]
                self._checkpoints[-1] = replace(last, files=self._changed(last.tree, snap.tree))
            prompt = self._scrub(prompt)[:PROMPT_MAX]
            cp = Checkpoint(
                id=turn_id,
                prompt=prompt,
                at=_now_iso(),
                files=None,
                tree=snap.tree,
                leaf=leaf,
                skipped=tuple(snap.skipped),
            )
            parent = self._checkpoints[-1].commit if self._checkpoints else ""
            message = json.dumps(cp.record(), ensure_ascii=True).encode() + b"\n"
            args = ["commit-tree", snap.tree, *(["-p", parent] if parent else [])]
            commit = self._shadow.git(*args, input=message).decode().strip()
            self._shadow.git("update-ref", self._ref, commit)
            cp = replace(cp, commit=commit)
            self._checkpoints.append(cp)
            self._save()
            return cp

    def warm(self) -> None:
        """Take a snapshot without recording a checkpoint, so the first turn's checkpoint is
        incremental (the first snapshot hashes every file, or every changed one when it starts
        from the user's git index). Nothing to do when the store's index is already there (an
        earlier session of the workspace made it): the first checkpoint is incremental anyway."""
        with self._guard():
            if not self._shadow.index.exists():
                self._snapshot()

    def list(self, *, current: bool = True) -> builtins.list[Checkpoint]:
        """Every checkpoint, oldest first. With ``current`` the newest one's ``files`` is counted
        against the workspace now (one snapshot); otherwise it may be ``None``."""
        with self._guard():
            changed = False
            for i in range(len(self._checkpoints) - 1):
                cp = self._checkpoints[i]
                if cp.files is None:
                    nxt = self._checkpoints[i + 1]
                    self._checkpoints[i] = replace(cp, files=self._changed(cp.tree, nxt.tree))
                    changed = True
            if changed:
                self._save()
            out = builtins.list(self._checkpoints)
            if current and out and out[-1].files is None:
                out[-1] = replace(out[-1], files=self._changed(out[-1].tree, self._snapshot().tree))
            return out

    def get(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with this id; CheckpointError when there is none."""
        with self._guard():
            for cp in self._checkpoints:
                if cp.id == checkpoint_id:
                    return cp
        raise CheckpointError(f"There is no checkpoint {checkpoint_id}.")

    def latest(self) -> Checkpoint | None:
        with self._guard():
            return self._checkpoints[-1] if self._checkpoints else None

    def changed_since(self, checkpoint_id: str) -> builtins.list[str]:
        """The workspace paths that differ now from checkpoint ``checkpoint_id`` (sorted): what
        ``restore`` would rewrite, recreate or delete. A path that restore finally keeps because
        the checkpoint's own ignore rules exclude it may be listed here."""
        with self._guard():
            cp = self.get(checkpoint_id)
            writes, deletes = plan(cp, changes(self._shadow, cp.tree, self._snapshot().tree))
            return sorted({*writes, *deletes})

    def restore(self, checkpoint_id: str) -> builtins.list[str]:
        """``restore_report``'s paths done."""
        return self.restore_report(checkpoint_id)[0]

    def restore_report(self, checkpoint_id: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Put the workspace's files back as they were at checkpoint ``checkpoint_id``: files modified
        since are rewritten, files deleted since are recreated, files created since are deleted (and
        directories their deletion leaves empty removed). Left alone: ignored files (under the
        checkpoint's ignore rules), files too large at the checkpoint, nested repositories, and a path
        where a directory now stands in place of a checkpointed file. Returns (the paths rewritten,
        recreated or deleted; the paths whose bytes at the checkpoint the store never copied,
        ``unread``), both sorted and workspace-relative.

        The state before the restore is snapshotted first (its objects stay in the store) and fixes the
        newest checkpoint's ``files``. The checkpoints are kept (also those after ``checkpoint_id``): a
        later restore can go forward again."""
        with self._guard():
            cp = self.get(checkpoint_id)
            now = self._snapshot().tree
            diff = changes(self._shadow, cp.tree, now)
            last = self._checkpoints[-1]
            if last.files is None:
                since_last = len(diff) if last.tree == cp.tree else self._changed(last.tree, now)
                self._checkpoints[-1] = replace(last, files=since_last)
                self._save()
            writes, deletes = plan(cp, diff)
            writes, lost = unreadable(self._shadow, writes)
            if not writes and not deletes:
                return [], lost
            done: set[str] = set()
            ignore_files = {p for p in (*writes, *deletes) if p.rsplit("/", 1)[-1] == ".gitignore"}
            if ignore_files and deletes:
                # The checkpoint's ignore rules decide which of the new files existed then unseen:
                # put its .gitignore files back first, then ask git which deletions they ignore.
                done |= delete(self.workspace, [p for p in deletes if p in ignore_files])
                done |= checkout(self._shadow, [c for p, c in writes.items() if p in ignore_files])
                rest = [p for p in deletes if p not in ignore_files]
                kept = set(ignored(self._shadow, rest))
                deletes = [p for p in rest if p not in kept]
                writes = {p: c for p, c in writes.items() if p not in ignore_files}
            done |= delete(self.workspace, deletes)
            done |= checkout(self._shadow, list(writes.values()))
            return sorted(done), lost

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
        with self._guard():
            cp = self.get(checkpoint_id)
            out = builtins.list(cp.skipped)
            listed = {s.path for s in out}
            out += [Skipped(p, "ignored") for p in present_ignored(self._shadow) if p not in listed]
            return out

    def adopt_borrowed(self) -> bool:
        """Copy the objects borrowed from the user's repository into the store and stop borrowing
        (``shared.adopt_borrowed``); True when nothing is borrowed any more. Slow: not under the
        store's locks, snapshots go on meanwhile."""
        return adopt_borrowed(self._shadow)

    # ---- helpers ------------------------------------------------------------------------
    @contextmanager
    def _guard(self) -> Iterator[None]:
        """This store's thread lock and the store directory's file lock (the shared index)."""
        with self._lock:
            if self._held:
                self._held += 1
                try:
                    yield
                finally:
                    self._held -= 1
                return
            with store_lock(self.directory):
                self._held = 1
                try:
                    yield
                finally:
                    self._held = 0

    def _snapshot(self) -> Snapshot:
        g = self._shadow
        if not g.index.exists() and g.user_gitdir is not None:
            seed_index(g, self.max_file_bytes)
        snap = snapshot(g, self.max_file_bytes, self.max_files, self._nested_cleared)
        if snap.unread:
            self.notices.append(notice(snap.unread, self.max_files))
        if self._copy_borrowed and self._copying is None and g.borrowed() is not None:
            self._copying = threading.Thread(target=self._adopt, name="owltui-checkpoint-copy", daemon=True)
            self._copying.start()
        return snap

    def _adopt(self) -> None:
        try:
            adopt_borrowed(self._shadow)
        except (CheckpointError, OSError):
            pass  # still borrowing: the next session's first snapshot tries again

    def _changed(self, old: str, new: str) -> int:
        return len(changes(self._shadow, old, new))

    # ---- persistence ---------------------------------------------------------------------
    def _load(self) -> None:
        """The list from ``checkpoints.json``, else rebuilt from the commits on REF."""
        state = read_state(self._state)
        if state is None:
            check_layout(self._shadow, None, None)
            proc = self._shadow.run(
                ["log", "--reverse", "--format=%H%x00%B%x00", self._ref, "--"], check=False
            )
            self._checkpoints = parse_log(proc.stdout) if proc.returncode == 0 else []
            if self._checkpoints:
                self._save()
            return
        self._checkpoints, data = state
        # The workspace moved inside or out of a repository: the index's paths no longer fit.
        check_layout(self._shadow, str(data.get("root")), str(data.get("prefix")))

    def _save(self) -> None:
        data = {
            "version": FORMAT_VERSION,
            "workspace": str(self.workspace),
            "root": str(self._shadow.root),
            "prefix": self._shadow.prefix,
            "checkpoints": [c.record() for c in self._checkpoints],
        }
        write_state(self._state, data)
