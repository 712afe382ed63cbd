"""The inbox: three FIFO lanes of outside input for a running (or idle) agent.

- ``steer``: the user typing while the agent works; delivered at the next poll point.
- ``follow_up``: delivered only when the agent would otherwise stop.
- ``aside``: background notices (a job finished); never interrupt tools, never force an extra
  call mid-batch. An aside may be a thunk evaluated at delivery; ``None`` means "nothing to say".

The loop consumes lanes only at its poll points and never after the run was aborted, so nothing
queued is stranded in a dying run. Front ends observe changes through ``subscribe``.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Literal

from .messages import UserMessage

log = logging.getLogger(__name__)

QueueLane = Literal["steer", "follow_up", "aside"]
LANES: tuple[QueueLane, ...] = ("steer", "follow_up", "aside")
AsideThunk = Callable[[], str | None]
Entry = UserMessage | AsideThunk
InboxListener = Callable[[str, QueueLane, "Entry | None"], None]  # (action, lane, entry)


class Inbox:
    def __init__(self) -> None:
        self._lanes: dict[QueueLane, deque[Entry]] = {lane: deque() for lane in LANES}
        self._order: list[tuple[QueueLane, Entry]] = []  # push order, for pop_last
        self._listeners: list[InboxListener] = []

    def subscribe(self, fn: InboxListener) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, action: str, lane: QueueLane, entry: Entry | None) -> None:
        for fn in tuple(self._listeners):
            try:
                fn(action, lane, entry)
            except Exception:
                log.exception("inbox listener failed")

    def push(self, lane: QueueLane, entry: str | Entry, source: str = "user") -> Entry:
        if isinstance(entry, str):
            entry = UserMessage(text=entry, lane=lane, source=source)
        self._lanes[lane].append(entry)
        self._order.append((lane, entry))
        self._notify("push", lane, entry)
        return entry

    def requeue(self, messages: list[UserMessage]) -> None:
        """Put messages taken by a run that died before delivering them back at the front."""
        for msg in reversed(messages):
            lane: QueueLane = msg.lane if msg.lane in LANES else "steer"
            self._lanes[lane].appendleft(msg)
            self._order.insert(0, (lane, msg))
            self._notify("requeue", lane, msg)

    def peek(self, lane: QueueLane) -> list[Entry]:
        return list(self._lanes[lane])

    def texts(self, lane: QueueLane) -> list[str]:
        return [e.text if isinstance(e, UserMessage) else "(pending notice)" for e in self._lanes[lane]]

    def __len__(self) -> int:
        return sum(len(q) for q in self._lanes.values())

    def has(self, *lanes: QueueLane) -> bool:
        return any(self._lanes[lane] for lane in (lanes or LANES))

    def take(self, lane: QueueLane) -> list[UserMessage]:
        """Consume the whole lane. Aside thunks are evaluated now; ``None`` results vanish."""
        q = self._lanes[lane]
        if not q:
            return []
        entries = list(q)
        q.clear()
        taken = {id(e) for e in entries}
        self._order = [(ln, e) for ln, e in self._order if id(e) not in taken]
        out: list[UserMessage] = []
        for e in entries:
            if isinstance(e, UserMessage):
                out.append(e)
            else:
                try:
                    text = e()
                except Exception:
                    log.exception("aside thunk failed")
                    text = None
                if text:
                    out.append(UserMessage(text=text, lane="aside", source="system"))
        self._notify("take", lane, None)
        return out

    def pop_last(self, lanes: tuple[QueueLane, ...] = ("steer", "follow_up")) -> UserMessage | None:
        """Take back the most recently queued message of ``lanes`` (to edit it again)."""
        for i in range(len(self._order) - 1, -1, -1):
            lane, entry = self._order[i]
            if lane in lanes and isinstance(entry, UserMessage):
                del self._order[i]
                self._lanes[lane].remove(entry)
                self._notify("pop", lane, entry)
                return entry
        return None

    def clear(self, lanes: tuple[QueueLane, ...] = LANES) -> None:
        for lane in lanes:
            if self._lanes[lane]:
                self._lanes[lane].clear()
                self._notify("clear", lane, None)
        self._order = [(ln, e) for ln, e in self._order if ln not in lanes]

    def snapshot(self) -> dict[str, list[str]]:
        return {lane: self.texts(lane) for lane in LANES}
