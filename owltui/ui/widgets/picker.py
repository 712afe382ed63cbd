"""A small modal list picker (tools for /require, themes for /theme, models for /model, sessions for
/sessions...). Each option is (value, label); a note may stand under the list. Esc cancels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from owltui.session.commands.spec import Pick


def pick_options(pick: Pick) -> list[tuple[str, str]]:
    """A command's ``Pick`` as the picker's (value, label) options."""
    return [(option, label) for label, option in pick.shown()]


class PickerScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical {
        width: 60;
        height: auto;
        max-height: 80%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    PickerScreen Label { padding: 0 0 1 0; text-style: bold; }
    PickerScreen OptionList { height: auto; max-height: 20; border: none; }
    PickerScreen .note { padding: 1 0 0 0; text-style: none; color: $text-muted; }
    PickerScreen.-wide > Vertical { width: 90%; max-width: 120; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, title: str, options: list[tuple[str, str]], highlight: str | None = None, note: str = ""
    ) -> None:
        super().__init__(classes="-wide" if any(len(label) > 54 for _, label in options) else "")
        self.title_text = title
        self.options = options
        self.highlight = highlight
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield OptionList(*[Option(Text(label), id=value) for value, label in self.options])
            if self.note:
                yield Label(self.note, classes="note", markup=False)

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.focus()
        if self.highlight is not None:
            for i, (value, _label) in enumerate(self.options):
                if value == self.highlight:
                    ol.highlighted = i

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
