"""The inbox: three FIFO lanes of outside input for a running (or idle) agent.

- ``steer``: the user typing while the agent works; delivered at the next poll point.
- ``follow_up``: delivered only when the agent would otherwise stop, one per stop.
- ``aside``: background notices (a job finished); never interrupt tools, never force an extra
  call mid-batch. An aside may be a thunk evaluated at delivery; ``None`` means "nothing to say".

Every queued message has an id (8 hex digits, unique in practice across processes, so ids a
session file restores never collide with new ones). Until the moment the loop takes it for
delivery a message can be edited (``edit``), removed (``remove``) and moved between ``steer`` and
``follow_up`` or reordered (``move``); asked about an id that is no longer queued (delivered
meanwhile, removed, never queued), each raises ``NotQueued``, a ``QueueError``. ``snapshot`` is
what front ends show: per lane, ``{id, text, source}`` objects.

The loop consumes lanes only at its poll points and never after the run was aborted, so nothing
queued is stranded in a dying run. Front ends observe every change through ``subscribe``: the
listener gets ``(action, lane, item)``, action one of ``push``, ``requeue``, ``edit``, ``move``
(``lane`` is the new lane), ``remove``, ``pop``, ``take`` and ``clear`` (``item`` None for the
last two).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict

from owltui.agent.messages import UserMessage

log = logging.getLogger(__name__)

QueueLane = Literal["steer", "follow_up", "aside"]
LANES: tuple[QueueLane, ...] = ("steer", "follow_up", "aside")
USER_QUEUE_LANES: tuple[QueueLane, ...] = ("steer", "follow_up")  # what a user message may move between
AsideThunk = Callable[[], str | None]
Entry = UserMessage | AsideThunk
PENDING_NOTICE = "(pending notice)"  # the text shown for an aside thunk not yet evaluated


class QueueView(TypedDict):
    """One queued message as front ends and RPC see it."""

    id: str
    text: str
    source: str


class QueueError(LookupError):
    """A queue change that cannot be made; ``str()`` is one sentence for the user."""


class NotQueued(QueueError):
    """The id names no queued message: delivered meanwhile, removed, or never queued."""

    def __init__(self, qid: str) -> None:
        super().__init__(
            f"No queued message {qid!r}: it was delivered or removed meanwhile, or never queued."
        )
        self.qid = qid


@dataclass(eq=False)
class Queued:
    """One message in a lane. ``entry`` changes (a new frozen message) on edit or lane move."""

    id: str
    lane: QueueLane
    entry: Entry
    seq: int  # push order (for ``pop_last``)
    immediate: bool = False  # steering that skips the calls not yet started (this message only)

    @property
    def text(self) -> str:
        return self.entry.text if isinstance(self.entry, UserMessage) else PENDING_NOTICE

    @property
    def source(self) -> str:
        return self.entry.source if isinstance(self.entry, UserMessage) else "system"

    def view(self) -> QueueView:
        return {"id": self.id, "text": self.text, "source": self.source}


InboxListener = Callable[[str, QueueLane, "Queued | None"], None]  # (action, lane, item)


def new_queue_id() -> str:
    return os.urandom(4).hex()


class Inbox:
    def __init__(self) -> None:
        self._lanes: dict[QueueLane, list[Queued]] = {lane: [] for lane in LANES}
        self._by_id: dict[str, Queued] = {}
        self.by_id: Mapping[str, Queued] = self._by_id  # read-only; empty = nothing queued (a cheap test)
        self._seq = 0
        self._listeners: list[InboxListener] = []

    def subscribe(self, fn: InboxListener) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, action: str, lane: QueueLane, item: Queued | None) -> None:
        for fn in tuple(self._listeners):
            try:
                fn(action, lane, item)
            except Exception:
                log.exception("inbox listener failed")

    def _new(self, lane: QueueLane, entry: Entry, qid: str | None, immediate: bool) -> Queued:
        if qid is None or qid in self._by_id:
            qid = new_queue_id()
            while qid in self._by_id:
                qid = new_queue_id()
        self._seq += 1
        item = Queued(qid, lane, entry, self._seq, immediate)
        self._by_id[qid] = item
        return item

    # ---- adding --------------------------------------------------------------------------
    def push(
        self,
        lane: QueueLane,
        entry: str | Entry,
        source: str = "user",
        *,
        qid: str | None = None,
        immediate: bool = False,
    ) -> Queued:
        """Queue a message (text, a message, or an aside thunk) at the end of ``lane``. ``qid``:
        keep this id (a restored queue), unless it is in use. ``immediate``: steering that skips
        the calls of the running batch not yet started."""
        if isinstance(entry, str):
            entry = UserMessage(text=entry, lane=lane, source=source)
        item = self._new(lane, entry, qid, immediate and lane == "steer")
        self._lanes[lane].append(item)
        self._notify("push", lane, item)
        return item

    def requeue(self, messages: Iterable[Queued | UserMessage]) -> None:
        """Put messages taken by a run that died before delivering them back at the front, in
        order; ``Queued`` records keep their ids."""
        for m in reversed(list(messages)):
            if isinstance(m, Queued):
                item = self._new(m.lane, m.entry, m.id, m.immediate)
                item.seq = m.seq
            else:
                lane: QueueLane = m.lane if m.lane in LANES else "steer"
                item = self._new(lane, m, None, False)
            self._lanes[item.lane].insert(0, item)
            self._notify("requeue", item.lane, item)

    # ---- reading -------------------------------------------------------------------------
    def get(self, qid: str) -> Queued:
        """The queued message ``qid``; ``NotQueued`` if it is not queued (any more)."""
        item = self._by_id.get(qid)
        if item is None:
            raise NotQueued(qid)
        return item

    def items(self, lane: QueueLane) -> list[Queued]:
        return list(self._lanes[lane])

    def peek(self, lane: QueueLane) -> list[Entry]:
        return [q.entry for q in self._lanes[lane]]

    def texts(self, lane: QueueLane) -> list[str]:
        return [q.text for q in self._lanes[lane]]

    def snapshot(self) -> dict[QueueLane, list[QueueView]]:
        """Per lane, in delivery order: ``{id, text, source}`` (the ``get_state`` queue)."""
        return {lane: [q.view() for q in self._lanes[lane]] for lane in LANES}

    def following(self, qid: str) -> str | None:
        """The id of the message after ``qid`` in its lane (None at the end)."""
        item = self.get(qid)
        lane = self._lanes[item.lane]
        i = lane.index(item)
        return lane[i + 1].id if i + 1 < len(lane) else None

    def __len__(self) -> int:
        return len(self._by_id)

    def has(self, *lanes: QueueLane) -> bool:
        return any(self._lanes[lane] for lane in (lanes or LANES))

    def interrupting(self, all_steering: bool = False) -> Queued | None:
        """The first steering message that skips the calls not yet started: any steering message
        when ``all_steering`` (config ``steering = "immediate"``), else one sent as immediate."""
        for item in self._lanes["steer"]:
            if all_steering or item.immediate:
                return item
        return None

    # ---- changing a queued message -------------------------------------------------------
    def edit(self, qid: str, text: str) -> QueueView:
        """Replace the text of queued message ``qid`` (same id, lane and place)."""
        item = self.get(qid)
        if not isinstance(item.entry, UserMessage):
            raise QueueError(f"Queued message {qid!r} is a background notice; it cannot be edited.")
        if not text.strip():
            raise QueueError("The new text is empty; remove the message instead.")
        item.entry = item.entry.model_copy(update={"text": text})
        self._notify("edit", item.lane, item)
        return item.view()

    def remove(self, qid: str) -> QueueView:
        """Withdraw queued message ``qid``; it is never delivered."""
        item = self.get(qid)
        self._drop(item)
        self._notify("remove", item.lane, item)
        return item.view()

    def move(self, qid: str, lane: QueueLane | None = None, before: str | None = None) -> QueueView:
        """Move queued message ``qid`` to ``lane`` (steer or follow-up; default its own) and there
        before message ``before`` (default: at the end)."""
        item = self.get(qid)
        target = lane or item.lane
        if target not in LANES:
            raise QueueError(f"Unknown lane {target!r}: use steer or follow_up.")
        if target != item.lane and (
            item.lane not in USER_QUEUE_LANES
            or target not in USER_QUEUE_LANES
            or not isinstance(item.entry, UserMessage)
        ):
            raise QueueError("Only steering and follow-up messages move between lanes (steer and follow_up).")
        anchor: Queued | None = None
        if before is not None:
            if before == qid:
                raise QueueError("A message cannot be moved before itself.")
            anchor = self.get(before)
            if anchor.lane != target:
                raise QueueError(f"Queued message {before!r} is not in the {target} lane.")
        self._lanes[item.lane].remove(item)
        if target != item.lane and isinstance(item.entry, UserMessage):
            item.entry = item.entry.model_copy(update={"lane": target})
            item.lane = target
            item.immediate = item.immediate and target == "steer"
        dest = self._lanes[target]
        dest.insert(dest.index(anchor) if anchor is not None else len(dest), item)
        self._notify("move", target, item)
        return item.view()

    def _drop(self, item: Queued) -> None:
        self._lanes[item.lane].remove(item)
        del self._by_id[item.id]

    # ---- consuming -----------------------------------------------------------------------
    def take_queued(self, lane: QueueLane, limit: int | None = None) -> list[Queued]:
        """Consume the lane (its first ``limit`` messages). Aside thunks are evaluated now, their
        records carrying the message they said; ``None`` results vanish."""
        q = self._lanes[lane]
        if not q:
            return []
        if limit is None or limit >= len(q):
            taken = q[:]
            q.clear()
        else:
            taken = q[:limit]
            del q[:limit]
        out: list[Queued] = []
        for item in taken:
            del self._by_id[item.id]
            if not isinstance(item.entry, UserMessage):
                try:
                    text = item.entry()
                except Exception:
                    log.exception("aside thunk failed")
                    text = None
                if not text:
                    continue
                item.entry = UserMessage(text=text, lane="aside", source="system")
            out.append(item)
        self._notify("take", lane, None)
        return out

    def take(self, lane: QueueLane, limit: int | None = None) -> list[UserMessage]:
        """Consume the lane (its first ``limit`` messages); the messages to deliver."""
        return [item.entry for item in self.take_queued(lane, limit)]  # type: ignore[misc]

    def pop_last(self, lanes: tuple[QueueLane, ...] = ("steer", "follow_up")) -> UserMessage | None:
        """Take back the most recently queued message of ``lanes`` (to edit it again)."""
        last: Queued | None = None
        for lane in lanes:
            for item in self._lanes[lane]:
                if isinstance(item.entry, UserMessage) and (last is None or item.seq > last.seq):
                    last = item
        if last is None:
            return None
        self._drop(last)
        self._notify("pop", last.lane, last)
        return last.entry  # type: ignore[return-value]

    def clear(self, lanes: tuple[QueueLane, ...] = LANES) -> None:
        for lane in lanes:
            q = self._lanes[lane]
            if q:
                for item in q:
                    del self._by_id[item.id]
                q.clear()
                self._notify("clear", lane, None)
