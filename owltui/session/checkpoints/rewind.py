"""Checkpoints in a session, and rewinding files and conversation.

``Checkpointing`` is what the runtime wires: a ``CheckpointStore`` shared by the workspace's
sessions and kept between runs (``$XDG_DATA_HOME/owltui/checkpoints/<workspace key>.git``, the
session's checkpoints on their own ref there), so a new session costs what changed since the last
one; a session whose own store exists (``<session file without .jsonl>/checkpoints.git``, from
before stores were shared) keeps using it; a temporary directory with ``--no-session``. Warmed
in a worker thread at start, and a checkpoint before each user turn (the loop's
``before_user_turn``: the first prompt and each delivered follow-up). Git work always runs in a
worker thread (``anyio.to_thread``). The first ``CheckpointError`` is one warning and turns
checkpoints off for the session; a turn never fails because of them.

Each checkpoint remembers where the conversation stood (``leaf``): the session store's entry id,
or with ``--no-session`` a key to a copy of the in-memory history. Rewinding the conversation
forks the session there (``SessionStore.branch_from``: the old branch stays in the file) or puts
the copy back (``MemoryHistory``); rewinding files is ``CheckpointStore.restore``.

``owltui.session.checkpoints.listing`` words the ``/rewind`` picker (prompt, time, files, what a
checkpoint leaves out).
"""

from __future__ import annotations

import subprocess
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

from owltui.agent.agent import Agent
from owltui.agent.context import ContextBudget
from owltui.agent.history import Compactable, CompactionMark, MemoryHistory
from owltui.agent.hooks import Permission
from owltui.agent.messages import Item, ToolCall, UserMessage
from owltui.session.paths import data_dir, workspace_key
from owltui.session.store.file import SessionError
from owltui.session.store.store import SessionStore

if TYPE_CHECKING:  # imported when first used: the git side is not on the start-up path
    from owltui.session.checkpoints.checkpoints import CheckpointStore
    from owltui.session.checkpoints.listing import Listing
    from owltui.session.checkpoints.records import Checkpoint

Warn = Callable[[str], None]
STORE_NAME = "checkpoints.git"  # a session's own store, in its session directory (older sessions)
SHARED_DIR = "checkpoints"  # in the data directory: one store per workspace
T = TypeVar("T")
MEMORY_LEAF = "memory-"  # a --no-session leaf: a key into the copies of the in-memory history


class RewindError(Exception):
    """A rewind that cannot be done: one sentence for the user."""


@dataclass(frozen=True)
class Rewound:
    restored: list[str]  # workspace paths rewritten, recreated or deleted
    conversation: bool  # the conversation was forked at the checkpoint
    prompt: str = ""  # the prompt of the checkpoint's turn
    unrestored: tuple[str, ...] = ()  # paths whose bytes then were recorded by hash only (unread)


class Checkpointing:
    """The session's checkpoints (see the module). ``directory``: the session's own store
    (``<session directory>/checkpoints.git``), used when it exists, else the workspace's shared
    store with the session directory's name as the session's; None: a temporary directory,
    removed by ``close``."""

    def __init__(
        self,
        agent: Agent,
        workspace: Path,
        directory: Path | None,
        *,
        max_file_bytes: int,
        max_files: int | None = None,
        scrub: Callable[[str], str] | None = None,
        env: Mapping[str, str] | None = None,
        warn: Warn | None = None,
        budget_mb: int | None = None,
    ) -> None:
        self.agent = agent
        self.budget_mb = budget_mb  # the shared store's size budget (None: the default)
        self._sessions_dir: Path | None = None  # where the workspace's session files are
        self.prune_checked = threading.Event()  # set once the start-up look at pruning is over
        self.pruning: subprocess.Popen[bytes] | None = None  # the pruning process it started
        self.workspace = workspace
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files  # None: the store's default
        self._scrub = scrub
        self._env = dict(env) if env is not None else None
        self._warn = warn or (lambda _text: None)
        self._lock = threading.Lock()  # creating the store (warm thread and first turn may race)
        self._store: CheckpointStore | None = None
        self._temp: Path | None = None
        self._memory: dict[str, tuple[list[Item], CompactionMark | None]] = {}
        self.error: str | None = None  # why checkpoints are off (None: on)
        self.session: str | None = None  # the session's name in a shared store
        self.directory = self._place(directory)
        self._pending: threading.Event | None = None  # the current turn's snapshot, being taken
        self._failed: Exception | None = None

    # ---- the store ------------------------------------------------------------------------
    def _place(self, directory: Path | None) -> Path:
        self.session = None
        if directory is not None:
            if (directory / "objects").is_dir():
                return directory  # an older session's own store: it keeps its checkpoints there
            self.session = directory.parent.name
            self._sessions_dir = directory.parent.parent
            shared = data_dir(self._env) / SHARED_DIR
            return shared / f"{workspace_key(self.workspace)}.git"
        import tempfile

        self._temp = Path(tempfile.mkdtemp(prefix="owltui-checkpoints-"))
        return self._temp / STORE_NAME

    def store(self) -> CheckpointStore:
        """The checkpoint store, created on first use (runs git: call from a worker thread)."""
        from owltui.session.checkpoints.checkpoints import DEFAULT_MAX_FILES, CheckpointStore
        from owltui.session.checkpoints.records import CheckpointError

        with self._lock:
            if self.error is not None:
                raise CheckpointError(f"Checkpoints are off for this session: {self.error}")
            if self._store is None:
                self._store = CheckpointStore(
                    self.workspace,
                    self.directory,
                    max_file_bytes=self.max_file_bytes,
                    max_files=self.max_files or DEFAULT_MAX_FILES,
                    scrub=self._scrub,
                    env=self._env,
                    session=self.session,
                    copy_borrowed=self.session is not None,
                )
            return self._store

    @property
    def enabled(self) -> bool:
        return self.error is None

    def _disable(self, exc: Exception) -> None:
        if self.error is None:
            self.error = str(exc) or type(exc).__name__
            self._warn(f"checkpoints are off for this session: {self.error}")

    async def warm(self) -> None:
        """First snapshot ahead of the first turn (in a worker thread); failures turn checkpoints off."""
        from owltui.session.checkpoints.records import CheckpointError

        try:
            await anyio.to_thread.run_sync(lambda: self.store().warm())
        except (CheckpointError, OSError) as exc:
            self._disable(exc)
            self.prune_checked.set()
            return
        self._tell()
        await anyio.to_thread.run_sync(self._prune_if_due)

    def _prune_if_due(self) -> None:
        """Once a day per shared store, when there is something to remove (checkpoints no session
        can reach, a store over its budget), a process of its own prunes it
        (``owltui.session.checkpoints.prune``), holding the store's lock: a snapshot meanwhile waits."""
        import os

        from owltui.session.checkpoints import prune

        sessions_dir, directory, session = self._sessions_dir, self.directory, self.session
        budget = (self.budget_mb if self.budget_mb is not None else prune.DEFAULT_BUDGET_MB) * 1024 * 1024
        try:
            if sessions_dir is None or session is None or not prune.due(directory):
                return
            if prune.wanted(directory, sessions_dir, budget=budget, keep=session):
                env = dict(self._env) if self._env is not None else dict(os.environ)
                self.pruning = prune.spawn(directory, sessions_dir, budget=budget, keep=session, env=env)
        except OSError:
            pass  # looked at again on a later day; checkpoints keep working meanwhile
        finally:
            self.prune_checked.set()

    def pruned_note(self) -> str | None:
        """Why this session has no checkpoints left, when a budget pass removed them."""
        from owltui.session.checkpoints.prune import pruned_note

        return pruned_note(self.directory, self.session) if self.session is not None else None

    def reset(self, directory: Path | None) -> None:
        """A new session (``/new``): a fresh store in ``directory`` (None: a temporary one)."""
        self.close()
        with self._lock:
            self._store = None
            self._memory.clear()
            self.error = None
            self.directory = self._place(directory)

    def close(self) -> None:
        """No more checkpoints; remove the temporary directory (``--no-session``)."""
        self.error = self.error or "the session is closed"
        pending = self._pending
        if pending is not None:
            pending.wait(30)  # a snapshot still being taken writes into the directory
        temp, self._temp = self._temp, None
        if temp is not None:
            import shutil

            shutil.rmtree(temp, ignore_errors=True)

    # ---- before each user turn ------------------------------------------------------------
    async def before_turn(self, message: UserMessage) -> None:
        """``LoopConfig.before_user_turn``: a checkpoint before ``message``'s turn is delivered.
        Never raises (a failure is one warning and turns checkpoints off)."""
        if self.error is not None:
            return
        from owltui.session.checkpoints.records import CheckpointError

        leaf = self._leaf()
        turn_id = uuid.uuid4().hex[:12]
        await self.settled()  # the previous turn's snapshot, if it is still being taken

        def snapshot() -> None:
            try:
                self.store().checkpoint(turn_id, message.text, leaf=leaf)
            except (CheckpointError, OSError) as exc:
                self._failed = exc
            finally:
                done.set()

        # The snapshot overlaps the model call: nothing changes files before the turn's first tool,
        # and ``settled`` (awaited before every tool starts) holds that tool until it is taken.
        done = self._pending = threading.Event()
        threading.Thread(target=snapshot, name="owltui-checkpoint", daemon=True).start()

    async def settled(self) -> None:
        """Until the snapshot of the current turn is taken (at once when there is none pending)."""
        pending = self._pending
        if pending is not None and not pending.is_set():
            await anyio.to_thread.run_sync(pending.wait)
        failed, self._failed = self._failed, None
        if failed is not None:
            self._disable(failed)
        self._tell()

    def _tell(self) -> None:
        """The store's lines for the user (a workspace recorded by hash only), each said once."""
        store = self._store
        while store is not None and store.notices:
            self._warn(store.notices.pop(0))

    def guard(self, permission: Permission | None) -> Permission:
        """``permission`` (the loop's last check before a tool starts) behind ``settled``."""

        async def check(call: ToolCall, read_only: bool) -> str | None:
            await self.settled()
            return await permission(call, read_only) if permission is not None else None

        return check

    def _leaf(self) -> str | None:
        """Where the conversation stands now (what a rewind to this turn goes back to)."""
        history = self.agent.history
        if isinstance(history, SessionStore):
            return history.leaf
        key = f"{MEMORY_LEAF}{len(self._memory)}"
        mark = history.compaction() if isinstance(history, Compactable) else None
        self._memory[key] = (list(history.items()), mark)
        return key

    # ---- what the commands call ------------------------------------------------------------
    async def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first (RPC ``checkpoints``)."""
        return await self._off_loop(lambda: self.store().list())

    async def listing(self) -> Listing:
        """The ``/rewind`` picker's rows, newest first, and its note on ignored files."""
        from owltui.session.checkpoints.listing import listing

        return await self._off_loop(lambda: listing(self.store()))

    async def rewind(
        self, checkpoint_id: str | None, *, files: bool = True, conversation: bool = True
    ) -> Rewound:
        """Put back the files (``files``) and/or the conversation (``conversation``) as they were
        before checkpoint ``checkpoint_id``'s turn (None: the newest one, ``/undo``). RewindError
        (one sentence) while a run is going, for an unknown id, or when it cannot be done."""
        self._idle()

        def work() -> tuple[Checkpoint, tuple[list[str], list[str]]]:
            from owltui.session.checkpoints.records import CheckpointError

            store = self.store()
            cp = store.latest() if checkpoint_id is None else store.get(checkpoint_id)
            if cp is None:
                raise CheckpointError("There is no checkpoint to go back to yet.")
            return cp, (store.restore_report(cp.id) if files else ([], []))

        cp, (restored, unrestored) = await self._off_loop(work)
        if conversation:
            self._idle()  # a run may have been woken meanwhile (a job's notice)
            self._fork(cp)
        return Rewound(restored, conversation, cp.prompt, tuple(unrestored))

    def _idle(self) -> None:
        if self.agent.running:
            raise RewindError("A run is going: wait for it or abort it before rewinding.")

    async def _off_loop(self, fn: Callable[[], T]) -> T:
        from owltui.session.checkpoints.records import CheckpointError

        await self.settled()  # one git at a time on the shadow store
        try:
            return await anyio.to_thread.run_sync(fn)
        except CheckpointError as exc:
            raise RewindError(str(exc)) from None
        except OSError as exc:
            raise RewindError(f"Checkpoints cannot be read: {exc.strerror or exc}.") from None

    # ---- the conversation (on the event loop, while no run is going) -----------------------
    def _fork(self, cp: Checkpoint) -> None:
        """Rewind the conversation to just before ``cp``'s turn."""
        agent = self.agent
        history = agent.history
        if isinstance(history, SessionStore):
            if cp.leaf is not None and cp.leaf.startswith(MEMORY_LEAF):
                raise RewindError("That checkpoint belongs to a conversation that was not saved.")
            try:
                history.branch_from(cp.leaf)
            except SessionError as exc:
                raise RewindError(str(exc)) from None
        else:
            kept = self._memory.get(cp.leaf or "")
            if kept is None:
                raise RewindError("The conversation of that turn is not kept in this session.")
            items, mark = kept
            fresh = MemoryHistory(items)
            if mark is not None:
                fresh.record_compaction(mark.summary, mark.first_kept, mark.pinned)
            agent.history = fresh
        agent.context = ContextBudget()  # the measure of the longer conversation no longer holds
