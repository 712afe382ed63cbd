"""The Textual TUI, holding no agent logic: what the user types becomes a call into the command
layer (``owltui.session.commands``), whose reply it shows; the presenter draws the events.

This module owns ``OwlApp`` once it has its runtime: its state (the host, the command layer, the
presenter, the lifecycle, the notices) and its Textual hooks. ``OwlApp(host, AppOptions(...))``
takes any ``Host`` (tests inject a ``LocalRuntime``); ``OwlApp(Boot(start), ...)`` is in its boot
phase (``boot``: the first frame, the start-up thread, the failure path) until it takes the runtime
and swaps the main screen in. So it imports Textual and light modules only: the command layer and the
agent come in with the runtime. The work is in helpers: ``main_actions`` (the main screen's keys and
messages), ``lifecycle``, ``transcript``, ``input_routing``, ``actions``, ``themes.choice``,
``textual_compat`` (Alt+Enter, styles caches), ``crash`` (what nothing caught), ``launch`` (``run_tui``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from owltui.ui.app_options import AppOptions
from owltui.ui.boot import Boot, RuntimeBuilt, Typed
from owltui.ui.main_actions import MainScreenActions
from owltui.ui.textual_compat import alt_enter_distinct, install_workarounds
from owltui.ui.themes.choice import save_choices, use_themes
from owltui.ui.themes.loader import load_themes

if TYPE_CHECKING:  # imported when the runtime is taken, after the first frame
    from owltui.agent.agent import Agent
    from owltui.session.commands.host import Host, PromptHistory
    from owltui.session.commands.layer import Commands
    from owltui.session.commands.spec import Reply
    from owltui.session.runtime.options import Options
    from owltui.ui.control.lifecycle import Lifecycle
    from owltui.ui.control.presenter import Presenter
    from owltui.ui.crash import Crash
    from owltui.ui.widgets.conversation import ConversationView
    from owltui.ui.widgets.main_screen import MainScreen
    from owltui.ui.widgets.prompt_input import PromptInput
    from owltui.ui.widgets.status_bar import StatusBar

__all__ = ["OwlApp", "run_tui"]

MAIN_MODE = "main"  # the main screen's mode, when the app started on the first frame (see ``_hand_over``)

install_workarounds()


class OwlApp(MainScreenActions, App[int]):
    TITLE = "OwlTUI"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        # declared here (Textual adds one without an id otherwise) so that [keys] can move it
        Binding(
            "ctrl+p",
            "command_palette",
            "palette",
            show=False,
            priority=True,
            id="palette",
            tooltip="Open the command palette",
        ),
    ]

    runtime: Host
    agent: Agent
    commands: Commands
    life: Lifecycle
    crash: Crash | None = None  # an exception nothing caught (``launch`` reports it)

    def __init__(self, host: Host | Boot, options: AppOptions | None = None) -> None:
        super().__init__()
        self.options = options = options or AppOptions()
        self.boot: Boot | None = None  # the boot phase, until the runtime is the app's
        self.save_theme = options.save_theme
        self.clock = options.clock  # the status bar's run timer (tests freeze it)
        self.alt_enter = alt_enter_distinct() if options.alt_enter is None else options.alt_enter
        self.notices = list(options.notices)  # start-up warnings, shown once the main screen is up
        self.last_ctrl_c = 0.0
        self.presenter: Presenter | None = None
        self.ready = False  # the runtime is started (prompts can run)
        self.quitting = False
        self._follow_up_keys = ["alt+enter", "ctrl+j"]  # (``[keys]`` may move them)
        self._thread = threading.get_ident()  # the app's own thread (``on_mount`` says for sure)
        wanted, dirs = options.theme, options.theme_dirs
        if isinstance(host, Boot):  # a user's own theme is validated before the first frame
            self.boot = host
            self.theme_warnings = use_themes(self, host.first_themes(wanted, dirs), wanted)
        else:
            self.theme_warnings = use_themes(self, load_themes(dirs), wanted)
            self._take(host, options.keymap)

    def _take(self, runtime: Host, keymap: Mapping[str, str], typed: Typed | None = None) -> None:
        """Take the runtime: its command layer, the reviewer of its approvals, the [keys]."""
        from owltui.session.approvals import attach_reviewer
        from owltui.session.commands.layer import Commands
        from owltui.ui.control.lifecycle import Lifecycle, app_keys
        from owltui.ui.front import TuiFront

        self.runtime, self.agent = runtime, runtime.agent
        attach_reviewer(runtime)  # approvals carry the policy's notes and the rules "always" saves
        self.commands = Commands.with_custom(runtime, TuiFront(self, self.action_quit), self.notices.append)
        keys = app_keys(keymap, self.notices)
        self._follow_up_keys = keys.follow_up
        self.COMMAND_PALETTE_BINDING = keys.palette[0]  # type: ignore[misc]  # the footer finds the palette by it
        self.life = Lifecycle(self, self.options, keymap=keys.keymap, typed=typed.sent if typed else [])
        self.boot = None

    # ---- the first frame, then the main screen ---------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        if self.boot is not None:  # the first frame is composed on Textual's own default screen
            return super().get_default_screen()
        from owltui.ui.widgets.main_screen import MainScreen

        return MainScreen(self)

    def compose(self) -> ComposeResult:
        if self.boot is not None:
            yield self.boot.view()

    def on_mount(self) -> None:
        self._thread = threading.get_ident()
        if self.boot is not None:  # the first frame first, then the runtime (in a thread)
            self.call_after_refresh(self._begin_start)

    def _begin_start(self) -> None:
        if self.boot is not None and not self.quitting:
            self.boot.begin(lambda: self.post_message(RuntimeBuilt()))  # (False once the app is gone)

    async def on_runtime_built(self, _msg: RuntimeBuilt) -> None:
        boot = self.boot
        if boot is None or self.quitting:
            return
        if boot.started is None:  # the start failed: launch prints why, and what was typed
            self.quitting = True
            boot.keep_unsent()
            self.exit(1)
            return
        await self._hand_over(boot)

    async def _hand_over(self, boot: Boot) -> None:
        """Swap the main screen in for the first frame, with what was typed meanwhile."""
        from owltui.ui.widgets.main_screen import MainScreen

        started, typed = boot.take()
        if started.save_theme is not None:
            self.save_theme = started.save_theme
        themes = boot.themes_now(started)
        if themes is not None:
            self.theme_warnings += use_themes(self, themes, started.theme)
        self._take(started.runtime, started.keymap, typed)
        main = MainScreen(self)
        # the first frame is on the default mode's base screen, which Textual cannot switch away
        # from: the main screen gets a mode of its own, and the first frame is removed
        self.add_mode(MAIN_MODE, lambda: main)
        await self.switch_mode(MAIN_MODE)
        await boot.view().remove()
        if typed.text:
            self.input.load_text(typed.text)
            self.input.move_cursor(typed.cursor)

    @property
    def main(self) -> MainScreen:
        from owltui.ui.widgets.main_screen import MainScreen

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
    def input_history(self) -> PromptHistory:
        return self.runtime.input_history

    def mention_source(self) -> Callable[[str], list[str] | None]:
        """``@`` completion over the host's workspace files (listed and ranked in workers)."""
        from owltui.ui.widgets.mention_source import MentionSource

        def start(load: Callable[[], Awaitable[None]]) -> None:
            self.run_worker(load(), group="mentions", exit_on_error=False)

        def ready() -> None:
            if self.is_running and not self.quitting:
                self.input.refresh_completion(keep_choice=True)

        return MentionSource(self.runtime.mentions, start, ready)

    def get_key_display(self, binding: Binding) -> str:
        """The footer's follow-up key: Alt+Enter where the terminal tells it apart, else Ctrl+J."""
        if binding.id == "follow_up":
            keys = self._follow_up_keys
            if "alt+enter" in keys and (self.alt_enter or len(keys) == 1):
                return "alt+⏎"
            other = [k for k in keys if k != "alt+enter"] or keys
            return super().get_key_display(replace(binding, key=other[0], key_display=None))
        return super().get_key_display(binding)

    def paused_elapsed(self) -> float:
        if self.options.elapsed is not None:
            return self.options.elapsed()
        at = self.runtime.gate.paused_at
        return time.monotonic() - at if at is not None else 0.0

    async def setup(self) -> None:
        """Called once the main screen is composed: subscribe, then start the runtime."""
        if self.save_theme is not None:
            save_choices(self, self.save_theme)
        await self.life.setup()

    async def shutdown(self) -> None:
        """Abort the run, close the runtime (kills jobs, closes the session). Before the runtime
        is taken there is nothing to close here (``launch`` closes what the thread built)."""
        self.quitting = True
        if self.boot is None:
            await self.life.shutdown()

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    def _handle_exception(self, error: Exception) -> None:  # Textual's hook: nothing caught ``error``
        from owltui.ui.crash import keep

        super()._handle_exception(error)  # (the exit starts)
        self.crash = self.crash or keep(self, error)

    # ---- commands: what was typed becomes a call, the reply is shown -------------------------
    async def run_line(self, text: str) -> None:
        """A ``/command`` line (typed, from the palette or a key)."""
        reply = self.commands.slash(text)
        if reply is not None:
            await self.show(reply)

    async def show(self, reply: Reply) -> None:
        from owltui.ui.control import transcript

        await transcript.show(self, reply)

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
        if self.presenter is None or not self.is_running or self.quitting:
            self.notices.append(text)  # shown at start, or printed once the app is gone
        elif threading.get_ident() != self._thread:
            self.call_from_thread(self.warn, text)
        else:
            self.call_later(self.presenter.notice, text, "warning")

    # ---- what is offered: the footer's keys, the palette ---------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.boot is not None:  # the first frame: typing and quitting only
            return action not in ("command_palette", "focus_approval")
        if action == "focus_approval":
            return self.something_to_answer()  # shown in the footer only while one waits
        return True

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: Textual's commands, then every slash command."""
        from owltui.ui.control import actions

        yield from super().get_system_commands(screen)
        yield from actions.palette_commands(self)


def run_tui(options: Options, prompt: str | None = None) -> int:
    """The interactive TUI (CLI entry). Returns the exit code (see ``launch``)."""
    from owltui.ui.launch import launch

    return launch(OwlApp, options, prompt)
