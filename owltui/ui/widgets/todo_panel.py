"""Above the input: the model's todo list, pinned and compact.

One line per item - ☐ pending, ▶ in progress, ☑ done - each cut to the panel's width with an
ellipsis, never wrapped; a long list shows a window around the step in progress. Collapsed (a
click, or ``TOGGLE_KEY``) it is one line: ``todo 3/7 · now: <the step in progress>``. Hidden while
there is no list. It draws what the ``todo`` event carries (and, for a resumed session, the list
the history saved); it never changes the list.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.widgets import Static

from owltui.agent.events import TodoItem
from owltui.agent.todo import MARKS
from owltui.ui.text import clean

MAX_SHOWN = 8  # item lines when expanded; more are summed up on one line
TOGGLE_KEY = "f8"  # MainScreen's binding that collapses and expands the panel
STYLES = {"pending": "", "in_progress": "bold", "done": "dim"}


def _line(text: str) -> str:
    return " ".join(clean(text).split())


def summary_line(items: Sequence[TodoItem]) -> str:
    """The collapsed panel's line: ``todo DONE/TOTAL`` and the step in progress, if any."""
    done = sum(1 for i in items if i.status == "done")
    now = next((i.content for i in items if i.status == "in_progress"), None)
    head = f"todo {done}/{len(items)}"
    return f"{head} · now: {_line(now)}" if now is not None else head


def window(items: Sequence[TodoItem], size: int = MAX_SHOWN) -> tuple[int, int]:
    """The ``[start, end)`` of the items shown: the step in progress (else the first not done) in
    view, with the steps before it when there is room."""
    if len(items) <= size:
        return 0, len(items)
    focus = next((n for n, i in enumerate(items) if i.status == "in_progress"), None)
    if focus is None:
        focus = next((n for n, i in enumerate(items) if i.status != "done"), len(items) - 1)
    start = max(0, min(focus - 2, len(items) - size))
    return start, start + size


class TodoPanel(Static):
    DEFAULT_CSS = """
    TodoPanel {
        height: auto;
        max-height: 11;
        padding: 0 1;
        margin: 0 1;
        border-top: solid $secondary 50%;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.items: tuple[TodoItem, ...] = ()
        self.collapsed = False

    def show_items(self, items: Sequence[TodoItem]) -> None:
        """Draw ``items`` (the whole list); an empty list hides the panel."""
        self.items = tuple(items)
        self.display = bool(self.items)
        if self.items:
            self.update(self.render_text())

    def toggle(self) -> None:
        """Collapse to the one summary line, or expand again."""
        self.collapsed = not self.collapsed
        if self.items:
            self.update(self.render_text())

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.toggle()

    def render_text(self) -> Text:
        if self.collapsed:
            return _cut(summary_line(self.items) + f"  ({TOGGLE_KEY}: expand)", "dim")
        start, end = window(self.items)
        lines: list[Text] = []
        if start:
            lines.append(_cut(f"  … {start} above", "dim"))
        for item in self.items[start:end]:
            lines.append(_cut(f"{MARKS[item.status]} {_line(item.content)}", STYLES[item.status]))
        if end < len(self.items):
            lines.append(_cut(f"  … {len(self.items) - end} more", "dim"))
        return Text("\n", no_wrap=True, overflow="ellipsis").join(lines)


def _cut(text: str, style: str) -> Text:
    """One line, cut with an ellipsis at the panel's width (never wrapped)."""
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")
