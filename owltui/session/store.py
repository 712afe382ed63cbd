"""Sessions: one append-only JSONL file per session, implementing the agent's history protocol.

Line 1 is a header (format version, id, cwd, created, model); every later line is an entry with
``id`` and ``parent_id`` (a tree: the current branch is the chain from the last leaf), of type
``message`` (any history item), ``queued``/``dequeued`` (lane messages, so the queue survives a
crash), ``model_change`` or ``compaction``. Each line is written whole (short writes are finished,
a failed line is cut off again) and fsynced: at every message end and every tool result, never
per token. Secrets are scrubbed before anything is written.

Robustness (issue 11):

- Lines are encoded by the total encoder (``owltui.providers.wirejson``): a lone surrogate (a
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
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from owltui.agent.history import CompactionMark, compacted_view
from owltui.agent.inbox import Entry, Inbox, Queued, QueueLane
from owltui.agent.messages import ITEM_ADAPTER, AssistantMessage, Item, ToolResult, UserMessage
from owltui.providers.wirejson import dumps
from owltui.providers.wirejson import encode as encode

from .redact import Redactor

FORMAT_VERSION = 1
Warn = Callable[[str], None]
CHAIN_KINDS = ("message", "model_change", "compaction")
KINDS = (*CHAIN_KINDS, "queued", "dequeued")
GAP_NOTICE = ("Part of this conversation could not be read back from the session file and is missing "
              "here; earlier and later messages are kept.")
LOST_START = "lost-start"


class SessionError(Exception):
    """A session cannot be found, read, locked or written: the message is one sentence for stderr."""


def wire_line(obj: Any) -> bytes:
    """One JSONL/RPC output line with its newline, from the total encoder (never fails)."""
    return encode(obj) + b"\n"


def new_id() -> str:
    return uuid.uuid4().hex[:12]


def _now() -> datetime:
    return datetime.now(UTC)


def _stderr_warn(text: str) -> None:
    try:
        print(f"owltui: warning: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _reason(exc: OSError) -> str:
    """What went wrong, in words (the common storage failures get a hint)."""
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EFBIG:
        return "file too large (the file size limit, ulimit -f, was reached)"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return (exc.strerror or str(exc) or type(exc).__name__).rstrip(".").lower()


def _nearest_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if os.path.lexists(p):
            return p
    return path


def unwritable_dir(directory: Path, exc: OSError | None = None) -> SessionError:
    """The one sentence for a sessions directory that cannot be created or written."""
    blocker = _nearest_existing(directory)
    if exc is not None:
        why = _reason(exc)
    elif not blocker.is_dir():
        why = "it is not a directory"
    else:
        why = "it is not writable"
    where = "" if blocker == directory else f" ({blocker}: {why})"
    detail = f": {why}" if blocker == directory else where
    return SessionError(f"Cannot write sessions to {directory}{detail}; fix the data directory "
                        "(XDG_DATA_HOME) or run with --no-session.")


def ensure_writable_dir(directory: Path) -> None:
    """Create ``directory`` if needed; SessionError (naming it and --no-session) when it cannot be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = _nearest_existing(directory)
        raise unwritable_dir(directory, None if blocker != directory and not isinstance(
            exc, PermissionError | FileNotFoundError) else exc) from None
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise unwritable_dir(directory)


def _in_use(path: Path) -> SessionError:
    sid = path.stem.split("_", 1)[-1]
    return SessionError(f"Session {sid} is in use by another OwlTUI process ({path}); finish that one "
                        "first, or start a new session (without -c/--resume).")


def _lock(fd: int, path: Path) -> None:
    """Exclusive, non-blocking lock on the open session file; held until the descriptor is closed."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _in_use(path) from None
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise _in_use(path) from None
        # ENOLCK / EOPNOTSUPP (some network file systems): carry on without a lock


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a short write is continued, never ignored)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[n:]


@dataclass
class QueuedMessage:
    qid: str
    lane: QueueLane
    text: str
    source: str


class SessionStore:
    """The session file and its in-memory view. Create with ``create`` or ``open``."""

    def __init__(self, path: Path, session_id: str, cwd: Path, model: str, created: datetime,
                 redactor: Redactor | None = None, warn: Warn | None = None) -> None:
        self.path = path
        self.id = session_id
        self.cwd = cwd
        self.model = model
        self.created = created
        self.redactor = redactor or Redactor()
        self.warn: Warn = warn or _stderr_warn
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
        self.closed = False

    # ---- construction --------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, cwd: Path, model: str, redactor: Redactor | None = None,
               warn: Warn | None = None) -> SessionStore:
        """A new session; its file appears with the first entry (an empty session leaves no file).

        The directory is created now: SessionError (naming it and --no-session) if it cannot be."""
        ensure_writable_dir(directory)
        created = _now()
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
            raise SessionError(f"Cannot open session file {path} for writing: {_reason(exc)}; "
                               "run with --no-session to start without saving.") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SessionError(f"{path} is not a regular file, so not a session file.")
            os.set_blocking(fd, True)
            _lock(fd, path)
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise SessionError(f"Cannot read session file {path}: {_reason(exc)}.") from None
            store = cls._load(path, data, redactor, warn)
            records_end = store._repair_tail(fd, data, warn)
        except BaseException:
            os.close(fd)
            raise
        store._fd = fd
        store._size = records_end
        return store

    @classmethod
    def _load(cls, path: Path, data: bytes, redactor: Redactor | None, warn: Warn | None) -> SessionStore:
        records, _, _ = parse_lines(data, path, warn)
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
            created = _now()
        store = cls(path, str(head.get("id", "")), Path(str(head.get("cwd", "."))),
                    str(head.get("model", "")), created, redactor, warn)
        store._replay(body, warn)
        return store

    def _repair_tail(self, fd: int, data: bytes, warn: Warn | None) -> int:
        """Cut a torn last line off the file and end the last line with a newline; the new size."""
        _, good_end, torn = parse_lines(data, self.path, None)
        size = len(data)
        try:
            if torn:
                os.ftruncate(fd, good_end)  # the next append starts a clean line
                size = good_end
            if size and not data[:size].endswith(b"\n"):
                _write_all(fd, b"\n")  # a complete last record that lost only its newline
                size += 1
        except OSError as exc:
            raise SessionError(f"Cannot repair session file {self.path}: {_reason(exc)}.") from None
        return size

    def _replay(self, records: list[dict[str, Any]], warn: Warn | None) -> None:
        by_id: dict[str, dict[str, Any]] = {}
        gaps: dict[str, str] = {}  # entry id -> id of its unreadable parent
        leaf: str | None = None
        for rec in records:
            kind = rec.get("type")
            rid = rec.get("id")
            if kind in CHAIN_KINDS and isinstance(rid, str):
                parent = rec.get("parent_id")
                if parent is not None and (not isinstance(parent, str) or parent not in by_id):
                    # its parent was on an unreadable line: hang it on the entry written before it
                    gaps[rid] = parent if isinstance(parent, str) else f"gap-{rid}"
                    rec = {**rec, "parent_id": leaf}
                by_id[rid] = rec
                leaf = rid
            elif kind == "queued" and isinstance(rid, str):
                qid = rec["qid"] if isinstance(rec.get("qid"), str) else rid  # files before ids: the entry id
                msg = QueuedMessage(qid, rec.get("lane", "follow_up"), str(rec.get("text", "")),
                                    str(rec.get("source", "user")))
                if "before" in rec:  # moved: out of its place, in before that message (or at the end)
                    self._queued.pop(qid, None)
                    self._queued = _placed(self._queued, msg, rec["before"])
                else:  # queued, or edited in place
                    self._queued[qid] = msg
            elif kind == "dequeued":
                self._queued.pop(str(rec.get("ref", "")), None)
        chain: list[dict[str, Any]] = []
        seen: set[str] = set()
        cur = leaf
        while cur is not None and cur in by_id and cur not in seen:
            seen.add(cur)
            chain.append(by_id[cur])
            cur = by_id[cur].get("parent_id")
        pairs: list[tuple[Item, str]] = []
        kept_from: tuple[str, str, list[str]] | None = None  # (summary, first kept id, pinned ids)
        kept_at = 0
        for rec in reversed(chain):
            kind = rec["type"]
            if rec["id"] in gaps and not (pairs and _is_notice(pairs[-1][0])):
                pairs.append((_notice(), gaps[rec["id"]]))
            if kind == "message":
                try:
                    item = ITEM_ADAPTER.validate_python(rec["item"])
                except Exception:
                    if warn:
                        warn(f"skipped an unreadable message in {self.path}")
                    if not (pairs and _is_notice(pairs[-1][0])):
                        pairs.append((_notice(), rec["id"]))
                    continue
                pairs.append((item, rec["id"]))
            elif kind == "model_change":
                self.model = str(rec.get("model", self.model))
            elif kind == "compaction":
                pinned = rec.get("pinned")
                kept_from = (str(rec.get("summary", "")), str(rec.get("first_kept", "")),
                             [str(p) for p in pinned] if isinstance(pinned, list) else [])
                kept_at = len(pairs)
        pairs = _in_call_order(pairs)
        shift = 0
        if pairs and not isinstance(pairs[0][0], UserMessage):
            pairs.insert(0, (_notice(), LOST_START))  # never start the conversation with the model
            shift = 1
        self._items = [p[0] for p in pairs]
        self._item_ids = [p[1] for p in pairs]
        if kept_from is not None:
            summary, first, pinned_ids = kept_from
            if first in self._item_ids:
                start = self._item_ids.index(first)
            else:  # "": everything before the compaction entry
                start = min(kept_at + shift, len(self._items))
            where = {eid: n for n, eid in enumerate(self._item_ids[:start])}
            self._compaction = CompactionMark(summary, start,
                                              tuple(sorted(where[p] for p in pinned_ids if p in where)))
        self._leaf = leaf

    # ---- writing -------------------------------------------------------------------------
    def _header(self) -> dict[str, Any]:
        return {"type": "session", "version": FORMAT_VERSION, "id": self.id, "cwd": str(self.cwd),
                "created": self.created.isoformat(), "model": self.model}

    def _open_file(self) -> int:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.EROFS,
                             errno.EEXIST):
                raise unwritable_dir(directory, exc) from None
            raise
        try:
            _lock(fd, self.path)
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
            _write_all(self._fd, data)
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
            return self._failed(f"Cannot write session file {self.path}: {_reason(exc)}.", strict)
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
        self._write({"type": kind, "id": eid, "parent_id": self._leaf, "ts": _now().isoformat(), **fields},
                    strict)
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
        record = {"type": "message", "id": eid, "parent_id": self._leaf, "ts": _now().isoformat(),
                  "item": result.model_dump(mode="json", exclude_none=True)}
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
        self._entry("compaction", summary=summary, first_kept=first,  # "": everything before it
                    pinned=[self._item_ids[i] for i in kept])
        self._compaction = CompactionMark(summary, first_kept, kept)
        self._view = None

    def compaction(self) -> CompactionMark | None:
        return self._compaction

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
            eid = self._entry("queued", moves_leaf=False, **ids, lane=lane, text=entry.text,
                              source=entry.source)
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
            self._entry("queued", moves_leaf=False, qid=item.id, lane=item.lane, text=item.text,
                        source=item.source)
            return
        before = self._inbox.following(item.id) if self._inbox is not None else None
        del self._queued[item.id]
        self._queued = _placed(self._queued, msg, before)
        self._entry("queued", moves_leaf=False, qid=item.id, lane=item.lane, text=item.text,
                    source=item.source, before=before)

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


def _placed(queued: dict[str, QueuedMessage], msg: QueuedMessage, before: Any) -> dict[str, QueuedMessage]:
    """``queued`` with ``msg`` inserted before message ``before`` (at the end if it is not there)."""
    if before not in queued:
        return {**queued, msg.qid: msg}
    out: dict[str, QueuedMessage] = {}
    for qid, q in queued.items():
        if qid == before:
            out[msg.qid] = msg
        out[qid] = q
    return out


def _notice() -> UserMessage:
    return UserMessage(text=GAP_NOTICE, lane="notice", source="system")


def _is_notice(item: Item) -> bool:
    return isinstance(item, UserMessage) and item.lane == "notice" and item.text == GAP_NOTICE


def _in_call_order(pairs: list[tuple[Item, str]]) -> list[tuple[Item, str]]:
    """The results right after an assistant message in the order of its calls, one per call (the
    last written wins): results written as their tools ended come in completion order."""
    out: list[tuple[Item, str]] = []
    i = 0
    while i < len(pairs):
        item = pairs[i][0]
        out.append(pairs[i])
        i += 1
        if not isinstance(item, AssistantMessage) or not item.tool_calls:
            continue
        j = i
        while j < len(pairs) and isinstance(pairs[j][0], ToolResult):
            j += 1
        if j - i < 2:
            out.extend(pairs[i:j])
            i = j
            continue
        order = {c.id: n for n, c in enumerate(item.tool_calls)}
        last: dict[str, tuple[Item, str]] = {}
        for pair in pairs[i:j]:
            res = pair[0]
            assert isinstance(res, ToolResult)
            last.pop(res.call_id, None)
            last[res.call_id] = pair
        run = sorted(last.values(), key=lambda p: order.get(getattr(p[0], "call_id", ""), len(order)))
        out.extend(run)
        i = j
    return out


def parse_lines(data: bytes, path: Path, warn: Warn | None) -> tuple[list[dict[str, Any]], int, bool]:
    """JSON records of a session file, the byte offset after the last good line, and whether a torn
    last line was dropped."""
    records: list[dict[str, Any]] = []
    offset = 0
    good_end = 0
    torn = False
    lines = data.split(b"\n")
    for n, raw in enumerate(lines):
        last = n == len(lines) - 1
        end = offset + len(raw) + (0 if last else 1)
        if raw.strip():
            try:
                rec = json.loads(raw)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
            except (ValueError, RecursionError):
                if last or all(not rest.strip() for rest in lines[n + 1:]):
                    torn = True
                    if warn:
                        warn(f"skipped a torn last line in session file {path}")
                    break
                if warn:
                    warn(f"skipped an unreadable line {n + 1} in session file {path}")
                offset = end
                good_end = end
                continue
            records.append(rec)
        offset = end
        good_end = end
    return records, good_end, torn
