"""The multi-line input: always usable, even while the agent streams or runs tools.

Enter sends (a prompt when idle, steering while a run goes); Alt+Enter or Ctrl+J sends a follow-up;
Shift+Enter, Ctrl+N or a trailing backslash insert a newline; Alt+Up takes back the last queued
message; Tab / ↑ / ↓ work the command completion list when one is showing. Letters typed here are
always text: an approval is answered only by a deliberate key (Ctrl+G, see ``approval``).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static, TextArea

from owltui.session.commands import Command


class CompletionList(Static):
    DEFAULT_CSS = """
    CompletionList {
        height: auto;
        max-height: 12;
        margin: 0 1;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.matches: list[Command] = []
        self.index = 0
        self.display = False

    def show(self, matches: list[Command], index: int = 0) -> None:
        self.matches = matches
        self.index = min(index, max(0, len(matches) - 1))
        self.display = bool(matches)
        out = Text()
        for i, cmd in enumerate(matches):
            if i:
                out.append("\n")
            style = "reverse bold" if i == self.index else ""
            out.append(f"/{cmd.slash} {cmd.usage}".rstrip().ljust(28), style=style)
            out.append(f"  {cmd.help}", style="dim")
        self.update(out)

    @property
    def current(self) -> Command | None:
        return self.matches[self.index] if self.matches else None


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
        margin: 0 1;
        border: round $primary 60%;
    }
    PromptInput:focus { border: round $primary; }
    """

    BINDINGS = [
        Binding("enter", "send", "Send / steer", priority=True, id="send"),
        Binding("alt+enter,ctrl+j", "follow_up", "Follow-up", priority=True, id="follow_up",
                key_display="alt+⏎"),
        Binding("shift+enter,ctrl+n", "newline", "Newline", show=False, priority=True, id="newline"),
        Binding("alt+up", "pop_queue", "Edit queued", show=False, priority=True, id="pop_queue",
                key_display="alt+↑"),
    ]

    class Send(Message):
        """``lane``: ``"prompt"`` (a prompt when idle, steering while running) or ``"follow_up"``."""

        def __init__(self, text: str, lane: str) -> None:
            super().__init__()
            self.text = text
            self.lane = lane

    class PopQueue(Message):
        pass

    def __init__(self, completions: CompletionList, *,
                 complete: Callable[[str], list[Command]] | None = None, id: str | None = None) -> None:
        super().__init__("", id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.completions = completions
        self.complete = complete or (lambda _text: [])

    # ---- actions -------------------------------------------------------------------------
    def _take(self) -> str:
        text = self.text
        self.clear()
        return text

    # The bindings have priority (so Enter never reaches the TextArea as a newline), which means the
    # app runs them as soon as the key arrives — possibly before this widget has handled the keys typed
    # just before it (a fast typist, tmux send-keys, a terminal delivering "text\r" in one read). Each
    # action therefore queues its work behind those keys instead of reading ``self.text`` at once.
    def action_send(self) -> None:
        self.call_later(self._send)

    def action_follow_up(self) -> None:
        self.call_later(self._follow_up)

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def action_pop_queue(self) -> None:
        self.call_later(self.post_message, self.PopQueue())

    def _send(self) -> None:
        cmd = self.completions.current if self.completions.display else None
        if cmd is not None and self.text.strip() != f"/{cmd.name}":
            if cmd.args:
                self.fill(f"/{cmd.name} ")
                return
            self.fill(f"/{cmd.name}")
        if self.text.endswith("\\"):
            self.fill(self.text[:-1] + "\n")
            return
        if not self.text.strip():
            return
        self.post_message(self.Send(self._take(), "prompt"))

    def _follow_up(self) -> None:
        if self.text.strip():
            self.post_message(self.Send(self._take(), "follow_up"))

    def fill(self, text: str) -> None:
        """Replace the text, cursor at the end."""
        self.load_text(text)
        lines = text.split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))

    def put_back(self, text: str) -> None:
        """Put a message taken back from the queue into the editor (before anything typed)."""
        current = self.text
        self.fill(text if not current.strip() else f"{text}\n{current}")

    # ---- completion --------------------------------------------------------
    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        matches = self.complete(self.text)
        if len(matches) == 1 and self.text == f"/{matches[0].name}":
            matches = matches if matches[0].args else []
        self.completions.show(matches)

    async def _on_key(self, event: events.Key) -> None:
        if self.completions.display and event.key in ("tab", "up", "down"):
            event.stop()
            event.prevent_default()
            n = len(self.completions.matches)
            if event.key == "tab":
                cmd = self.completions.current
                if cmd is not None:
                    self.fill(f"/{cmd.name} " if cmd.args else f"/{cmd.name}")
            else:
                step = 1 if event.key == "down" else -1
                self.completions.show(self.completions.matches, (self.completions.index + step) % n)
            return
        # Every other key is the editor's: a letter typed here is text, never an approval's answer,
        # however long an approval has been waiting (answering is Ctrl+G, then y / a / n).
        await super()._on_key(event)
