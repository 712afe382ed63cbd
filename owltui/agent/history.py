"""The history protocol: the loop asks only for the items, to append one, and for the model view.

``MemoryHistory`` keeps a list; the session store implements the same protocol on a JSONL file.
Nothing copies the whole history per round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .messages import Item, UserMessage


@runtime_checkable
class History(Protocol):
    def items(self) -> Sequence[Item]:
        """All items, oldest first (a view, not a copy)."""
        ...

    def append(self, item: Item) -> None: ...

    def model_view(self) -> Sequence[Item]:
        """What to send to the model (e.g. after a compaction summary); usually ``items()``."""
        ...


class MemoryHistory:
    def __init__(self, items: Sequence[Item] = ()) -> None:
        self._items: list[Item] = list(items)
        self._view: list[Item] | None = None  # set once compacted: summary + kept items

    def items(self) -> Sequence[Item]:
        return self._items

    def append(self, item: Item) -> None:
        self._items.append(item)
        if self._view is not None:
            self._view.append(item)

    def model_view(self) -> Sequence[Item]:
        return self._items if self._view is None else self._view

    def record_compaction(self, summary: str, first_kept: int) -> None:
        """Items before ``first_kept`` are replaced, for the model only, by ``summary``."""
        note = UserMessage(text=f"Summary of the earlier conversation:\n{summary}", lane="notice",
                           source="system")
        self._view = [note, *self._items[first_kept:]]
