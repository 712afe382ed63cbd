"""Above the input: queued steering and follow-up messages, and running background jobs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import Static

from .text import clean

MAX_SHOWN = 6


def _text(item: Any) -> str:
    if isinstance(item, Mapping):
        return str(item.get("text", ""))
    return str(getattr(item, "text", item))


def _short(text: str, width: int = 90) -> str:
    line = " ".join(clean(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


class QueuePanel(Static):
    DEFAULT_CSS = """
    QueuePanel {
        height: auto;
        max-height: 10;
        padding: 0 1;
        margin: 0 1;
        border-top: solid $secondary 50%;
        color: $text-muted;
    }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.items: list[tuple[str, str]] = []

    def show_queue(self, queue: Mapping[Any, Sequence[Any]], jobs: dict[str, str]) -> None:
        """``queue``: per lane, the queued messages (``{id, text, source}`` objects, or their texts)."""
        items = [("steer", _text(t)) for t in queue.get("steer", [])]
        items += [("follow-up", _text(t)) for t in queue.get("follow_up", [])]
        items += [("job", f"{jid}: {cmd}") for jid, cmd in jobs.items()]
        self.items = items
        if not items:
            self.display = False
            return
        out = Text()
        for i, (kind, text) in enumerate(items[-MAX_SHOWN:]):
            if i:
                out.append("\n")
            out.append(f"{kind:>9} ", style="bold")
            out.append(_short(text))
        if len(items) > MAX_SHOWN:
            out.append(f"\n          … and {len(items) - MAX_SHOWN} more")
        if any(kind != "job" for kind, _ in items):
            out.append("\n          alt+↑ edit last queued message", style="dim")
        self.update(out)
        self.display = True
