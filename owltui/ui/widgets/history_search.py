"""Ctrl+R: search the input history. Type to narrow (case-insensitive substring, newest first); ↑ / ↓
choose, Enter puts the entry in the input, Esc leaves the input as it was."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from owltui.ui.text import clean

LIMIT = 50
Search = Callable[[str, int], list[str]]  # (substring, limit) -> entries, newest first


def _one_line(text: str, width: int = 100) -> str:
    line = " ⏎ ".join(clean(text).splitlines())
    return line if len(line) <= width else line[: width - 1] + "…"


class HistorySearchScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    HistorySearchScreen { align: center middle; }
    HistorySearchScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 80%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    HistorySearchScreen Label { padding: 0 0 1 0; text-style: bold; }
    HistorySearchScreen Input { margin: 0 0 1 0; }
    HistorySearchScreen OptionList { height: auto; max-height: 20; border: none; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, search: Search, query: str = "") -> None:
        super().__init__()
        self.search = search
        self.query_text = query
        self.found: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Search the input history (↑ ↓ choose, Enter takes it, Esc cancels)")
            yield Input(self.query_text, placeholder="text to find", id="query")
            yield OptionList(id="found")

    def on_mount(self) -> None:
        self._refill(self.query_text)
        self.query_one(Input).focus()

    def _refill(self, query: str) -> None:
        self.found = self.search(query, LIMIT)
        options = self.query_one(OptionList)
        options.clear_options()
        if not self.found:
            options.add_option(Option(Text("no match", style="dim"), disabled=True))
            return
        options.add_options([Option(_one_line(t), id=str(i)) for i, t in enumerate(self.found)])
        options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refill(event.value)

    def on_key(self, event: events.Key) -> None:
        if event.key in ("up", "down"):
            options = self.query_one(OptionList)
            if self.found:
                current = options.highlighted or 0
                step = 1 if event.key == "down" else -1
                options.highlighted = max(0, min(len(self.found) - 1, current + step))
            event.stop()
            event.prevent_default()

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if self.found and highlighted is not None:
            self.dismiss(self.found[highlighted])
        else:
            self.dismiss(None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(self.found[int(event.option.id)])

    def action_cancel(self) -> None:
        self.dismiss(None)
