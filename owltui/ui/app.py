"""The Textual TUI. It holds no agent logic: what the user types becomes a call into the command
layer (``owltui.session.commands``), whose reply it shows, and the presenter draws the events.

``run_tui(options, prompt)`` is the CLI entry; ``OwlApp(runtime)`` takes any ``Host`` (tests inject
a ``LocalRuntime`` around a scripted model).

The first screen has a welcome line (model, directory, session, /help); a continued or resumed
session (``-c``, ``--resume``, ``/sessions``) is drawn again from its history, folded. Keys are
declared in ``main_screen``, here and in ``prompt_input`` with the ids of
``owltui.session.commands.keys`` (config ``[keys]`` moves them). Alt+Enter: Textual turns on the
kitty keyboard protocol, where the terminal has it Alt+Enter is its own key; elsewhere a terminal
that sends Alt as Esc sends ESC CR, which Textual would read as a plain Enter -
``install_alt_enter`` (``alt_enter``) makes it Alt+Enter - and the footer names Ctrl+J, the key
every terminal can send.

This module owns ``OwlApp``'s state and its Textual hooks; the work is in its helpers:
``main_screen`` (layout, screen keys), ``lifecycle`` (start-up, shutdown, the event buffer),
``transcript`` (replies, the welcome line, redrawing a session), ``input_routing`` (what is sent),
``actions`` (keys, the palette), ``alt_enter`` and ``launch`` (``run_tui``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import Theme

from owltui.session.approvals import attach_reviewer
from owltui.session.commands import Commands, Host, Reply
from owltui.session.commands.keys import KeysError, check_keys, default_keys, split_keys

from . import actions, input_routing, transcript
from .alt_enter import alt_enter_distinct, install_alt_enter
from .conversation import ConversationView
from .front import TuiFront
from .launch import launch
from .lifecycle import FlushEvents, Lifecycle
from .main_screen import MainScreen
from .presenter import Presenter
from .prompt_input import MentionSource, PromptInput
from .queue_keys import focus_queue, steer_now
from .status_bar import StatusBar
from .themes import load_themes
from .tool_block import ApprovalPrompt, ToolBlock

if TYPE_CHECKING:
    from owltui.session.runtime import Options

__all__ = ["DEFAULT_THEME", "MainScreen", "OwlApp", "alt_enter_distinct", "run_tui"]

DEFAULT_THEME = "owl-dark"

install_alt_enter()


class OwlApp(App[int]):
    TITLE = "OwlTUI"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        # declared here (Textual adds one without an id otherwise) so that [keys] can move it
        Binding("ctrl+p", "command_palette", "palette", show=False, priority=True, id="palette",
                tooltip="Open the command palette"),
    ]

    def __init__(self, runtime: Host, *, prompt: str | None = None, theme: str | None = None,
                 save_theme: Callable[[str], None] | None = None, keymap: dict[str, str] | None = None,
                 elapsed: Callable[[], float] | None = None, theme_dirs: Iterable[Path] | None = None,
                 max_blocks: int | None = None, cursor_blink: bool = True,
                 notices: Iterable[str] = (), clock: Callable[[], float] | None = None,
                 alt_enter: bool | None = None) -> None:
        super().__init__()
        self.runtime = runtime
        attach_reviewer(runtime)  # approvals carry the policy's notes and the rules "always" saves
        self.agent = runtime.agent
        self.commands = Commands(runtime, TuiFront(self, self.action_quit))
        self.initial_prompt = prompt
        self.save_theme = save_theme
        self.clock = clock or time.monotonic  # the status bar's run timer (tests freeze it)
        self.alt_enter = alt_enter_distinct() if alt_enter is None else alt_enter
        self.notices = list(notices)  # start-up warnings (the sandbox's notes...), shown once mounted
        try:
            keys = check_keys(keymap or {})
        except KeysError as exc:  # the config checks [keys] first; this is for a keymap passed in
            self.notices.append(f"{exc}; the default keys apply")
            keys = {}
        self._follow_up_keys = split_keys(keys.get("follow_up", "")) or default_keys("follow_up")
        palette = split_keys(keys.get("palette", "")) or default_keys("palette")
        self.COMMAND_PALETTE_BINDING = palette[0]  # type: ignore[misc]  # the footer finds the palette by it
        self._elapsed = elapsed
        self.last_ctrl_c = 0.0
        self.life = Lifecycle(self, keymap=keys, max_blocks=max_blocks, cursor_blink=cursor_blink)
        self.presenter: Presenter | None = None
        self.ready = False
        loaded = load_themes(theme_dirs)
        self.theme_warnings = loaded.warnings
        for t in loaded.themes.values():
            self.register_theme(t)
        wanted = theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            self.theme_warnings.append(f"unknown theme '{wanted}', using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted

    # ---- layout and start-up -------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        return MainScreen(self)

    @property
    def main(self) -> MainScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    @property
    def conversation(self) -> ConversationView:
        return self.main.conversation

    @property
    def input(self) -> PromptInput:
        return self.main.input

    @property
    def status(self) -> StatusBar:
        return self.main.status

    @property
    def input_history(self) -> Any:
        """The host's input history (``InputHistory``), or None."""
        return getattr(self.runtime, "input_history", None)

    def mention_source(self) -> MentionSource | None:
        """``@`` completion over the host's workspace files (None: the host lists none)."""
        completer = getattr(self.runtime, "mentions", None)
        if completer is None:
            return None

        def start(load: Callable[[], Awaitable[None]]) -> None:
            self.run_worker(load(), group="mentions", exit_on_error=False)

        def ready() -> None:
            if self.is_running and not self.life.quitting:
                self.input.refresh_completion()

        return MentionSource(completer, start, ready)

    def get_key_display(self, binding: Binding) -> str:
        """The follow-up key the footer names: Alt+Enter where the terminal tells it apart, else
        the other key (Ctrl+J)."""
        if binding.id == "follow_up":
            keys = self._follow_up_keys
            if "alt+enter" in keys and (self.alt_enter or len(keys) == 1):
                return "alt+⏎"
            other = [k for k in keys if k != "alt+enter"] or keys
            return super().get_key_display(replace(binding, key=other[0], key_display=None))
        return super().get_key_display(binding)

    def paused_elapsed(self) -> float:
        if self._elapsed is not None:
            return self._elapsed()
        at = self.runtime.gate.paused_at
        return time.monotonic() - at if at is not None else 0.0

    async def setup(self) -> None:
        """Called once the main screen is composed: subscribe, then start the runtime."""
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        await self.life.setup()

    async def shutdown(self) -> None:
        """Abort the run, close the runtime (kills jobs, closes the session)."""
        await self.life.shutdown()

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    def _theme_changed(self, theme: Theme) -> None:
        if self.save_theme is not None:
            try:
                self.save_theme(theme.name)
            except Exception as exc:
                self.notify(f"could not save the theme: {exc}", severity="warning")

    async def on_flush_events(self, _msg: FlushEvents) -> None:
        await self.life.flush()

    # ---- commands: what was typed becomes a call, the reply is shown -------------------------
    async def run_line(self, text: str) -> None:
        """A ``/command`` line (typed, from the palette or a key)."""
        reply = self.commands.slash(text)
        if reply is not None:
            await self.show(reply)

    async def show(self, reply: Reply) -> None:
        await transcript.show(self, reply)

    def welcome(self) -> str:
        return transcript.welcome(self)

    @work(exclusive=True, group="command")
    async def finish(self, then: Awaitable[Reply]) -> None:
        """Show the reply a command finishes later (one at a time)."""
        await self.show(await then)

    def show_later(self, reply: Reply) -> None:
        self.call_later(self.show, reply)

    def unshown_notices(self) -> list[str]:
        """Warnings that arrived too early or too late to be shown (the caller prints them)."""
        lines, self.notices = self.notices, []
        return lines

    def warn(self, text: str) -> None:
        """A warning for the user (from any thread): a notice in the conversation."""
        if self.presenter is None or not self.is_running or self.life.quitting:
            self.notices.append(text)  # shown at start, or printed once the app is gone
        elif threading.get_ident() != self._thread_id:
            self.call_from_thread(self.warn, text)
        else:
            self.call_later(self.presenter.notice, text, "warning")

    async def on_prompt_input_send(self, msg: PromptInput.Send) -> None:
        await input_routing.on_send(self, msg)

    def _remember(self, text: str) -> None:  # (queue_keys' Ctrl+S keeps the line too)
        input_routing.remember(self, text)

    def on_prompt_input_pop_queue(self, _msg: PromptInput.PopQueue) -> None:
        input_routing.pop_queue(self)

    # ---- approvals: answered only by a deliberate action ------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_approval":
            return bool(self.runtime.approvals.pending())  # shown in the footer only while one waits
        return True

    def on_approval_prompt_decided(self, msg: ApprovalPrompt.Decided) -> None:
        self.input.focus()
        self.show_later(self.commands.call("approve", call_id=msg.call_id, decision=msg.decision))

    def on_tool_block_approval_closed(self, _msg: ToolBlock.ApprovalClosed) -> None:
        self.input.focus()

    def busy(self) -> bool:
        """A run, a `!command` or /init is going (what Esc and Ctrl+C stop)."""
        return actions.busy(self)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: Textual's commands, then every slash command."""
        yield from super().get_system_commands(screen)
        yield from actions.palette_commands(self)

    # ---- keys (see ``actions``) --------------------------------------------------------------
    def action_focus_approval(self) -> None:
        actions.focus_approval(self)

    def action_abort(self) -> None:
        actions.abort(self)

    def action_toggle_pause(self) -> None:
        actions.toggle_pause(self)

    def action_pick_requirement(self) -> None:
        self.call_later(self.run_line, "/require")

    async def action_ctrl_c(self) -> None:
        await actions.ctrl_c(self)

    async def action_ctrl_d(self) -> None:
        await actions.ctrl_d(self)

    def action_history_search(self) -> None:
        actions.history_search(self)

    def action_focus_queue(self) -> None:
        focus_queue(self)

    async def action_steer_now(self) -> None:
        await steer_now(self)

    def action_toggle_tool(self) -> None:
        actions.toggle_tool(self)

    def action_follow(self) -> None:
        self.conversation.follow()

    def action_scroll(self, direction: str) -> None:
        actions.scroll(self, direction)


def run_tui(options: Options, prompt: str | None = None) -> int:
    """The interactive TUI (CLI entry). Returns the exit code (see ``launch``)."""
    return launch(OwlApp, options, prompt)
