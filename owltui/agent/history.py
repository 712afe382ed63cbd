"""The history protocol: the loop asks only for the items, to append one, for the model view, and
to keep a tool result the moment its tool ends (``record_result_early``).

``MemoryHistory`` keeps a list; the session store implements the same protocol on a JSONL file.
Nothing copies the whole history per round.

A history that can be compacted (``Compactable``) keeps every item and changes only what the model
is sent: after ``record_compaction(summary, first_kept, pinned)`` the view is the pinned items (the
current request, word for word), a notice with the summary, then every item from ``first_kept`` on.
Each compaction makes a new view object (the providers' wire cache starts over on a new object).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from owltui.agent.messages import Item, ToolResult, UserMessage


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


SUMMARY_HEADING = "Summary of the earlier conversation:"


@dataclass(frozen=True)
class CompactionMark:
    """The last compaction: ``summary`` stands for the items before ``first_kept``, except the
    ``pinned`` ones (indexes before ``first_kept``), which the model still sees word for word."""

    summary: str
    first_kept: int
    pinned: tuple[int, ...] = ()


def compacted_view(items: Sequence[Item], mark: CompactionMark) -> list[Item]:
    """The model's view after ``mark``: pinned items, the summary notice, the items kept."""
    note = UserMessage(text=f"{SUMMARY_HEADING}\n{mark.summary}", lane="notice", source="system")
    return [*(items[i] for i in mark.pinned if i < mark.first_kept), note, *items[mark.first_kept :]]


@runtime_checkable
class Compactable(Protocol):
    """A history whose model view can be replaced by a summary (``MemoryHistory``, the session store)."""

    def record_compaction(self, summary: str, first_kept: int, pinned: Sequence[int] = ()) -> None: ...

    def compaction(self) -> CompactionMark | None:
        """The last compaction, or None."""
        ...


class MemoryHistory:
    def __init__(self, items: Sequence[Item] = ()) -> None:
        self._items: list[Item] = list(items)
        self._view: list[Item] | None = None  # set once compacted: pinned + summary + kept items
        self._mark: CompactionMark | None = None

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

    def record_compaction(self, summary: str, first_kept: int, pinned: Sequence[int] = ()) -> None:
        """Items before ``first_kept`` are replaced, for the model only, by ``summary``; the
        ``pinned`` ones among them stay, before it."""
        first_kept = min(first_kept, len(self._items))
        self._mark = CompactionMark(summary, first_kept, tuple(sorted(i for i in pinned if i < first_kept)))
        self._view = compacted_view(self._items, self._mark)

    def compaction(self) -> CompactionMark | None:
        return self._mark
