"""Above the input: queued steering and follow-up messages, and running background jobs.

The panel is focusable (``FOCUS_KEY`` from the input): Up/Down move through the queued messages,
Enter edits one in place (an input under the panel, prefilled; Enter saves, Esc leaves it), Delete
or ``d`` withdraws it, Tab or ``l`` moves it to the other lane (steer ↔ follow-up, at the end),
Shift+Up/Down or ``K``/``J`` reorder it within its lane, Esc goes back to the input — paused or
not. Every change goes through the command layer (``queue_edit``, ``queue_remove``,
``queue_move``); a refused one (the message was delivered meanwhile) is shown as its notice, and
the panel redraws from the inbox's own change notices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import Input, Static

from owltui.agent.inbox import QueueLane, QueueView
from owltui.ui.text import clean

MAX_SHOWN = 6
FOCUS_KEY = "f3"  # MainScreen's binding that focuses the panel
LANE_NAMES = {"steer": "steer", "follow_up": "follow-up"}
OTHER_LANE = {"steer": "follow_up", "follow_up": "steer"}
HINT = "↑↓ select · enter edit · d delete · tab steer↔follow-up · K/J reorder · esc back"


SHOWN_LANES: tuple[QueueLane, ...] = ("steer", "follow_up")
QueueItem = QueueView | str  # a queued message as the inbox lists it, or just its text


def _text(item: QueueItem) -> str:
    return item if isinstance(item, str) else item["text"]


def _id(item: QueueItem) -> str:
    return "" if isinstance(item, str) else item["id"]


def _short(text: str, width: int = 90) -> str:
    line = " ".join(clean(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


@dataclass(frozen=True)
class Entry:
    """One queued message as the panel lists it."""

    lane: str  # "steer" | "follow_up"
    id: str
    text: str


class QueueEditor(Input):
    """The inline editor of one queued message (mounted under the panel while editing)."""

    DEFAULT_CSS = """
    QueueEditor { margin: 0 1; height: 3; }
    """

    def __init__(self, entry: Entry, panel: QueuePanel) -> None:
        super().__init__(entry.text, id="queue-edit", select_on_focus=False)
        self.entry = entry
        self.panel = panel

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        await self.panel.save_edit(self.entry, self.value)

    def on_blur(self, _event: events.Blur) -> None:
        self.panel.close_editor(refocus=False)


class QueuePanel(Static, can_focus=True):
    DEFAULT_CSS = """
    QueuePanel {
        height: auto;
        max-height: 10;
        padding: 0 1;
        margin: 0 1;
        border-top: solid $secondary 50%;
        color: $text-muted;
    }
    QueuePanel:focus { border-top: solid $primary; color: $text; }
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Previous", show=False),
        Binding("down", "cursor(1)", "Next", show=False),
        Binding("enter", "edit", "Edit"),
        Binding("delete,d", "delete", "Delete"),
        Binding("tab,l", "switch_lane", "Steer↔follow-up"),
        Binding("shift+up,K", "reorder(-1)", "Move up"),
        Binding("shift+down,J", "reorder(1)", "Move down"),
    ]

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.items: list[tuple[str, str]] = []
        self.entries: list[Entry] = []  # the queued messages, in delivery order (steer lane first)
        self.cursor = 0
        self.editor: QueueEditor | None = None
        self._jobs: dict[str, str] = {}

    # ---- drawing -------------------------------------------------------------------------
    def show_queue(self, queue: Mapping[QueueLane, Sequence[QueueItem]], jobs: dict[str, str]) -> None:
        """``queue``: per lane, the queued messages (``{id, text, source}`` objects, or their texts)."""
        chosen = self.selected
        self.entries = [Entry(lane, _id(t), _text(t)) for lane in SHOWN_LANES for t in queue.get(lane, [])]
        self._jobs = dict(jobs)
        ids = [e.id for e in self.entries]
        if chosen is not None and chosen.id in ids:
            self.cursor = ids.index(chosen.id)
        self.cursor = max(0, min(self.cursor, len(self.entries) - 1))
        items = [(LANE_NAMES[e.lane], e.text) for e in self.entries]
        items += [("job", f"{jid}: {cmd}") for jid, cmd in jobs.items()]
        self.items = items
        if not items:
            self.display = False
            if self.has_focus:
                self._back_to_input()
            return
        self.display = True
        self._draw()

    def _draw(self) -> None:
        items, focused = self.items, self.has_focus and bool(self.entries)
        if focused:  # a window of MAX_SHOWN rows around the cursor
            start = max(0, min(self.cursor - MAX_SHOWN // 2, len(items) - MAX_SHOWN))
        else:
            start = max(0, len(items) - MAX_SHOWN)
        out = Text()
        if focused and start:
            out.append(f"          … {start} more above\n")
        for i, (kind, text) in enumerate(items[start : start + MAX_SHOWN], start):
            if i > start:
                out.append("\n")
            mark = focused and i == self.cursor
            label = f"{kind:>9} "
            out.append("›" + label[1:] if mark else label, style="bold")
            out.append(_short(text), style="reverse" if mark else "")
        hidden = len(items) - start - MAX_SHOWN
        if focused and hidden > 0:
            out.append(f"\n          … {hidden} more below")
        elif not focused and len(items) > MAX_SHOWN:
            out.append(f"\n          … and {len(items) - MAX_SHOWN} more")
        if focused:
            out.append(f"\n          {HINT}", style="dim")
        elif self.entries:
            out.append("\n          alt+↑ edit last queued message", style="dim")
        self.update(out)

    def on_focus(self, _event: events.Focus) -> None:
        if not self.entries:
            self._back_to_input()
            return
        self.call_after_refresh(self._redraw)

    def on_blur(self, _event: events.Blur) -> None:
        self.call_after_refresh(self._redraw)

    def _redraw(self) -> None:
        if self.items:
            self._draw()

    # ---- selection -----------------------------------------------------------------------
    @property
    def selected(self) -> Entry | None:
        if 0 <= self.cursor < len(self.entries):
            return self.entries[self.cursor]
        return None

    def action_cursor(self, step: int) -> None:
        if self.entries:
            self.cursor = max(0, min(len(self.entries) - 1, self.cursor + step))
            self._draw()

    # ---- changes, through the command layer ----------------------------------------------
    async def _call(self, name: str, **fields: Any) -> bool:
        app: Any = self.app
        reply = app.commands.call(name, **fields)
        if not reply.ok:
            await app.show(reply)  # "delivered or removed meanwhile": a notice, nothing else
        return bool(reply.ok)

    def action_edit(self) -> None:
        entry = self.selected
        if entry is None:
            return
        self.close_editor(refocus=False)
        self.editor = QueueEditor(entry, self)
        self.screen.mount(self.editor, after=self)
        self.editor.focus()

    async def save_edit(self, entry: Entry, text: str) -> None:
        if text != entry.text:
            await self._call("queue_edit", id=entry.id, text=text)
        self.close_editor(refocus=True)

    def close_editor(self, refocus: bool) -> None:
        editor, self.editor = self.editor, None
        if editor is not None and editor.is_attached:
            editor.remove()
        if refocus:
            if self.entries:
                self.focus()
            else:
                self._back_to_input()

    async def action_delete(self) -> None:
        entry = self.selected
        if entry is not None:
            await self._call("queue_remove", id=entry.id)

    async def action_switch_lane(self) -> None:
        entry = self.selected
        if entry is not None:
            await self._call("queue_move", id=entry.id, lane=OTHER_LANE[entry.lane], before=None)

    async def action_reorder(self, step: int) -> None:
        entry = self.selected
        if entry is None:
            return
        lane = [e for e in self.entries if e.lane == entry.lane]
        i = lane.index(entry)
        if step < 0:
            if i == 0:
                return
            before: str | None = lane[i - 1].id
        else:
            if i == len(lane) - 1:
                return
            before = lane[i + 2].id if i + 2 < len(lane) else None
        await self._call("queue_move", id=entry.id, lane=entry.lane, before=before)

    def _back_to_input(self) -> None:
        target = self.screen.query("#input")
        if target:
            target.first().focus()
