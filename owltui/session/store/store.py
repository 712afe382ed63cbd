"""Sessions: one append-only JSONL file per session, implementing the agent's history protocol.

Line 1 is a header (format version, id, cwd, created, model); every later line is an entry with
``id`` and ``parent_id`` (a tree: the current branch is the chain from the last leaf), of type
``message`` (any history item), ``queued``/``dequeued`` (lane messages, so the queue survives a
crash), ``model_change``, ``compaction``, ``branch`` (a rewind: its parent is where the
conversation forks; the old branch stays in the file) or ``pause`` (the gate closed or opened, so
``-c`` after a quit or a crash while paused starts paused). Each line is written whole and fsynced:
at every message end and every tool result, never per token. Secrets are scrubbed before anything
is written.

Robustness:

- A tool result may be written as soon as its tool ends (``record_result_early``), inside a
  concurrent group too; the chain then holds the results in completion order, and loading puts
  the results after an assistant message back in call order (the last result of a call wins).
- A corrupt line anywhere is skipped with a warning. An entry whose parent was on such a line is
  hung on the entry written before it, and a notice marks the gap for the model, so nothing before
  it is lost and the conversation never starts with an assistant message. A torn last line is cut
  off the file so appends stay valid; an unreadable header is rebuilt from the file name.
- A second process continuing the same session is refused with one sentence (no fork): the file
  is locked while a process has it open.
- An unwritable data directory is a ``SessionError`` naming it and ``--no-session`` when the store
  is created.

The pieces: ``file`` (the file: errors, lock, whole-line writes, ``parse_lines``), ``writer`` (the
append side: whole lines, fsync, what a failed write does), ``queue_log`` (the inbox's lane
messages) and ``replay`` (records back into the tree, the branch's items, the queue, the pause
state).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from owltui.agent.history import CompactionMark, compacted_view
from owltui.agent.messages import AssistantMessage, Item, ToolResult, UserMessage
from owltui.session.redact import Redactor
from owltui.session.store.file import (
    SessionError,
    Warn,
    ensure_writable_dir,
    lock_file,
    new_id,
    now,
    parse_lines,
    reason,
)
from owltui.session.store.images import item_record, load_images, save_images
from owltui.session.store.queue_log import QueueLog
from owltui.session.store.replay import KINDS, Index, index, walk
from owltui.session.store.writer import FORMAT_VERSION

__all__ = ["SessionStore"]


class SessionStore(QueueLog):
    """The session file and its in-memory view. Create with ``create`` or ``open``.

    The conversation (the current branch's items, the compaction, rewinds) is here; writing entries
    is ``SessionWriter``'s, the lane messages ``QueueLog``'s."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        cwd: Path,
        model: str,
        created: datetime,
        redactor: Redactor | None = None,
        warn: Warn | None = None,
    ) -> None:
        super().__init__(path, session_id, cwd, model, created, redactor, warn)
        self._items: list[Item] = []
        self._item_ids: list[str] = []
        self._open_calls: set[str] = set()  # tool calls appended and still without a result
        self._early: dict[str, tuple[str, ToolResult]] = {}  # call id -> (entry id, result on disk)
        self._compaction: CompactionMark | None = None  # the last compaction (indexes into _items)
        self._view: list[Item] | None = None
        self.paused = False  # the gate was closed when this session last recorded it

    # ---- construction --------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        directory: Path,
        cwd: Path,
        model: str,
        redactor: Redactor | None = None,
        warn: Warn | None = None,
    ) -> SessionStore:
        """A new session; its file appears with the first entry (an empty session leaves no file).

        The directory is created now: SessionError (naming it and --no-session) if it cannot be."""
        ensure_writable_dir(directory)
        created = now()
        sid = new_id()
        path = directory / f"{created:%Y%m%dT%H%M%S}_{sid}.jsonl"
        return cls(path, sid, cwd, model, created, redactor, warn)

    @classmethod
    def open(cls, path: Path, redactor: Redactor | None = None, warn: Warn | None = None) -> SessionStore:
        """Load a session file to append to it, holding its lock. Corrupt lines are skipped (with a
        warning) and the chain repaired; SessionError if another process has the file open."""
        try:  # O_NONBLOCK: a FIFO in its place fails at once instead of waiting for a reader
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        except FileNotFoundError:
            raise SessionError(f"Cannot read session file {path}: it does not exist.") from None
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without a reader, a directory
                raise SessionError(f"{path} is not a regular file, so not a session file.") from None
            raise SessionError(
                f"Cannot open session file {path} for writing: {reason(exc)}; "
                "run with --no-session to start without saving."
            ) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SessionError(f"{path} is not a regular file, so not a session file.")
            os.set_blocking(fd, True)
            lock_file(fd, path)
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise SessionError(f"Cannot read session file {path}: {reason(exc)}.") from None
            records, good_end, torn = parse_lines(data, path, warn)  # the file is parsed once
            store = cls._load(path, records, redactor, warn)
            records_end = store._repair_tail(fd, data, good_end, torn)
        except BaseException:
            os.close(fd)
            raise
        store._fd = fd
        store._size = records_end
        return store

    @classmethod
    def _load(
        cls, path: Path, records: list[dict[str, Any]], redactor: Redactor | None, warn: Warn | None
    ) -> SessionStore:
        if records and records[0].get("type") == "session":
            head, body = records[0], records[1:]
        elif any(r.get("type") in KINDS and "id" in r for r in records):
            if warn:
                warn(f"the header line of session file {path} is unreadable: rebuilt from the file name")
            head, body = {"id": path.stem.split("_", 1)[-1]}, records
        else:
            raise SessionError(f"{path} is not an OwlTUI session file (no header line).")
        version = head.get("version", 0)
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise SessionError(f"{path} was written by a newer OwlTUI (format {version}).")
        try:
            created = datetime.fromisoformat(str(head["created"]))
        except (KeyError, ValueError, TypeError):
            created = now()
        store = cls(
            path,
            str(head.get("id", "")),
            Path(str(head.get("cwd", "."))),
            str(head.get("model", "")),
            created,
            redactor,
            warn,
        )
        store._replay(body, warn)
        return store

    def _replay(self, records: list[dict[str, Any]], warn: Warn | None) -> None:
        idx = index(records)
        self._queued = idx.queued
        self.paused = idx.paused
        self._adopt(idx, idx.leaf, warn)

    def _adopt(self, idx: Index, leaf: str | None, warn: Warn | None) -> None:
        """Make the chain from ``leaf`` the conversation (new lists: a provider's cache of the old
        ones starts over)."""
        walked = walk(idx, leaf, warn, str(self.path))
        self._items = [load_images(self.path, item) for item in walked.items]
        self._item_ids = walked.item_ids
        self._compaction = walked.compaction
        self._view = None
        if walked.model:
            self.model = walked.model
        self._leaf = leaf

    # ---- the history protocol ------------------------------------------------------------
    def items(self) -> Sequence[Item]:
        return self._items

    def append(self, item: Item) -> None:
        """Write the item (fsynced), then keep it. SessionError (once per outage) if it cannot be
        written: the item is then not kept, and the loop ends the run with that error."""
        early = self._early.pop(item.call_id, None) if isinstance(item, ToolResult) else None
        if early is not None and early[1] == item:
            eid = early[0]  # on disk already, as the chain entry after the assistant message
        else:
            self._save_images(item, strict=True)
            eid = self._entry("message", strict=True, item=item_record(item))
        self._keep(item, eid)

    def _save_images(self, item: Item, strict: bool) -> bool:
        """The item's images into the store beside the file, before its line (see ``images``)."""
        try:
            save_images(self.path, item)
        except OSError as exc:
            if strict:
                raise SessionError(
                    f"Cannot save an image beside session file {self.path}: {reason(exc)}."
                ) from None
            return False
        return True

    def _keep(self, item: Item, eid: str) -> None:
        self._items.append(item)
        self._item_ids.append(eid)
        if self._view is not None:
            self._view.append(item)
        if isinstance(item, AssistantMessage):
            self._open_calls.update(c.id for c in item.tool_calls)
        elif isinstance(item, ToolResult):
            self._open_calls.discard(item.call_id)
        elif isinstance(item, UserMessage):
            live = self._live.pop(id(item), None)
            if live is not None:
                self._dequeue(live[0], "delivered")

    def record_result_early(self, result: ToolResult) -> bool:
        """Write a tool result (fsynced) the moment its tool ends, before the loop appends it.

        For a call of an assistant message already appended and still without a result; the
        loop's later ``append`` of the same result then writes nothing. Never raises: a failed
        write is warned about and ``append`` tries again. True when the result is on disk."""
        if result.call_id not in self._open_calls or result.call_id in self._early:
            return False
        if self.closed or not self._save_images(result, strict=False):
            return False
        eid = new_id()[:8]
        record = {
            "type": "message",
            "id": eid,
            "parent_id": self._leaf,
            "ts": now().isoformat(),
            "item": item_record(result),
        }
        if not self._write(record):
            return False
        self._leaf = eid
        self._early[result.call_id] = (eid, result)
        return True

    def model_view(self) -> Sequence[Item]:
        if self._compaction is None:
            return self._items
        if self._view is None:
            self._view = compacted_view(self._items, self._compaction)
        return self._view

    # ---- other entries -------------------------------------------------------------------
    def record_model(self, model: str) -> None:
        self.model = model
        self._entry("model_change", model=model)

    def record_compaction(self, summary: str, first_kept: int, pinned: Sequence[int] = ()) -> None:
        """Items before index ``first_kept`` are replaced, for the model, by ``summary``; the
        ``pinned`` ones among them (the current request) stay, before it. Written as a
        ``compaction`` entry (ids, not indexes), so ``-c`` resumes from the summary."""
        first_kept = min(first_kept, len(self._items))
        first = self._item_ids[first_kept] if first_kept < len(self._item_ids) else ""
        kept = tuple(sorted(i for i in pinned if 0 <= i < first_kept))
        self._entry(
            "compaction",
            summary=summary,
            first_kept=first,  # "": everything before it
            pinned=[self._item_ids[i] for i in kept],
        )
        self._compaction = CompactionMark(summary, first_kept, kept)
        self._view = None

    def compaction(self) -> CompactionMark | None:
        return self._compaction

    @property
    def leaf(self) -> str | None:
        """The entry the next one hangs on (None: the session is empty); where a rewind can fork."""
        return self._leaf

    def branch_from(self, leaf_id: str | None) -> None:
        """Rewind the conversation to just after entry ``leaf_id`` (None: to before the first
        message): a ``branch`` entry is written with that parent, so the next append is a child of
        it and ``-c`` resumes this branch; the old branch stays in the file. The items (and the
        compaction, the model) are rebuilt from the file. SessionError when ``leaf_id`` names no
        entry of the session or the file cannot be read or written."""
        try:
            data = self.path.read_bytes() if self._size else b""
        except OSError as exc:
            raise SessionError(f"Cannot read session file {self.path}: {reason(exc)}.") from None
        idx = index(parse_lines(data, self.path, None)[0])
        if leaf_id is not None and leaf_id not in idx.by_id:
            raise SessionError(
                f"Session {self.id} has no entry {leaf_id}: cannot rewind the conversation there."
            )
        before, self._leaf = self._leaf, leaf_id
        try:
            eid = self._entry("branch", strict=True)
        except SessionError:
            self._leaf = before
            raise
        if self._failure is not None:  # an outage already raised once: still refuse the rewind
            self._leaf = before
            raise SessionError(self._failure)
        idx.add({"type": "branch", "id": eid, "parent_id": leaf_id})
        self._adopt(idx, eid, self.warn)
        self._open_calls.clear()
        self._early.clear()

    def record_pause(self, paused: bool) -> None:
        """The pause gate closed (True) or opened: ``-c`` starts the session as it was left."""
        if paused != self.paused:
            self.paused = paused
            self._entry("pause", moves_leaf=False, paused=paused)
