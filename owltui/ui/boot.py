"""The boot phase: OwlTUI's first frame, drawn before the agent's modules are imported and the
runtime is built (the first frame must not wait for them, nor for MCP servers), until the app takes
the runtime. ``BootView`` has the main layout's look (``look``): the welcome line, the input, the
status line and the footer; the app composes it on Textual's default screen.

``Boot`` is one app's boot phase: the start function, run in a thread once the first frame is drawn
(``RuntimeBuilt`` tells the app it is done), what it built (``Started``, which ``launch`` makes) or
why it failed, and the hand-off of what was typed. Nothing typed is lost: keys typed before OwlTUI
started (the terminal holds them) and while it starts land in the editor; its text moves into the
real input with its cursor, and lines sent meanwhile (Enter: a prompt; Alt+Enter or Ctrl+J: a
follow-up) are sent in order once the runtime is ready, exactly as if they had been typed then. When
the start fails, the app ends and what was typed is kept for ``launch`` to print (``unsent``).
Ctrl+C clears the editor or quits, Ctrl+D on an empty editor quits.

Imports: Textual and the standard library only (``tests/ui/test_boot.py`` checks it): this module is
on the way to the first frame.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Static, TextArea

from owltui.ui import look
from owltui.ui.themes.choice import DEFAULT_THEME
from owltui.ui.themes.loader import ThemeLoad, load_themes, package_themes

if TYPE_CHECKING:
    from owltui.session.commands.host import Host

STARTING = "starting…"


@dataclass
class Started:
    """What the start-up thread built for the app: the runtime (a ``Host``), the ``[keys]`` map, the
    configured theme with every theme file validated, how to save a theme choice, and how to close
    the runtime if the app quits before taking it."""

    runtime: Host
    keymap: dict[str, str] = field(default_factory=dict)
    theme: str | None = None
    themes: ThemeLoad | None = None
    save_theme: Callable[[str], None] | None = None
    close: Callable[[], None] = lambda: None


def home_relative(path: Path) -> str:
    """``~/…`` for a path under the home directory."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def boot_welcome(workspace: Path) -> str:
    return f"OwlTUI · {STARTING} · {home_relative(workspace)} · /help for commands and keys"


class BootInput(TextArea):
    """The editor of the first frame: typing works at once; what is sent is kept for later."""

    DEFAULT_CSS = look.rules("BootInput", look.INPUT) + look.rules("BootInput:focus", look.INPUT_FOCUS)
    BINDINGS = [
        Binding("enter", "send", "Send", priority=True),
        Binding("alt+enter,ctrl+j", "follow_up", "Follow-up", priority=True, key_display="alt+⏎"),
        Binding("shift+enter,ctrl+n", "newline", "Newline", show=False, priority=True),
    ]

    class Sent(Message):
        def __init__(self, text: str, lane: str) -> None:
            super().__init__()
            self.text = text
            self.lane = lane

    def __init__(self) -> None:
        super().__init__("", id="input", soft_wrap=True, show_line_numbers=False, tab_behavior="focus")

    # queued behind the keys typed just before (as ``PromptInput`` does: the bindings have priority)
    def action_send(self) -> None:
        self.call_later(self._send, "prompt")

    def action_follow_up(self) -> None:
        self.call_later(self._send, "follow_up")

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def _send(self, lane: str) -> None:
        text = self.text
        if lane == "prompt" and text.endswith("\\"):  # a trailing backslash: a newline, as in the input
            self.load_text(text[:-1] + "\n")
            self.move_cursor(self.document.end)
            return
        if not text.strip():
            return
        self.clear()
        self.post_message(self.Sent(text, lane))


class BootView(Vertical):
    """The first frame, composed by the app itself (a widget on Textual's default screen, not a screen
    of its own: keys typed before a custom screen is mounted are dropped, on the default screen they
    reach the editor). ``handover`` gives what was typed; the app then swaps in the main screen."""

    DEFAULT_CSS = (
        look.rules("BootView", "height: 1fr;")
        + look.rules("BootView #boot-conversation", look.CONVERSATION)
        + look.rules("BootView .welcome", look.WELCOME)
        + look.rules("BootView .sent", "padding: 0 1; color: $text-muted;")
        + look.rules("BootView #boot-status", look.STATUS)
    )
    BINDINGS = [
        Binding("ctrl+c", "clear_or_quit", "Quit", show=False, priority=True),
        Binding("ctrl+d", "quit_if_empty", "Quit", show=False, priority=True),
    ]

    def __init__(self, welcome: str) -> None:
        super().__init__(id="boot")
        self.welcome = welcome
        self.sent: list[tuple[str, str]] = []
        self.editor = BootInput()
        self.conversation = VerticalScroll(
            Static(Text(welcome), classes="welcome"), id="boot-conversation", can_focus=False
        )
        self.status = Static(STARTING, id="boot-status")

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.editor
        yield self.status
        yield Footer()

    async def on_boot_input_sent(self, msg: BootInput.Sent) -> None:
        msg.stop()
        self.sent.append((msg.text, msg.lane))
        what = "follow-up" if msg.lane == "follow_up" else "sent"
        await self.conversation.mount(Static(Text(f"› {msg.text}  ({what} once ready)"), classes="sent"))

    def handover(self) -> tuple[str, tuple[int, int], list[tuple[str, str]]]:
        """What was typed: the editor's text, its cursor, and the lines sent (text, lane), in order."""
        sent, self.sent = self.sent, []
        return self.editor.text, self.editor.cursor_location, sent

    async def action_clear_or_quit(self) -> None:
        if self.editor.text:
            self.editor.clear()
        else:
            await self.app.action_quit()

    async def action_quit_if_empty(self) -> None:
        if not self.editor.text:
            await self.app.action_quit()


class RuntimeBuilt(Message):
    """The start-up thread is done: ``Boot.started`` holds what it built, or ``Boot.error`` why not."""


@dataclass
class Typed:
    """What was typed on the first frame: the editor's text and cursor, and the lines sent (text,
    lane), in order."""

    text: str
    cursor: tuple[int, int]
    sent: list[tuple[str, str]]


class Boot:
    """The boot phase of one app, from its first frame until it takes the runtime (or ends).

    ``begin`` runs ``start`` in a thread; its result is ``started``, or ``error`` when it raised.
    ``take`` hands what was typed to the app, which takes the runtime (``taken``); ``keep_unsent``
    is the failure path. ``launch`` reads it once the app has exited: it closes a runtime never
    taken, prints ``error`` and then ``unsent``."""

    def __init__(self, start: Callable[[], Started], workspace: Path | None = None) -> None:
        self._start = start
        self.workspace = workspace or Path.cwd()
        self.thread: threading.Thread | None = None
        self.started: Started | None = None
        self.error: BaseException | None = None
        self.taken = False
        self.unsent: list[str] = []  # typed when the start failed: launch prints it
        self._shipped_only = False
        self._view: BootView | None = None

    def first_themes(self, wanted: str | None, theme_dirs: Sequence[Path] | None) -> ThemeLoad:
        """The first frame's themes: the shipped ones when ``wanted`` is one of them (the user's
        files are validated in the thread, see ``themes_now``), else every theme file, validated now."""
        shipped = package_themes()
        self._shipped_only = (wanted or DEFAULT_THEME) in shipped
        return ThemeLoad(themes=shipped) if self._shipped_only else load_themes(theme_dirs)

    def themes_now(self, started: Started) -> ThemeLoad | None:
        """The themes to add once the runtime is built (None: the first frame's stay): every theme
        file, validated in the thread, when the first frame had only the shipped ones."""
        if self._shipped_only:
            return started.themes or ThemeLoad()
        return ThemeLoad() if started.theme else None

    def view(self) -> BootView:
        """The first frame's widget (made once, when the app composes)."""
        if self._view is None:
            self._view = BootView(boot_welcome(self.workspace))
        return self._view

    def begin(self, done: Callable[[], object]) -> None:
        """Build the runtime in a thread; ``done`` is called from it at the end, whatever happened."""
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, args=(done,), name="owltui-start", daemon=True)
            self.thread.start()

    def _run(self, done: Callable[[], object]) -> None:
        try:
            self.started = self._start()
        except Exception as exc:  # reported by launch once the screen is back: one line
            self.error = exc
        finally:
            done()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the start-up thread (``launch``, after the app has exited)."""
        if self.thread is not None:
            self.thread.join(timeout)

    def take(self) -> tuple[Started, Typed]:
        """The hand-off: what the thread built and what was typed; the runtime is the app's now."""
        assert self.started is not None
        self.taken = True
        text, cursor, sent = self.view().handover()
        return self.started, Typed(text, cursor, sent)

    def keep_unsent(self) -> None:
        """The start failed: the lines sent, then the editor's text, are kept (``unsent``)."""
        text, _cursor, sent = self.view().handover()
        self.unsent = [line for line, _lane in sent] + ([text] if text.strip() else [])
