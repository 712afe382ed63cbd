"""The history protocol: the loop asks only for the items, to append one, for the model view, and
to keep a tool result the moment its tool ends (``record_result_early``).

``MemoryHistory`` keeps a list; the session store implements the same protocol on a JSONL file.
Nothing copies the whole history per round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .messages import Item, ToolResult, UserMessage


@runtime_checkable
class History(Protocol):
    def items(self) -> Sequence[Item]:
        """All items, oldest first (a view, not a copy)."""
        ...

    def append(self, item: Item) -> None: ...

    def model_view(self) -> Sequence[Item]:
        """What to send to the model (e.g. after a compaction summary); usually ``items()``."""
        ...

    def record_result_early(self, result: ToolResult) -> bool:
        """Keep ``result`` now (its tool just ended), before the loop appends it in call order: a
        concurrent group's finished results survive a crash of the process. The later ``append``
        of the same result must not keep it twice. Never raises; True when it was kept."""
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

    def record_result_early(self, result: ToolResult) -> bool:
        return False  # nothing outlives the process: ``append`` keeps it

    def record_compaction(self, summary: str, first_kept: int) -> None:
        """Items before ``first_kept`` are replaced, for the model only, by ``summary``."""
        note = UserMessage(text=f"Summary of the earlier conversation:\n{summary}", lane="notice",
                           source="system")
        self._view = [note, *self._items[first_kept:]]
