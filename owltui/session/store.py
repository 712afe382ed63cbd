"""Sessions: one append-only JSONL file per session, implementing the agent's history protocol.

Line 1 is a header (format version, id, cwd, created, model); every later line is an entry with
``id`` and ``parent_id`` (a tree: the current branch is the chain from the last leaf), of type
``message`` (any history item), ``queued``/``dequeued`` (lane messages, so the queue survives a
crash), ``model_change`` or ``compaction``. Each line is written with one ``write`` and fsynced: at
every message end and tool result, never per token. A torn last line is skipped on load (and cut
off the file so appends stay valid); secrets are scrubbed before anything is written.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from owltui.agent.inbox import Entry, Inbox, QueueLane
from owltui.agent.messages import ITEM_ADAPTER, Item, UserMessage

from .redact import Redactor

FORMAT_VERSION = 1
Warn = Callable[[str], None]


class SessionError(Exception):
    """A session cannot be found or read: the message is one sentence for stderr."""


def new_id() -> str:
    return uuid.uuid4().hex[:12]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class QueuedMessage:
    qid: str
    lane: QueueLane
    text: str
    source: str


class SessionStore:
    """The session file and its in-memory view. Create with ``create`` or ``open``."""

    def __init__(self, path: Path, session_id: str, cwd: Path, model: str, created: datetime,
                 redactor: Redactor | None = None) -> None:
        self.path = path
        self.id = session_id
        self.cwd = cwd
        self.model = model
        self.created = created
        self.redactor = redactor or Redactor()
        self._items: list[Item] = []
        self._item_ids: list[str] = []
        self._leaf: str | None = None
        self._fd: int | None = None
        self._compaction: tuple[str, int] | None = None  # (summary, index of the first item kept)
        self._view: list[Item] | None = None
        self._queued: dict[str, QueuedMessage] = {}  # undelivered, by qid
        self._live: dict[int, tuple[str, Entry]] = {}  # id(inbox entry) -> (qid, entry)
        self._unsubscribe: Callable[[], None] | None = None
        self.closed = False

    # ---- construction --------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, cwd: Path, model: str, redactor: Redactor | None = None) -> SessionStore:
        """A new session; its file appears with the first entry (an empty session leaves nothing)."""
        created = _now()
        sid = new_id()
        path = directory / f"{created:%Y%m%dT%H%M%S}_{sid}.jsonl"
        return cls(path, sid, cwd, model, created, redactor)

    @classmethod
    def open(cls, path: Path, redactor: Redactor | None = None, warn: Warn | None = None) -> SessionStore:
        """Load a session file to append to it. A torn last line is skipped (with a warning)."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SessionError(f"Cannot read session file {path}: {exc.strerror or exc}.") from None
        records, good_end, torn = parse_lines(data, path, warn)
        if not records or records[0].get("type") != "session":
            raise SessionError(f"{path} is not an OwlTUI session file (no header line).")
        head = records[0]
        if head.get("version", 0) > FORMAT_VERSION:
            raise SessionError(f"{path} was written by a newer OwlTUI (format {head.get('version')}).")
        created = datetime.fromisoformat(head["created"]) if head.get("created") else _now()
        store = cls(path, str(head["id"]), Path(head.get("cwd", ".")), str(head.get("model", "")), created,
                    redactor)
        store._replay(records[1:], warn)
        if torn:
            with path.open("r+b") as fh:  # cut the torn tail so the next append starts a clean line
                fh.truncate(good_end)
        if data and not data[:good_end].endswith(b"\n"):
            with path.open("ab") as fh:  # a complete last record that lost only its newline
                fh.write(b"\n")
        return store

    def _replay(self, records: list[dict[str, Any]], warn: Warn | None) -> None:
        by_id: dict[str, dict[str, Any]] = {}
        leaf: str | None = None
        for rec in records:
            kind = rec.get("type")
            if "id" in rec:
                by_id[rec["id"]] = rec
            if kind in ("message", "model_change", "compaction"):
                leaf = rec.get("id")
            elif kind == "queued":
                self._queued[rec["id"]] = QueuedMessage(rec["id"], rec["lane"], rec["text"],
                                                        rec.get("source", "user"))
            elif kind == "dequeued":
                self._queued.pop(rec.get("ref", ""), None)
        chain: list[dict[str, Any]] = []
        cur = leaf
        while cur is not None and cur in by_id:
            chain.append(by_id[cur])
            cur = by_id[cur].get("parent_id")
        for rec in reversed(chain):
            kind = rec["type"]
            if kind == "message":
                try:
                    item = ITEM_ADAPTER.validate_python(rec["item"])
                except Exception:
                    if warn:
                        warn(f"skipped an unreadable message in {self.path}")
                    continue
                self._items.append(item)
                self._item_ids.append(rec["id"])
            elif kind == "model_change":
                self.model = rec.get("model", self.model)
            elif kind == "compaction":
                first = rec.get("first_kept", "")
                start = self._item_ids.index(first) if first in self._item_ids else len(self._items)
                self._compaction = (rec.get("summary", ""), start)
        self._leaf = leaf

    # ---- writing -------------------------------------------------------------------------
    def _write(self, record: dict[str, Any]) -> None:
        if self.closed:
            return
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if fresh:
                header = {"type": "session", "version": FORMAT_VERSION, "id": self.id, "cwd": str(self.cwd),
                          "created": self.created.isoformat(), "model": self.model}
                self._raw_write(header)
        self._raw_write(record)

    def _raw_write(self, record: dict[str, Any]) -> None:
        assert self._fd is not None
        line = self.redactor.scrub(json.dumps(record, ensure_ascii=False, separators=(",", ":"))) + "\n"
        os.write(self._fd, line.encode("utf-8"))
        os.fsync(self._fd)

    def _entry(self, kind: str, moves_leaf: bool = True, **fields: Any) -> str:
        eid = new_id()[:8]
        self._write({"type": kind, "id": eid, "parent_id": self._leaf, "ts": _now().isoformat(), **fields})
        if moves_leaf:
            self._leaf = eid
        return eid

    # ---- the history protocol ------------------------------------------------------------
    def items(self) -> Sequence[Item]:
        return self._items

    def append(self, item: Item) -> None:
        eid = self._entry("message", item=item.model_dump(mode="json", exclude_none=True))
        self._items.append(item)
        self._item_ids.append(eid)
        if self._view is not None:
            self._view.append(item)
        if isinstance(item, UserMessage):
            live = self._live.pop(id(item), None)
            if live is not None:
                self._dequeue(live[0], "delivered")

    def model_view(self) -> Sequence[Item]:
        if self._compaction is None:
            return self._items
        if self._view is None:
            summary, start = self._compaction
            note = UserMessage(text=f"Summary of the earlier conversation:\n{summary}", lane="notice",
                               source="system")
            self._view = [note, *self._items[start:]]
        return self._view

    # ---- other entries -------------------------------------------------------------------
    def record_model(self, model: str) -> None:
        self.model = model
        self._entry("model_change", model=model)

    def record_compaction(self, summary: str, first_kept: int) -> None:
        """Items before index ``first_kept`` are replaced, for the model, by ``summary``."""
        first_kept = min(first_kept, len(self._items))
        first = self._item_ids[first_kept] if first_kept < len(self._item_ids) else ""
        self._entry("compaction", summary=summary, first_kept=first)  # "": everything before it
        self._compaction = (summary, first_kept)
        self._view = None

    # ---- the queue -----------------------------------------------------------------------
    def undelivered(self) -> list[QueuedMessage]:
        """Lane messages queued and never delivered (nor withdrawn)."""
        return list(self._queued.values())

    def attach(self, inbox: Inbox) -> None:
        """Record the inbox's lane messages; first put back the ones a previous process left queued."""
        restore = self.undelivered()
        for q in restore:
            entry = UserMessage(text=q.text, lane=q.lane, source=q.source)
            self._live[id(entry)] = (q.qid, entry)
            inbox.push(q.lane, entry)  # our listener is not subscribed yet: no duplicate entry
        self._unsubscribe = inbox.subscribe(self._on_inbox)

    def track_queued(self, lane: QueueLane, entry: Entry) -> None:
        """Record a lane message that is in the inbox (pushed now, or before this store existed)."""
        if isinstance(entry, UserMessage) and id(entry) not in self._live:
            qid = self._entry("queued", moves_leaf=False, lane=lane, text=entry.text, source=entry.source)
            self._queued[qid] = QueuedMessage(qid, lane, entry.text, entry.source)
            self._live[id(entry)] = (qid, entry)

    def _on_inbox(self, action: str, lane: QueueLane, entry: Entry | None) -> None:
        if action == "push" and entry is not None:
            self.track_queued(lane, entry)
        elif action == "pop" and entry is not None:
            live = self._live.pop(id(entry), None)
            if live is not None:
                self._dequeue(live[0], "withdrawn")
        elif action == "clear":
            for key, (qid, e) in list(self._live.items()):
                if isinstance(e, UserMessage) and e.lane == lane and qid in self._queued:
                    del self._live[key]
                    self._dequeue(qid, "withdrawn")

    def _dequeue(self, qid: str, how: str) -> None:
        if self._queued.pop(qid, None) is not None:
            self._entry("dequeued", moves_leaf=False, ref=qid, how=how)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.closed = True


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
            except ValueError:
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
