"""The lane messages of a session's inbox as its file records them (``queued``/``dequeued``
entries, which never move the leaf), so the queue survives a crash: ``attach`` puts back the ones a
previous process left undelivered, with their ids."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from owltui.agent.inbox import Entry, Inbox, Queued, QueueLane
from owltui.agent.messages import UserMessage
from owltui.session.redact import Redactor
from owltui.session.store.file import Warn
from owltui.session.store.replay import QueuedMessage, placed
from owltui.session.store.writer import SessionWriter


class QueueLog(SessionWriter):
    """A session writer that records an inbox's lane messages: pushed, edited, moved, withdrawn or
    delivered (``SessionStore`` reports deliveries as the loop appends them)."""

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
        self._queued: dict[str, QueuedMessage] = {}  # undelivered, by qid (the inbox's id), in order
        self._live: dict[int, tuple[str, Entry]] = {}  # id(inbox entry) -> (qid, entry)
        self._inbox: Inbox | None = None
        self._unsubscribe: Callable[[], None] | None = None

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

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()
