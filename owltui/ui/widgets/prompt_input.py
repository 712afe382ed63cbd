"""The multi-line input: always usable, even while the agent streams or runs tools.

Enter sends (a prompt when idle, steering while a run goes); Alt+Enter or Ctrl+J sends a follow-up;
Shift+Enter, Ctrl+N or a trailing backslash insert a newline; Alt+Up takes back the last queued
message. Up on the first line recalls the previous entry of the input history (Down on the last line
goes forward again, back to what was being typed). After ``/`` the list below offers commands; after
``@`` it offers the workspace's files (fuzzy, ranked off the event loop: until the ranking of what is
typed arrives the list shown before stays, and Tab / Enter take what is shown): Tab or Enter takes the
highlighted one, ↑ / ↓ move, Esc closes the list. Letters typed here are always text: an approval is
answered only by a deliberate key (Ctrl+G, see ``approval``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static, TextArea

from owltui.session.commands.spec import Command
from owltui.session.input.mentions import mention_token
from owltui.ui import look

# an @ mention being typed, up to the cursor: @path or @"quoted path
_MENTION = re.compile(r'(?:^|(?<=\s))@(?:"([^"\n]*)|([^\s"]*))\Z')
LOADING = "listing the workspace's files…"


def needs_words(cmd: Command) -> bool:
    """A command that cannot run without typing an argument (no picker offers one)."""
    return cmd.pick is None and any(a.required for a in cmd.args)


class History(Protocol):
    """What the input reads of the input history (``owltui.session.input.history.InputHistory``)."""

    def entries(self) -> list[str]: ...


class CompletionList(Static):
    """Below the input: commands after ``/``, files after ``@``."""

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
        self.kind = "command"
        self.matches: list[Command] = []
        self.paths: list[str] = []
        self.index = 0
        self.display = False

    def show(self, matches: list[Command], index: int = 0) -> None:
        """Commands (an empty list hides it)."""
        self.kind, self.matches, self.paths = "command", matches, []
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

    def show_paths(self, paths: list[str] | None, index: int = 0, keep_choice: bool = False) -> None:
        """Files for an ``@`` mention; None: still listing them (says so). ``keep_choice``: the same
        files as shown keep the one chosen (a ranking that arrived after the keystroke that asked)."""
        if keep_choice and self.kind == "mention" and paths == self.paths:
            index = self.index
        self.kind, self.matches, self.paths = "mention", [], paths or []
        self.index = min(index, max(0, len(self.paths) - 1))
        self.display = paths is None or bool(paths)
        if paths is None:
            self.update(Text(LOADING, style="dim italic"))
            return
        out = Text()
        for i, path in enumerate(self.paths):
            if i:
                out.append("\n")
            out.append(f"@{path}", style="reverse bold" if i == self.index else "")
        if self.paths:
            out.append("\n")
            out.append("tab / enter: insert   ↑ ↓: choose   esc: close", style="dim")
        self.update(out)

    def hide(self) -> None:
        if self.display or self.matches or self.paths:  # hidden already: no update, which would lay
            self.show([])  # the whole screen out again (each keystroke hides it)

    def move(self, step: int) -> None:
        if self.kind == "mention":
            if self.paths:
                self.show_paths(self.paths, (self.index + step) % len(self.paths))
        elif self.matches:
            self.show(self.matches, (self.index + step) % len(self.matches))

    @property
    def current(self) -> Command | None:
        return self.matches[self.index] if self.kind == "command" and self.matches else None

    @property
    def current_path(self) -> str | None:
        return self.paths[self.index] if self.kind == "mention" and self.paths else None


@dataclass(frozen=True)
class _Mention:
    row: int
    start: int  # the @
    end: int  # the end of the token (the cursor, or past the rest of the word)
    prefix: str  # what follows the @ up to the cursor
    typed: str  # the whole token as it stands


class PromptInput(TextArea):
    DEFAULT_CSS = look.rules("PromptInput", look.INPUT) + look.rules("PromptInput:focus", look.INPUT_FOCUS)

    BINDINGS = [
        Binding("enter", "send", "Send / steer", priority=True, id="send"),
        Binding(
            "alt+enter,ctrl+j", "follow_up", "Follow-up", priority=True, id="follow_up", key_display="alt+⏎"
        ),
        Binding("shift+enter,ctrl+n", "newline", "Newline", show=False, priority=True, id="newline"),
        Binding(
            "alt+up",
            "pop_queue",
            "Edit queued",
            show=False,
            priority=True,
            id="pop_queue",
            key_display="alt+↑",
        ),
    ]

    class Send(Message):
        """``lane``: ``"prompt"`` (a prompt when idle, steering while running) or ``"follow_up"``."""

        def __init__(self, text: str, lane: str) -> None:
            super().__init__()
            self.text = text
            self.lane = lane

    class PopQueue(Message):
        pass

    def __init__(
        self,
        completions: CompletionList,
        *,
        complete: Callable[[str], list[Command]] | None = None,
        mentions: Callable[[str], list[str] | None] | None = None,
        input_history: History | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__("", id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.completions = completions
        self.complete = complete or (lambda _text: [])
        self.mentions = mentions
        self.input_history = input_history  # (``history`` is the editor's undo history)
        self._browse: list[str] | None = None  # the history entries being walked with Up / Down
        self._pos = 0
        self._draft = ""  # what was typed before Up
        self._recalled: str | None = None  # the text a history step put in (no completion for it)
        self._mention: _Mention | None = None
        self._listed_for: str | None = None  # the text the completion list was last made for

    # ---- actions -------------------------------------------------------------------------
    def _take(self) -> str:
        text = self.text
        self.clear()
        self._browse = None
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
        self._catch_up_completion()
        if self.completions.display and self.completions.kind == "mention":
            path = self.completions.current_path
            if path is not None and self._mention is not None and self._mention.typed != mention_token(path):
                self.accept_mention(path)
                return
        cmd = self.completions.current if self.completions.display else None
        if cmd is not None and self.text.strip() != f"/{cmd.name}":
            if needs_words(cmd):  # Enter fills it in to type the argument; the others run
                self.fill(f"/{cmd.name} ")
                return
            self.fill(f"/{cmd.name}")
        if self.text.endswith("\\"):
            self.fill(self.text[:-1] + "\n")
            return
        if not self.text.strip():
            return
        self.completions.hide()
        self.post_message(self.Send(self._take(), "prompt"))

    def _follow_up(self) -> None:
        if self.text.strip():
            self.completions.hide()
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

    # ---- history -------------------------------------------------------------------------
    def history_step(self, step: int) -> bool:
        """Up (-1) or Down (+1) through the input history; False when there is nowhere to go (Down
        while not walking it, Up with no history)."""
        if self._browse is None:
            if step > 0 or self.input_history is None:
                return False
            entries = self.input_history.entries()
            if not entries:
                return False
            self._browse, self._pos, self._draft = entries, len(entries), self.text
        pos = self._pos + step
        if pos < 0:
            return True  # the oldest entry: stay
        self._pos = pos
        if pos >= len(self._browse):
            self._browse = None
            self.recall(self._draft)
        else:
            self.recall(self._browse[pos])
        return True

    def recall(self, text: str) -> None:
        """Put ``text`` in the input (from the history: no completion list for it)."""
        self._recalled = text
        self.completions.hide()
        self.fill(text)

    # ---- completion ----------------------------------------------------------------------
    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        text = self.text
        if self._recalled is not None and text == self._recalled:
            self._recalled = None
            return
        self._recalled = None
        self._browse = None  # typing ends the walk through the history
        self.refresh_completion()

    def refresh_completion(self, keep_choice: bool = False) -> None:
        """Offer commands after ``/``, files after ``@`` (or nothing); ``keep_choice``: see
        ``CompletionList.show_paths``."""
        text = self.text
        self._listed_for = text
        self._mention = None
        matches = self.complete(text)
        if len(matches) == 1 and text == f"/{matches[0].name}":
            matches = matches if matches[0].args else []
        if matches:
            self.completions.show(matches)
            return
        mention = self._mention_at_cursor() if self.mentions is not None and "@" in text else None
        if mention is None or self.mentions is None:
            self.completions.hide()
            return
        self._mention = mention
        self.completions.show_paths(self.mentions(mention.prefix), keep_choice=keep_choice)

    def _catch_up_completion(self) -> None:
        """Make the completion list the one for the text now in the editor: keys typed in one burst
        with Enter (or Tab) reach this widget before the ``Changed`` messages their edits post, so the
        list on screen may still be the one for an earlier text (``/`` alone, offering every command).
        A list already made for this text is kept, with the choice moved to in it."""
        if self.completions.display and self.text != self._listed_for:
            self.refresh_completion(keep_choice=True)

    def _mention_at_cursor(self) -> _Mention | None:
        row, col = self.cursor_location
        line = self.document.get_line(row)
        m = _MENTION.search(line[:col])
        if m is None:
            return None
        quoted = m.group(1) is not None
        prefix = m.group(1) if quoted else m.group(2)
        end = col
        if quoted:
            close = line.find('"', col)
            end = close + 1 if close >= 0 else len(line)
        else:
            while end < len(line) and not line[end].isspace():
                end += 1
        return _Mention(row, m.start(), end, prefix, line[m.start() : end])

    def accept_mention(self, path: str) -> None:
        """Replace the ``@`` being typed with ``path``'s mention (a directory stays open for more)."""
        mention = self._mention
        if mention is None:
            return
        token = mention_token(path) + ("" if path.endswith("/") else " ")
        self.replace(
            token, (mention.row, mention.start), (mention.row, mention.end), maintain_selection_offset=False
        )
        if not path.endswith("/"):
            self.completions.hide()

    def on_key(self, event: events.Key) -> None:
        if event.key in ("tab", "up", "down"):
            self._catch_up_completion()
        comp = self.completions
        if comp.display and event.key in ("tab", "up", "down"):
            event.stop()
            event.prevent_default()
            if event.key != "tab":
                comp.move(1 if event.key == "down" else -1)
            elif comp.kind == "mention":
                path = comp.current_path
                if path is not None:
                    self.accept_mention(path)
            else:
                cmd = comp.current
                if cmd is not None:
                    self.fill(f"/{cmd.name} " if cmd.args else f"/{cmd.name}")
            return
        if event.key in ("up", "down") and self.selection.is_empty:
            nav = self.navigator
            edge = (
                nav.is_first_wrapped_line(self.cursor_location)
                if event.key == "up"
                else nav.is_last_wrapped_line(self.cursor_location)
            )
            if edge and self.history_step(-1 if event.key == "up" else 1):
                event.stop()
                event.prevent_default()
                return
        # Every other key is the editor's (Textual runs ``TextArea``'s own key handler next, as it
        # calls each class's handler unless one prevents the default): a letter typed here is text,
        # never an approval's answer, however long one has waited (answering is Ctrl+G, then y / a / n).
