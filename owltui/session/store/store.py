"""Sessions: one append-only JSONL file per session, implementing the agent's history protocol.

Line 1 is a header (format version, id, cwd, created, model); every later line is an entry with
``id`` and ``parent_id`` (a tree: the current branch is the chain from the last leaf), of type
``message`` (any history item), ``queued``/``dequeued`` (lane messages, so the queue survives a
crash), ``model_change``, ``compaction``, ``branch`` (a rewind: its parent is where the
conversation forks; the old branch stays in the file) or ``pause`` (the gate closed or opened, so
``-c`` after a quit or a crash while paused starts paused). Each line is written whole (short
writes are finished, a failed line is cut off again) and fsynced: at every message end and every
tool result, never per token. Secrets are scrubbed before anything is written.

Robustness (issue 11):

- Lines are encoded by the total encoder (``owltui.text.wirejson``): a lone surrogate (a
  non-UTF-8 file name) is kept as a ``\\udcXX`` escape, so the text comes back exactly on load.
- A tool result may be written as soon as its tool ends (``record_result_early``), inside a
  concurrent group too; the chain then holds the results in completion order, and loading puts
  the results after an assistant message back in call order (the last result of a call wins).
- A corrupt line anywhere is skipped with a warning. An entry whose parent was on such a line is
  hung on the entry written before it, and a notice marks the gap for the model, so nothing before
  it is lost and the conversation never starts with an assistant message. A torn last line is cut
  off the file so appends stay valid; an unreadable header is rebuilt from the file name.
- The file is locked (``flock``, exclusive, non-blocking) while a process has it open: a second
  process continuing the same session is refused with one sentence (no fork).
- A write that fails (disk full, ``ulimit -f``, I/O error) raises ``SessionError`` once from
  ``append`` (the loop ends the run with it as its error: one line, exit 1), is warned about once
  for other entries, and the next write tries again. An unwritable data directory is a
  ``SessionError`` naming it and ``--no-session`` when the store is created.

The pieces: ``store_file`` (the file: errors, lock, whole-line writes, ``parse_lines``) and
``store_replay`` (records back into the tree, the branch's items, the queue, the pause state).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from owltui.agent.history import CompactionMark, compacted_view
from owltui.agent.inbox import Entry, Inbox, Queued, QueueLane
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
    stderr_warn,
    unwritable_dir,
    write_all,
)
from owltui.session.store.replay import (
    KINDS,
    Index,
    QueuedMessage,
    index,
    placed,
    walk,
)
from owltui.text.wirejson import dumps

__all__ = ["FORMAT_VERSION", "SessionStore"]

FORMAT_VERSION = 1


class SessionStore:
    """The session file and its in-memory view. Create with ``create`` or ``open``."""

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
        self.path = path
        self.id = session_id
        self.cwd = cwd
        self.model = model
        self.created = created
        self.redactor = redactor or Redactor()
        self.warn: Warn = warn or stderr_warn
        self._items: list[Item] = []
        self._item_ids: list[str] = []
        self._leaf: str | None = None
        self._fd: int | None = None
        self._size = 0  # bytes of whole lines in the file (a failed line is cut back to this)
        self._failure: str | None = None  # while writes fail: the sentence describing it
        self._raised = False  # this failure was raised from append already
        self.unsaved = 0  # entries lost to write failures (kept in memory only)
        self._open_calls: set[str] = set()  # tool calls appended and still without a result
        self._early: dict[str, tuple[str, ToolResult]] = {}  # call id -> (entry id, result on disk)
        self._compaction: CompactionMark | None = None  # the last compaction (indexes into _items)
        self._view: list[Item] | None = None
        self._queued: dict[str, QueuedMessage] = {}  # undelivered, by qid (the inbox's id), in order
        self._live: dict[int, tuple[str, Entry]] = {}  # id(inbox entry) -> (qid, entry)
        self._inbox: Inbox | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.paused = False  # the gate was closed when this session last recorded it
        self.closed = False

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

    def _repair_tail(self, fd: int, data: bytes, good_end: int, torn: bool) -> int:
        """Cut a torn last line off the file (``parse_lines`` found it: ``torn``, the whole lines end
        at ``good_end``) and end the last line with a newline; the new size."""
        size = len(data)
        try:
            if torn:
                os.ftruncate(fd, good_end)  # the next append starts a clean line
                size = good_end
            if size and not data[:size].endswith(b"\n"):
                write_all(fd, b"\n")  # a complete last record that lost only its newline
                size += 1
        except OSError as exc:
            raise SessionError(f"Cannot repair session file {self.path}: {reason(exc)}.") from None
        return size

    def _replay(self, records: list[dict[str, Any]], warn: Warn | None) -> None:
        idx = index(records)
        self._queued = idx.queued
        self.paused = idx.paused
        self._adopt(idx, idx.leaf, warn)

    def _adopt(self, idx: Index, leaf: str | None, warn: Warn | None) -> None:
        """Make the chain from ``leaf`` the conversation (new lists: a provider's cache of the old
        ones starts over)."""
        walked = walk(idx, leaf, warn, str(self.path))
        self._items = walked.items
        self._item_ids = walked.item_ids
        self._compaction = walked.compaction
        self._view = None
        if walked.model:
            self.model = walked.model
        self._leaf = leaf

    # ---- writing -------------------------------------------------------------------------
    def _header(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "cwd": str(self.cwd),
            "created": self.created.isoformat(),
            "model": self.model,
        }

    def _open_file(self) -> int:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            if exc.errno in (
                errno.EACCES,
                errno.EPERM,
                errno.ENOENT,
                errno.ENOTDIR,
                errno.EROFS,
                errno.EEXIST,
            ):
                raise unwritable_dir(directory, exc) from None
            raise
        try:
            lock_file(fd, self.path)
            self._size = os.fstat(fd).st_size
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _line(self, record: dict[str, Any]) -> bytes:
        text = self.redactor.scrub(dumps(record, surrogates="escape"))
        return (text + "\n").encode("utf-8", "replace")

    def _put(self, data: bytes) -> None:
        """Append whole lines and fsync; on failure cut the file back to its last whole line."""
        assert self._fd is not None
        try:
            write_all(self._fd, data)
            os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
            raise
        self._size += len(data)

    def _write(self, record: dict[str, Any], strict: bool = False) -> bool:
        """Write one line (the header first in a new file). True when it is on disk.

        A failure raises SessionError when ``strict`` (``append``) and it was not raised yet; it is
        otherwise warned about once. The next write tries again."""
        if self.closed:
            return False
        try:
            if self._fd is None:
                self._fd = self._open_file()
            data = self._line(record)
            if self._size == 0:
                data = self._line(self._header()) + data
            self._put(data)
        except SessionError as exc:
            return self._failed(str(exc), strict)
        except OSError as exc:
            return self._failed(f"Cannot write session file {self.path}: {reason(exc)}.", strict)
        self._failure = None
        self._raised = False
        return True

    def _failed(self, message: str, strict: bool) -> bool:
        """One message per outage: raised from ``append`` (the run ends with it), else warned."""
        first = self._failure is None
        self._failure = message
        if strict and not self._raised:
            self._raised = True
            raise SessionError(message)
        self.unsaved += 1
        if first:
            self.warn(f"{message} Later entries of this session may not be saved.")
        return False

    @property
    def failure(self) -> str | None:
        """While writes fail: the sentence describing why (None when the file is healthy)."""
        return self._failure

    def _entry(self, kind: str, moves_leaf: bool = True, strict: bool = False, **fields: Any) -> str:
        eid = new_id()[:8]
        self._write(
            {"type": kind, "id": eid, "parent_id": self._leaf, "ts": now().isoformat(), **fields}, strict
        )
        if moves_leaf:
            self._leaf = eid
        return eid

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
            eid = self._entry("message", strict=True, item=item.model_dump(mode="json", exclude_none=True))
        self._keep(item, eid)

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
        if self.closed:
            return False
        eid = new_id()[:8]
        record = {
            "type": "message",
            "id": eid,
            "parent_id": self._leaf,
            "ts": now().isoformat(),
            "item": result.model_dump(mode="json", exclude_none=True),
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

    # ---- the queue -----------------------------------------------------------------------
    def undelivered(self) -> list[QueuedMessage]:
        """Lane messages queued and never delivered (nor withdrawn)."""
        return list(self._queued.values())

    def attach(self, inbox: Inbox) -> None:
        """Record the inbox's lane messages; first put back the ones a previous process left queued,
        with their ids."""
        restore = self.undelivered()
        for q in restore:
            entry = UserMessage(text=q.text, lane=q.lane, source=q.source)
            item = inbox.push(q.lane, entry, qid=q.qid)  # our listener is not subscribed yet
            if item.id != q.qid:  # the id is taken in this inbox (never in practice): follow the inbox
                del self._queued[q.qid]
                q.qid = item.id
                self._queued[q.qid] = q
            self._live[id(entry)] = (q.qid, entry)
        self._inbox = inbox
        self._unsubscribe = inbox.subscribe(self._on_inbox)

    def track_queued(self, lane: QueueLane, entry: Entry | Queued) -> None:
        """Record a lane message that is in the inbox (pushed now, or before this store existed);
        a ``Queued`` record keeps its id."""
        qid: str | None = None
        if isinstance(entry, Queued):
            qid, entry = entry.id, entry.entry
        if isinstance(entry, UserMessage) and id(entry) not in self._live:
            ids: dict[str, Any] = {"qid": qid} if qid else {}
            eid = self._entry(
                "queued", moves_leaf=False, **ids, lane=lane, text=entry.text, source=entry.source
            )
            qid = qid or eid
            self._queued[qid] = QueuedMessage(qid, lane, entry.text, entry.source)
            self._live[id(entry)] = (qid, entry)

    def _on_inbox(self, action: str, lane: QueueLane, item: Queued | None) -> None:
        if action == "push" and item is not None:
            self.track_queued(lane, item)
        elif action in ("pop", "remove") and item is not None:
            live = self._live.pop(id(item.entry), None)
            if live is not None:
                self._dequeue(live[0], "withdrawn")
        elif action in ("edit", "move") and item is not None and item.id in self._queued:
            self._changed(item, moved=action == "move")
        elif action == "clear":
            for key, (qid, e) in list(self._live.items()):
                if isinstance(e, UserMessage) and e.lane == lane and qid in self._queued:
                    del self._live[key]
                    self._dequeue(qid, "withdrawn")

    def _changed(self, item: Queued, moved: bool) -> None:
        """A queued message was edited or moved: the same id with its new text, lane and place."""
        assert isinstance(item.entry, UserMessage)
        for key, (qid, _) in list(self._live.items()):
            if qid == item.id:
                del self._live[key]
        self._live[id(item.entry)] = (item.id, item.entry)
        msg = QueuedMessage(item.id, item.lane, item.text, item.source)
        if not moved:
            self._queued[item.id] = msg
            self._entry(
                "queued", moves_leaf=False, qid=item.id, lane=item.lane, text=item.text, source=item.source
            )
            return
        before = self._inbox.following(item.id) if self._inbox is not None else None
        del self._queued[item.id]
        self._queued = placed(self._queued, msg, before)
        self._entry(
            "queued",
            moves_leaf=False,
            qid=item.id,
            lane=item.lane,
            text=item.text,
            source=item.source,
            before=before,
        )

    def _dequeue(self, qid: str, how: str) -> None:
        if self._queued.pop(qid, None) is not None:
            self._entry("dequeued", moves_leaf=False, ref=qid, how=how)

    def __del__(self) -> None:
        # a store dropped without close() must not keep the session locked for the process's life
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            try:
                os.close(fd)
            except Exception:
                pass

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.closed = True
