"""The Textual TUI. It holds no agent logic: what the user types becomes a call into the command
layer (``owltui.session.commands``), whose reply it shows, and the presenter draws the events.

``run_tui(options, prompt)`` is the CLI entry; ``OwlApp(runtime)`` takes any ``Host`` (tests inject
a ``LocalRuntime`` around a scripted model).

The first screen has a welcome line (model, directory, session, /help); a continued or resumed
session (``-c``, ``--resume``, ``/sessions``) is drawn again from its history, folded. Keys are
declared here and in ``prompt_input`` with the ids of ``owltui.session.commands.keys`` (config
``[keys]`` moves them). Alt+Enter: Textual turns on the kitty keyboard protocol, where the terminal
has it Alt+Enter is its own key; elsewhere a terminal that sends Alt as Esc sends ESC CR, which
Textual would read as a plain Enter - ``install_alt_enter`` makes it Alt+Enter - and the footer
names Ctrl+J, the key every terminal can send.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import Worker

from owltui.agent import events as ev
from owltui.session.approvals import attach_reviewer
from owltui.session.commands import Commands, Host, Reply, literal
from owltui.session.commands.background import background
from owltui.session.commands.keys import KeysError, check_keys, default_keys, split_keys
from owltui.session.describe import model_display
from owltui.session.shell import unescape

from .approval import choose, parse_answer
from .blocks import WelcomeBlock
from .conversation import ConversationView
from .front import TuiFront
from .history_search import HistorySearchScreen
from .interrupt import watch_interrupts
from .pause_banner import PauseBanner
from .picker import PickerScreen
from .plain import resume_line
from .presenter import Presenter
from .prompt_input import CompletionList, MentionSource, PromptInput, needs_words
from .queue_keys import focus_queue, steer_now
from .queue_panel import QueuePanel
from .rewind_picker import pick_rewind
from .status_bar import StatusBar
from .themes import load_themes
from .tool_block import ApprovalPrompt, ToolBlock

if TYPE_CHECKING:
    from owltui.session.runtime import Options

DEFAULT_THEME = "owl-dark"
QUIT_WINDOW = 2.0  # seconds between two Ctrl+C presses that quit
# terminals that speak the kitty keyboard protocol (Textual enables it): Alt+Enter is its own key
KITTY_TERMS = {"xterm-kitty", "xterm-ghostty", "foot", "foot-extra", "alacritty", "wezterm"}
KITTY_PROGRAMS = {"kitty", "WezTerm", "ghostty"}
KITTY_MARKERS = ("KITTY_WINDOW_ID", "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR")
MULTIPLEXERS = ("TMUX", "STY", "ZELLIJ")  # in between: they do not pass the protocol on


def alt_enter_distinct(env: Mapping[str, str] | None = None) -> bool:
    """Whether this terminal tells Alt+Enter apart for sure (the kitty keyboard protocol, no
    multiplexer in between); elsewhere the footer names Ctrl+J."""
    env = os.environ if env is None else env
    if env.get("TEXTUAL_DISABLE_KITTY_KEY") or any(env.get(m) for m in MULTIPLEXERS):
        return False
    return env.get("TERM", "") in KITTY_TERMS or env.get("TERM_PROGRAM", "") in KITTY_PROGRAMS or \
        any(env.get(m) for m in KITTY_MARKERS)


class _KeyName:
    """A key name where Textual's sequence table expects a ``Keys`` member (it reads ``.value``)."""

    def __init__(self, value: str) -> None:
        self.value = value


def install_alt_enter() -> None:
    """ESC CR (Alt+Enter from a terminal that sends Alt as Esc, tmux included) becomes
    ``alt+enter``: Textual's table maps ESC CR to nothing, so its parser drops the Esc and reports a
    plain Enter (a follow-up sent as steering)."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    table: dict[str, Any] = ANSI_SEQUENCES_KEYS  # type: ignore[assignment]
    table.setdefault("\x1b\r", (_KeyName("alt+enter"),))


install_alt_enter()


def _home(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


class FlushEvents(Message):
    """Agent events are buffered by the listener and drawn in one batch by this message."""


class MainScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.abort", "Abort", priority=True, id="abort"),
        Binding("ctrl+c", "app.ctrl_c", "Abort/clear/quit", priority=True, show=False, id="clear"),
        Binding("ctrl+d", "app.ctrl_d", "Quit", priority=True, show=False, id="eof"),
        Binding("f2", "app.toggle_pause", "Pause/resume", id="pause"),
        Binding("ctrl+t", "app.pick_requirement", "Require tool", id="require"),
        Binding("ctrl+g", "app.focus_approval", "Approval", priority=True, id="approve"),
        Binding("ctrl+end,f4", "app.follow", "Follow", show=False, id="follow"),
        Binding("pageup", "app.scroll('up')", "Scroll up", show=False, priority=True, id="scroll_up"),
        Binding("pagedown", "app.scroll('down')", "Scroll down", show=False, priority=True,
                id="scroll_down"),
        Binding("ctrl+r", "app.history_search", "History", show=False, id="history_search"),
        Binding("ctrl+o", "app.toggle_tool", "Expand/collapse", show=False, id="toggle_tool"),
        Binding("f3", "app.focus_queue", "Queue", show=False, id="queue"),  # issue 14: select queued messages
        Binding("ctrl+s", "app.steer_now", "Steer now", show=False, priority=True, id="steer_now"),
    ]

    def __init__(self, app: OwlApp) -> None:
        super().__init__()
        self.conversation = ConversationView(id="conversation")
        self.banner = PauseBanner(app.runtime.gate, app.paused_elapsed, id="banner")
        self.queue_panel = QueuePanel(id="queue")
        self.completions = CompletionList(id="completions")
        self.input = PromptInput(self.completions, complete=app.commands.complete,
                                 mentions=app.mention_source(), input_history=app.input_history,
                                 id="input")
        self.status = StatusBar(id="status", clock=app.clock)
        self._owl = app

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.banner
        yield self.queue_panel
        yield self.completions
        yield self.input
        yield self.status
        yield Footer()

    async def on_mount(self) -> None:
        await self._owl.setup()


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
        self._notices = list(notices)  # start-up warnings (the sandbox's notes...), shown once mounted
        try:
            self._owl_keymap = check_keys(keymap or {})
        except KeysError as exc:  # the config checks [keys] first; this is for a keymap passed in
            self._notices.append(f"{exc}; the default keys apply")
            self._owl_keymap = {}
        self._follow_up_keys = split_keys(self._owl_keymap.get("follow_up", "")) or default_keys("follow_up")
        palette = split_keys(self._owl_keymap.get("palette", "")) or default_keys("palette")
        self.COMMAND_PALETTE_BINDING = palette[0]  # type: ignore[misc]  # the footer finds the palette by it
        self._elapsed = elapsed
        self._max_blocks = max_blocks
        self._cursor_blink = cursor_blink
        self._events: list[ev.Event] = []
        self._flush_posted = False
        self._last_ctrl_c = 0.0
        self._unsubscribe: list[Callable[[], None]] = []
        self._runtime_worker: Worker[None] | None = None
        self._quitting = False
        self._close_event: anyio.Event | None = None
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
            if self.is_running and not self._quitting:
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
        if self._owl_keymap:
            self.set_keymap(self._owl_keymap)
        rt, main = self.runtime, self.main
        stats = rt.stats  # counting from now on, and before the presenter listens to the same sources
        if self._max_blocks:
            main.conversation.max_blocks = self._max_blocks
        p = self.presenter = Presenter(rt, stats, conversation=main.conversation, status=main.status,
                                       queue=main.queue_panel, banner=main.banner, later=self.call_later,
                                       alive=self._alive)
        resumed = await self._draw_history()
        if resumed:
            n = len(self.agent.history.items())
            await p.notice(f"resumed session {rt.session_id} ({n} message{'s' if n != 1 else ''})")
        self._unsubscribe += [rt.emitter.subscribe(self._on_event),
                              rt.inbox.subscribe(lambda *_: p.queue_changed()),
                              rt.gate.subscribe(p.gate_changed),
                              rt.approvals.subscribe(p.approval_changed),
                              rt.approvals.subscribe(lambda *_: self.refresh_bindings())]
        self._unsubscribe.append(watch_interrupts(self))  # what still runs after an abort
        rt.requirement.subscribe(p.requirement_changed)
        self.agent.on_running(lambda _running: p.redraw_status())
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self._notices += self.theme_warnings
        while self._notices:
            await p.notice(self._notices.pop(0), "warning")
        p.queue_changed()
        p.gate_changed()
        self.input.cursor_blink = self._cursor_blink
        self.input.focus()
        self._runtime_worker = self.run_worker(self._hold_runtime(), name="runtime", exit_on_error=False)

    async def _hold_runtime(self) -> None:
        self._close_event = anyio.Event()
        async with self.runtime:
            # start-up objects (modules, styles, widgets) move out of the collector's reach: a full
            # collection mid-stream would otherwise walk them all (50-70 ms, a visible hitch)
            gc.freeze()
            first, second, _third = gc.get_threshold()
            gc.set_threshold(first, second, 50)  # and run about 5x rarer (each walks what streaming kept)
            self.ready = True
            if self.initial_prompt:
                self.agent.prompt(self.initial_prompt)
            if not self._quitting:
                await self._close_event.wait()

    async def shutdown(self) -> None:
        """Abort the run, close the runtime (kills jobs, closes the session)."""
        self._quitting = True
        if self._close_event is not None:
            self._close_event.set()
        if self._runtime_worker is not None:
            await self._runtime_worker.wait()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    def _alive(self) -> bool:
        return self.presenter is not None and not self._quitting

    def _theme_changed(self, theme: Theme) -> None:
        if self.save_theme is not None:
            try:
                self.save_theme(theme.name)
            except Exception as exc:
                self.notify(f"could not save the theme: {exc}", severity="warning")

    # ---- agent events --------------------------------------------------------------------
    def _on_event(self, event: ev.Event) -> None:
        """Called synchronously from the agent's task: buffer and schedule, never block."""
        self._events.append(event)
        if not self._flush_posted:
            self._flush_posted = True
            self.post_message(FlushEvents())

    async def on_flush_events(self, _msg: FlushEvents) -> None:
        self._flush_posted = False
        batch, self._events = self._events, []
        if self.presenter is not None and self._alive():
            await self.presenter.show(batch)

    # ---- commands: what was typed becomes a call, the reply is shown -------------------------
    async def run_line(self, text: str) -> None:
        """A ``/command`` line (typed, from the palette or a key)."""
        reply = self.commands.slash(text)
        if reply is not None:
            await self.show(reply)

    async def show(self, reply: Reply) -> None:
        p = self.presenter
        if p is None:
            return
        if reply.clear_view:
            await p.reset()
            await self._draw_history()
        pick = reply.pick
        if pick is None:
            await p.say(reply.notice)
        elif pick.command == "rewind":  # which checkpoint, then files / conversation / both
            pick_rewind(self, pick)
        else:  # the picker shows what the text lists (the text is for front ends without one)
            def chosen(choice: str | None) -> None:
                if choice:
                    self.call_later(self.run_line, f"/{pick.command} {choice}")

            labels = tuple(getattr(pick, "labels", ()))
            if len(labels) != len(pick.options):
                labels = tuple(pick.options)
            options = list(zip(pick.options, labels, strict=True))
            self.push_screen(PickerScreen(pick.title, options, highlight=pick.highlight,
                                          note=str(getattr(pick, "note", "") or "")), chosen)
        if reply.then is not None:
            self._finish(reply.then)
        p.redraw_status()  # a command may have changed what it shows (the model, the session)

    def welcome(self) -> str:
        rt = self.runtime
        workspace = getattr(rt, "workspace", None) or self.agent.config.workspace
        sid = rt.session_id
        session = f"session {sid}" if sid else "session not saved"
        return (f"OwlTUI · {model_display(rt.model_label)} · {_home(Path(workspace))} · {session} · "
                "/help for commands and keys")

    async def _draw_history(self) -> bool:
        """The welcome line, then the conversation so far (a resumed session, a rewind); whether
        there was one."""
        p = self.presenter
        if p is None:
            return False
        await self.conversation.add(WelcomeBlock(self.welcome()))
        history = self.agent.history
        items = history.items()
        if not items:
            return False
        compaction = getattr(history, "compaction", None)
        await p.replay(items, compaction() if callable(compaction) else None)
        self.conversation.follow()  # the end of it in view, as its answers render
        return True

    @work(exclusive=True, group="command")
    async def _finish(self, then: Awaitable[Reply]) -> None:
        await self.show(await then)

    def _show_later(self, reply: Reply) -> None:
        self.call_later(self.show, reply)

    def unshown_notices(self) -> list[str]:
        """Warnings that arrived too early or too late to be shown (the caller prints them)."""
        lines, self._notices = self._notices, []
        return lines

    def warn(self, text: str) -> None:
        """A warning for the user (from any thread): a notice in the conversation."""
        if self.presenter is None or not self.is_running or self._quitting:
            self._notices.append(text)  # shown at start, or printed once the app is gone
        elif threading.get_ident() != self._thread_id:
            self.call_from_thread(self.warn, text)
        else:
            self.call_later(self.presenter.notice, text, "warning")

    async def on_prompt_input_send(self, msg: PromptInput.Send) -> None:
        answer = parse_answer(msg.text)
        if answer is not None:  # /allow, /always, /deny: typed in full, a deliberate answer
            await self.show(self._answer(*answer))
            return
        self._remember(msg.text)
        reply = self.commands.slash(msg.text)
        if reply is None:
            text = literal(msg.text)
            follow_up = msg.lane == "follow_up"
            reply = self.commands.send(text, "follow_up" if follow_up else "prompt")
            # a prompt that started a run is shown now (a paused gate parks the run before delivery);
            # queued messages are shown when delivered, a `!command` as its bash block
            started = reply.ok and "queued" not in reply.data and "call_id" not in reply.data
            if not follow_up and started and self.presenter is not None:
                await self.presenter.echo(unescape(text))
        await self.show(reply)

    def _remember(self, text: str) -> None:
        history = self.input_history
        if history is not None:
            try:
                history.add(text)
            except Exception as exc:  # a convenience: never in the way of sending
                logging.getLogger(__name__).debug("input history: %s", exc)

    # ---- approvals: answered only by a deliberate action ------------------------------------
    def _answer(self, decision: str, call_id: str | None = None) -> Reply:
        pending = choose(self.runtime.approvals.pending(), call_id)
        if pending is None:
            which = f" {call_id!r}" if call_id else ""
            return Reply(f"no approval{which} is waiting", "warning", ok=False)
        if pending.rerun and decision == "always":
            return Reply("a re-run outside the sandbox is allowed once or not at all: /allow or /deny",
                         "warning", ok=False)
        return self.commands.call("approve", call_id=pending.call_id, decision=decision)

    def _prompts(self) -> list[ApprovalPrompt]:
        waiting = [p.call_id for p in self.runtime.approvals.pending()]
        prompts = {w.call_id: w for w in self.conversation.query(ApprovalPrompt)}
        return [prompts[c] for c in waiting if c in prompts]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_approval":
            return bool(self.runtime.approvals.pending())  # shown in the footer only while one waits
        return True

    def action_focus_approval(self) -> None:
        """Ctrl+G: focus the oldest waiting approval (again: the next one, then back to the input)."""
        prompts = self._prompts()
        focused = self.focused
        if isinstance(focused, ApprovalPrompt) and focused in prompts:
            later = prompts[prompts.index(focused) + 1:]
            if not later:
                self.input.focus()
                return
            prompts = later
        if not prompts:
            self.input.focus()
            return
        target = prompts[0]
        target.arm()
        target.focus()
        target.scroll_visible(animate=False)

    def on_approval_prompt_decided(self, msg: ApprovalPrompt.Decided) -> None:
        self.input.focus()
        self._show_later(self.commands.call("approve", call_id=msg.call_id, decision=msg.decision))

    def on_tool_block_approval_closed(self, _msg: ToolBlock.ApprovalClosed) -> None:
        self.input.focus()

    def busy(self) -> bool:
        """A run, a `!command` or /init is going (what Esc and Ctrl+C stop)."""
        return self.agent.running or bool(background(self.runtime).keys)

    def action_abort(self) -> None:
        focused = self.focused
        if focused is not None and focused is not self.input and focused.screen is self.main:
            self.input.focus()  # Esc on an approval or a block: back to the input (does not abort)
            return
        completions = self.main.completions
        if completions.display:
            completions.hide()
            return
        if self.busy():
            self._show_later(self.commands.call("abort"))

    def action_toggle_pause(self) -> None:
        self._show_later(self.commands.call("resume" if self.runtime.gate.paused else "pause"))

    def action_pick_requirement(self) -> None:
        self.call_later(self.run_line, "/require")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: every slash command (those that need an argument typed fill the
        input, the others run)."""
        yield from super().get_system_commands(screen)

        def run(line: str) -> Callable[[], None]:
            def go() -> None:
                self.call_later(self.run_line, line)
            return go

        def prefill(line: str) -> Callable[[], None]:
            def go() -> None:
                self.input.fill(line)
                self.input.focus()
            return go

        for cmd in self.commands.slash_list:
            if needs_words(cmd):
                yield SystemCommand(f"/{cmd.slash}", cmd.help, prefill(f"/{cmd.slash} "))
            else:
                yield SystemCommand(f"/{cmd.slash}", cmd.help, run(f"/{cmd.slash}"))

    # ---- other keys ----------------------------------------------------------------------
    def on_prompt_input_pop_queue(self, _msg: PromptInput.PopQueue) -> None:
        entry = self.runtime.inbox.pop_last()
        if entry is None:
            self.notify("nothing queued")
            return
        self.input.put_back(entry.text)

    async def action_ctrl_c(self) -> None:
        """During a run: abort it, like Esc (the queue is kept). Idle: clear the input; on an empty
        input, arm quitting (a second Ctrl+C quits)."""
        if self.busy():
            self._last_ctrl_c = 0.0
            self._show_later(self.commands.call("abort"))
            return
        if self.input.text:
            self._last_ctrl_c = 0.0
            self.input.clear()
            self.main.completions.hide()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW:
            await self.action_quit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def action_history_search(self) -> None:
        """Ctrl+R: search the input history; the entry chosen goes into the input."""
        history = self.input_history
        if history is None:
            self.notify("no input history here")
            return

        def chosen(text: str | None) -> None:
            if text is not None:
                self.input.recall(text)
            self.input.focus()

        self.push_screen(HistorySearchScreen(lambda query, limit: history.search(query, limit),
                                             self.input.text.strip()), chosen)

    def action_focus_queue(self) -> None:
        focus_queue(self)

    async def action_steer_now(self) -> None:
        await steer_now(self)

    def action_toggle_tool(self) -> None:
        """Ctrl+O: expand or collapse the tool block that has the focus, else the last one."""
        blocks = list(self.conversation.query(ToolBlock))
        if not blocks:
            self.notify("no tool block to expand")
            return
        target = blocks[-1]
        node = self.focused
        while node is not None:
            if isinstance(node, ToolBlock):
                target = node
                break
            node = node.parent if isinstance(node.parent, Widget) else None
        target.collapsed = not target.collapsed
        self.call_after_refresh(target.scroll_visible, animate=False)

    async def action_ctrl_d(self) -> None:
        if not self.input.text:
            await self.action_quit()
        else:
            self.input.action_delete_right()

    def action_follow(self) -> None:
        self.conversation.follow()

    def action_scroll(self, direction: str) -> None:
        conv = self.conversation
        if direction == "up":
            conv.scroll_page_up(animate=False)
        else:
            conv.scroll_page_down(animate=False)


class _NoticeHandler(logging.Handler):
    """While the TUI owns the screen, OwlTUI's warnings (log records) become notices: on stderr they
    would be hidden behind the full-screen view, or garble it."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self._warn = warn

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._warn(record.getMessage())
        except Exception:
            self.handleError(record)


def run_tui(options: Options, prompt: str | None = None) -> int:
    """The interactive TUI (CLI entry). Returns the exit code.

    Start-up warnings (the sandbox's notes, the session's) and OwlTUI's logged warnings are shown in
    the conversation, not on stderr where the full-screen view would hide them; everything is
    scrubbed of secrets first."""
    import os
    import sys

    from owltui.session.config import save_config_value
    from owltui.session.redact import Redactor
    from owltui.session.runtime import build_runtime

    early: list[str] = []

    def to_stderr(text: str) -> None:
        print(f"owltui: warning: {text}", file=sys.stderr)

    route: list[Callable[[str], None]] = [early.append]

    def warn(text: str) -> None:  # build_runtime scrubs what it hands here
        route[0](text)

    try:
        runtime = build_runtime(options, warn=warn)
    except Exception as exc:  # config/provider/session errors are one clear sentence
        for line in early:
            to_stderr(line)
        scrub = Redactor.from_env(os.environ, [options.base_url]).scrub
        print(f"owltui: {scrub(str(exc))}", file=sys.stderr)
        return 1

    redactor = runtime.agent.config.services.get("redactor")
    if not isinstance(redactor, Redactor):
        redactor = Redactor.from_env(runtime.env, [options.base_url])

    def save(name: str) -> None:
        save_config_value("theme", name, env=runtime.env)

    app = OwlApp(runtime, prompt=prompt, theme=runtime.config.theme, keymap=dict(runtime.config.keys),
                 save_theme=save, notices=early)
    route[0] = app.warn
    handler = _NoticeHandler(lambda text: app.warn(redactor.scrub(text)))
    owl_log = logging.getLogger("owltui")
    owl_log.addHandler(handler)
    try:
        result = app.run()
    finally:
        owl_log.removeHandler(handler)
        route[0] = to_stderr
        for line in app.unshown_notices():
            to_stderr(line)
    resume = resume_line(runtime)
    if resume:
        print(resume)
    return int(result or 0)
