"""The Textual TUI. It holds no agent logic: what the user types becomes a call into the command
layer (``owltui.session.commands``), whose reply it shows, and the presenter draws the events.

``run_tui(options, prompt)`` is the CLI entry; ``OwlApp(runtime)`` takes any ``Host`` (tests inject
a ``LocalRuntime`` around a scripted model). ``OwlApp(start=…)`` draws its first frame first
(``boot.BootView``) and builds the runtime in a thread meanwhile (``start`` returns a ``Started``);
then ``attach`` swaps in the main screen, keeping what was typed. So this module imports Textual and
the light ``boot``/``themes`` only: the command layer, the presenter and the agent's modules come in
with the runtime, never on the way to the first frame (issue 16).

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
``actions`` (keys, the palette), ``alt_enter``, ``boot`` (the first frame) and ``launch``
(``run_tui``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.theme import Theme

from owltui.ui.boot import BootView, Started, boot_welcome
from owltui.ui.textual_compat import alt_enter_distinct, install_alt_enter
from owltui.ui.themes.loader import ThemeLoad, load_themes, package_themes

if TYPE_CHECKING:  # imported when the runtime is attached (``attach``), after the first frame
    from owltui.session.commands.host import Host
    from owltui.session.commands.layer import Commands
    from owltui.session.commands.spec import Reply
    from owltui.session.runtime.options import Options
    from owltui.ui.control.lifecycle import FlushEvents, Lifecycle
    from owltui.ui.control.presenter import Presenter
    from owltui.ui.widgets.conversation import ConversationView
    from owltui.ui.widgets.main_screen import MainScreen
    from owltui.ui.widgets.prompt_input import MentionSource, PromptInput
    from owltui.ui.widgets.status_bar import StatusBar
    from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock

__all__ = ["DEFAULT_THEME", "OwlApp", "run_tui"]

DEFAULT_THEME = "owl-dark"
MAIN_MODE = "main"  # (when the app started on the first frame: see ``attach``)

install_alt_enter()


class RuntimeBuilt(Message):
    """The start-up thread finished (``OwlApp.started`` holds what it built, or ``start_error``)."""


class OwlApp(App[int]):
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
    agent: Any  # the host's Agent
    commands: Commands
    life: Lifecycle

    def __init__(
        self,
        runtime: Host | None = None,
        *,
        start: Callable[[], Started] | None = None,
        workspace: Path | None = None,
        prompt: str | None = None,
        theme: str | None = None,
        save_theme: Callable[[str], None] | None = None,
        keymap: dict[str, str] | None = None,
        elapsed: Callable[[], float] | None = None,
        theme_dirs: Iterable[Path] | None = None,
        max_blocks: int | None = None,
        cursor_blink: bool = True,
        notices: Iterable[str] = (),
        clock: Callable[[], float] | None = None,
        alt_enter: bool | None = None,
    ) -> None:
        super().__init__()
        if (runtime is None) == (start is None):
            raise TypeError("OwlApp needs a runtime or a start function (one of them)")
        self.initial_prompt = prompt
        self.save_theme = save_theme
        self.clock = clock or time.monotonic  # the status bar's run timer (tests freeze it)
        self.alt_enter = alt_enter_distinct() if alt_enter is None else alt_enter
        self.notices = list(notices)  # start-up warnings (the sandbox's notes...), shown once mounted
        self._elapsed = elapsed
        self._max_blocks = max_blocks
        self._cursor_blink = cursor_blink
        self._follow_up_keys = ["alt+enter", "ctrl+j"]  # (``attach`` reads [keys])
        self.last_ctrl_c = 0.0
        self.presenter: Presenter | None = None
        self.ready = False  # the runtime is started (prompts can run)
        self.attached = False  # the runtime is the app's (its commands, the main screen)
        self.quitting = False
        self.theme_warnings: list[str] = []
        self._start = start
        self._workspace = workspace or Path.cwd()
        self._start_thread: threading.Thread | None = None
        self.started: Started | None = None
        self.start_error: BaseException | None = None
        self._boot_sent: list[tuple[str, str]] = []
        self.unsent: list[str] = []  # typed on the first frame when the start failed (launch prints it)
        self._shipped_only = False  # the first frame had only the shipped themes (not yet validated)
        if runtime is not None:
            self._use_themes(load_themes(theme_dirs), theme)
            self._bind(runtime, keymap)
        else:  # the first frame with the shipped themes; a user's own theme is validated first
            shipped = package_themes()
            self._shipped_only = (theme or DEFAULT_THEME) in shipped
            self._use_themes(
                ThemeLoad(themes=shipped) if self._shipped_only else load_themes(theme_dirs), theme
            )

    def _use_themes(self, loaded: ThemeLoad, theme: str | None) -> None:
        self.theme_warnings += loaded.warnings
        for t in loaded.themes.values():
            self.register_theme(t)
        wanted = theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            self.theme_warnings.append(f"unknown theme '{wanted}', using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        if wanted != self.theme:
            self.theme = wanted

    def _bind(self, runtime: Host, keymap: dict[str, str] | None) -> None:
        """Take the runtime: its command layer, the reviewer of its approvals, the [keys]."""
        from owltui.session.approvals import attach_reviewer
        from owltui.session.commands.keys import KeysError, check_keys, default_keys, split_keys
        from owltui.session.commands.layer import Commands
        from owltui.ui.control.lifecycle import Lifecycle
        from owltui.ui.front import TuiFront

        self.runtime = runtime
        attach_reviewer(runtime)  # approvals carry the policy's notes and the rules "always" saves
        self.agent = runtime.agent
        self.commands = Commands(runtime, TuiFront(self, self.action_quit))
        try:
            keys = check_keys(keymap or {})
        except KeysError as exc:  # the config checks [keys] first; this is for a keymap passed in
            self.notices.append(f"{exc}; the default keys apply")
            keys = {}
        self._follow_up_keys = split_keys(keys.get("follow_up", "")) or default_keys("follow_up")
        palette = split_keys(keys.get("palette", "")) or default_keys("palette")
        self.COMMAND_PALETTE_BINDING = palette[0]  # type: ignore[misc]  # the footer finds the palette by it
        self.life = Lifecycle(self, keymap=keys, max_blocks=self._max_blocks, cursor_blink=self._cursor_blink)
        self.attached = True

    # ---- layout and start-up -------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        if not self.attached:  # the first frame is composed on Textual's own default screen
            return super().get_default_screen()
        from owltui.ui.widgets.main_screen import MainScreen

        return MainScreen(self)

    def compose(self) -> ComposeResult:
        if not self.attached:
            yield BootView(boot_welcome(self._workspace))

    def on_mount(self) -> None:
        if not self.attached:  # the first frame first, then the runtime (in a thread)
            self.call_after_refresh(self._begin_start)

    def _begin_start(self) -> None:
        if self._start_thread is None and not self.quitting:
            self._start_thread = threading.Thread(target=self._run_start, name="owltui-start", daemon=True)
            self._start_thread.start()

    def _run_start(self) -> None:
        """The start-up thread: import the rest of the UI, build the runtime, tell the app."""
        assert self._start is not None
        try:
            from owltui.ui.control import actions, input_routing, lifecycle, queue_keys  # noqa: F401
            from owltui.ui.widgets import main_screen  # noqa: F401

            self.started = self._start()
        except Exception as exc:  # reported by launch once the screen is back: one line
            self.start_error = exc
        finally:
            self.post_message(RuntimeBuilt())  # thread-safe; False once the app is gone

    def join_start(self, timeout: float | None = None) -> None:
        """Wait for the start-up thread (``launch``, after the app has exited)."""
        if self._start_thread is not None:
            self._start_thread.join(timeout)

    async def on_runtime_built(self, _msg: RuntimeBuilt) -> None:
        await self.attach()

    async def attach(self) -> None:
        """Swap the main screen in for the first frame, with what was typed meanwhile."""
        started = self.started
        if started is None:  # the start failed: launch prints why, and what was typed
            if not self.quitting:
                self.quitting = True
                text, _cursor, sent = self.query_one(BootView).handover()
                self.unsent = [line for line, _lane in sent] + ([text] if text.strip() else [])
                self.exit(1)
            return
        if self.attached or self.quitting:
            return
        from owltui.ui.widgets.main_screen import MainScreen

        if started.save_theme is not None:
            self.save_theme = started.save_theme
        if self._shipped_only:  # every theme file, validated in the thread (a bad one: a warning)
            self._use_themes(started.themes or ThemeLoad(), started.theme)
        elif started.theme:
            self._use_themes(ThemeLoad(), started.theme)
        self._bind(started.runtime, started.keymap)
        boot = self.query_one(BootView)
        text, cursor, self._boot_sent = boot.handover()
        main = MainScreen(self)
        # the first frame is on the default mode's base screen, which Textual cannot switch away
        # from: the main screen gets a mode of its own, and the first frame is removed
        self.add_mode(MAIN_MODE, lambda: main)
        await self.switch_mode(MAIN_MODE)
        await boot.remove()
        if text:
            self.input.load_text(text)
            self.input.move_cursor(cursor)

    def take_boot_sent(self) -> list[tuple[str, str]]:
        """Lines sent on the first frame, before the runtime was ready: (text, lane), in order."""
        sent, self._boot_sent = self._boot_sent, []
        return sent

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
            if self.is_running and not self.quitting:
                self.input.refresh_completion()

        from owltui.ui.widgets.prompt_input import MentionSource

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
        """Abort the run, close the runtime (kills jobs, closes the session). Before the runtime
        is attached there is nothing to close here (``launch`` closes what the thread built)."""
        self.quitting = True
        if self.attached:
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
        from owltui.ui.control import transcript

        await transcript.show(self, reply)

    def welcome(self) -> str:
        from owltui.ui.control import transcript

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
        if self.presenter is None or not self.is_running or self.quitting:
            self.notices.append(text)  # shown at start, or printed once the app is gone
        elif threading.get_ident() != self._thread_id:
            self.call_from_thread(self.warn, text)
        else:
            self.call_later(self.presenter.notice, text, "warning")

    async def on_prompt_input_send(self, msg: PromptInput.Send) -> None:
        from owltui.ui.control import input_routing

        await input_routing.on_send(self, msg)

    def on_prompt_input_pop_queue(self, _msg: PromptInput.PopQueue) -> None:
        from owltui.ui.control import input_routing

        input_routing.pop_queue(self)

    # ---- approvals: answered only by a deliberate action ------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.attached:  # the first frame: typing and quitting only
            return action not in ("command_palette", "focus_approval")
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
        from owltui.ui.control import actions

        return actions.busy(self)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: Textual's commands, then every slash command."""
        from owltui.ui.control import actions

        yield from super().get_system_commands(screen)
        yield from actions.palette_commands(self)

    # ---- keys (see ``actions``; bound on the main screen, so never before ``attach``) -----------
    def action_focus_approval(self) -> None:
        from owltui.ui.control import actions

        actions.focus_approval(self)

    def action_abort(self) -> None:
        from owltui.ui.control import actions

        actions.abort(self)

    def action_toggle_pause(self) -> None:
        from owltui.ui.control import actions

        actions.toggle_pause(self)

    def action_pick_requirement(self) -> None:
        self.call_later(self.run_line, "/require")

    async def action_ctrl_c(self) -> None:
        from owltui.ui.control import actions

        await actions.ctrl_c(self)

    async def action_ctrl_d(self) -> None:
        from owltui.ui.control import actions

        await actions.ctrl_d(self)

    def action_history_search(self) -> None:
        from owltui.ui.control import actions

        actions.history_search(self)

    def action_focus_queue(self) -> None:
        from owltui.ui.control.queue_keys import focus_queue

        focus_queue(self)

    async def action_steer_now(self) -> None:
        from owltui.ui.control.queue_keys import steer_now

        await steer_now(self)

    def action_toggle_tool(self) -> None:
        from owltui.ui.control import actions

        actions.toggle_tool(self)

    def action_follow(self) -> None:
        self.conversation.follow()

    def action_scroll(self, direction: str) -> None:
        from owltui.ui.control import actions

        actions.scroll(self, direction)


def run_tui(options: Options, prompt: str | None = None) -> int:
    """The interactive TUI (CLI entry). Returns the exit code (see ``launch``)."""
    from owltui.ui.launch import launch

    return launch(OwlApp, options, prompt)
