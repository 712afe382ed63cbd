"""The Textual TUI. It holds no agent logic: it drives the agent's verbs, the inbox, the pause gate
and the requirement slot, and draws the events the agent emits.

``run_tui(options, prompt)`` is the CLI entry; ``OwlApp(runtime)`` takes any runtime (tests inject
one built around a scripted model).
"""

from __future__ import annotations

import gc
import inspect
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker

from owltui.agent import events as ev
from owltui.agent.history import MemoryHistory
from owltui.agent.requirement import SoftRequirement

from . import commands
from .blocks import AssistantBlock, InputBlock, NoticeBlock, ThinkingBlock
from .conversation import ConversationView
from .pause_banner import PauseBanner
from .picker import PickerScreen
from .prompt_input import CompletionList, PromptInput
from .queue_panel import QueuePanel
from .status_bar import StatusBar
from .text import format_duration
from .themes import load_themes
from .tool_block import ApprovalPrompt, ToolBlock

log = logging.getLogger(__name__)

DEFAULT_THEME = "owl-dark"
QUIT_WINDOW = 2.0  # seconds between two Ctrl+C presses that quit

KEYS_HELP = """Keys:
  Enter            send (a prompt when idle, steering while the agent works)
  Alt+Enter/Ctrl+J send as a follow-up (delivered when the agent would stop)
  Shift+Enter/Ctrl+N, or \\ then Enter   newline
  Alt+Up           take the last queued message back into the editor
  Esc              abort the run (queued messages stay queued)
  F2               pause / resume every agent (the process-wide gate)
  Ctrl+T           require a tool for the next turn (picker)
  y / a / n        answer an approval while the input is empty (allow once / always / deny)
  PgUp / PgDn      scroll;  Ctrl+End or F4 follow the bottom again
  Ctrl+C           clear the input; twice quits.   Ctrl+D on an empty input quits"""


class FlushEvents(Message):
    """Agent events are buffered by the listener and drawn in one batch by this message."""


class MainScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.abort", "Abort", priority=True, id="abort"),
        Binding("ctrl+c", "app.ctrl_c", "Clear/quit", priority=True, show=False, id="clear"),
        Binding("ctrl+d", "app.ctrl_d", "Quit", priority=True, show=False, id="eof"),
        Binding("f2", "app.toggle_pause", "Pause/resume", id="pause"),
        Binding("ctrl+t", "app.pick_requirement", "Require tool", id="require"),
        Binding("ctrl+end,f4", "app.follow", "Follow", show=False, id="follow"),
        Binding("pageup", "app.scroll('up')", "Scroll up", show=False, priority=True, id="scroll_up"),
        Binding("pagedown", "app.scroll('down')", "Scroll down", show=False, priority=True,
                id="scroll_down"),
    ]

    def compose(self) -> ComposeResult:
        app = self.app
        assert isinstance(app, OwlApp)
        yield ConversationView(id="conversation")
        yield PauseBanner(app.runtime.gate, app.paused_elapsed, id="banner")
        yield QueuePanel(id="queue")
        completions = CompletionList(id="completions")
        yield completions
        yield PromptInput(completions, approve=app.approve_first, id="input")
        yield StatusBar(id="status")
        yield Footer()

    async def on_mount(self) -> None:
        app = self.app
        assert isinstance(app, OwlApp)
        await app.setup()


class OwlApp(App[int]):
    TITLE = "OwlTUI"
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, runtime: Any, *, prompt: str | None = None, theme: str | None = None,
                 save_theme: Callable[[str], None] | None = None, keymap: dict[str, str] | None = None,
                 elapsed: Callable[[], float] | None = None, theme_dirs: Iterable[Any] | None = None,
                 max_blocks: int | None = None, cursor_blink: bool = True) -> None:
        super().__init__()
        self.runtime = runtime
        self.agent = runtime.agent
        self.initial_prompt = prompt
        self.save_theme = save_theme
        self._owl_keymap = keymap or {}
        self._elapsed = elapsed
        self._max_blocks = max_blocks
        self._cursor_blink = cursor_blink
        self._events: list[ev.Event] = []
        self._flush_posted = False
        self._assistant: AssistantBlock | None = None
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        self._approvals: list[str] = []
        self._echoed: list[str] = []
        self._widgets: dict[type, Any] = {}
        self._jobs: dict[str, str] = {}
        self._last_ctrl_c = 0.0
        self._unsubscribe: list[Callable[[], None]] = []
        self._runtime_worker: Worker[None] | None = None
        self._quitting = False
        self._close_event: Any = None
        self.ready = False
        self._setup_done = False
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
        return MainScreen()

    def _main(self, cls: type[Any]) -> Any:
        cached = self._widgets.get(cls)
        if cached is None:
            cached = self._widgets[cls] = self.screen_stack[0].query_one(cls)
        return cached

    @property
    def conversation(self) -> ConversationView:
        return self._main(ConversationView)  # type: ignore[no-any-return]

    @property
    def input(self) -> PromptInput:
        return self._main(PromptInput)  # type: ignore[no-any-return]

    @property
    def status(self) -> StatusBar:
        return self._main(StatusBar)  # type: ignore[no-any-return]

    @property
    def banner(self) -> PauseBanner:
        return self._main(PauseBanner)  # type: ignore[no-any-return]

    @property
    def queue_panel(self) -> QueuePanel:
        return self._main(QueuePanel)  # type: ignore[no-any-return]

    def paused_elapsed(self) -> float:
        if self._elapsed is not None:
            return self._elapsed()
        at = self.runtime.gate.paused_at
        return time.monotonic() - at if at is not None else 0.0

    async def setup(self) -> None:
        """Called once the main screen is composed: subscribe, then start the runtime."""
        if self._owl_keymap:
            self.set_keymap(self._owl_keymap)
        rt = self.runtime
        if self._max_blocks:
            self.conversation.max_blocks = self._max_blocks
        st = self.status.state
        st.model = rt.model_label if not rt.model_label.startswith("demo") else f"{rt.model_label} (demo)"
        st.max_rounds = self.agent.config.max_rounds
        self._setup_done = True
        self._unsubscribe.append(rt.emitter.subscribe(self._on_event))
        self._unsubscribe.append(rt.inbox.subscribe(lambda *_: self._queue_changed()))
        self._unsubscribe.append(rt.gate.subscribe(self._on_gate))
        rt.requirement.subscribe(self._on_requirement)
        self.agent.on_running(lambda _running: self._redraw_status())
        approvals = getattr(rt, "approvals", None)
        if approvals is not None and hasattr(approvals, "subscribe"):
            self._unsubscribe.append(approvals.subscribe(self._on_approval_change))
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        for warning in self.theme_warnings:
            await self.notice(warning, "warning")
        self._queue_changed()
        self._on_gate(rt.gate.paused, None, quiet=True)
        self.input.cursor_blink = self._cursor_blink
        self.input.focus()
        self._runtime_worker = self.run_worker(self._hold_runtime(), name="runtime", exit_on_error=False)

    async def _hold_runtime(self) -> None:
        import anyio

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

    # ---- agent events --------------------------------------------------------------------
    def _on_event(self, event: ev.Event) -> None:
        """Called synchronously from the agent's task: buffer and schedule, never block."""
        self._events.append(event)
        if not self._flush_posted:
            self._flush_posted = True
            self.post_message(FlushEvents())

    async def on_flush_events(self, _msg: FlushEvents) -> None:
        self._flush_posted = False
        if not self._alive():
            self._events.clear()
            return
        batch, self._events = self._events, []
        text: list[str] = []
        for event in batch:
            if not self._alive():
                return
            if isinstance(event, ev.MessageDelta) and event.text is not None:
                text.append(event.text)
                continue
            if text:
                await self._assistant_text("".join(text))
                text = []
            await self._handle(event)
        if text:
            await self._assistant_text("".join(text))
        self._redraw_status()

    async def _assistant_text(self, text: str) -> None:
        if self._assistant is None:
            self._assistant = AssistantBlock()
            await self.conversation.add(self._assistant)
        self._assistant.feed(text)

    async def _end_assistant(self, final_text: str = "") -> None:
        block, self._assistant = self._assistant, None
        if block is None and final_text.strip():
            block = AssistantBlock()
            await self.conversation.add(block)
            block.feed(final_text)
        if block is not None:
            block.end()

    async def _handle(self, e: ev.Event) -> None:
        st = self.status.state
        if e.agent is not None and not isinstance(e, (ev.ToolStart, ev.ToolEnd, ev.ApprovalRequest)):
            return  # subagent chatter stays out of the main conversation
        if isinstance(e, ev.AgentStart):
            self._assistant = None
        elif isinstance(e, ev.TurnStart):
            st.round = e.round
        elif isinstance(e, ev.InputEvent):
            if e.lane == "user" and self._echoed and self._echoed[0] == e.text:
                self._echoed.pop(0)
            else:
                await self.conversation.add(InputBlock(e.lane, e.text))
        elif isinstance(e, ev.MessageStart):
            self._assistant = None
            self._thinking = None
        elif isinstance(e, ev.MessageDelta):
            if e.thinking:
                if self._thinking is None:
                    self._thinking = ThinkingBlock()
                    await self.conversation.add(self._thinking)
                self._thinking.append(e.thinking)
        elif isinstance(e, ev.MessageEnd):
            await self._end_assistant(e.text)
            self._thinking = None
            st.tokens_in += e.usage.input_tokens
            st.tokens_out += e.usage.output_tokens
            st.cache_read += e.usage.cache_read_tokens
            st.cost += e.usage.cost
            for call in e.tool_calls:
                await self._tool_block(call.id, call.name, call.arguments)
            if e.error:
                await self.notice(f"model error: {e.error}", "error")
        elif isinstance(e, ev.ToolStart):
            (await self._tool_block(e.call_id, e.name, e.arguments)).set_status("running")
        elif isinstance(e, ev.ToolUpdate):
            block = self._tools.get(e.call_id)
            if block is not None:
                block.append_output(e.text)
        elif isinstance(e, ev.ToolEnd):
            (await self._tool_block(e.call_id, e.name, {})).finish(e.status, e.output)
            self._drop_approval(e.call_id)
        elif isinstance(e, ev.ApprovalRequest):
            block = await self._tool_block(e.call_id, e.name, e.arguments)
            block.ask()
            if e.call_id not in self._approvals:
                self._approvals.append(e.call_id)
        elif isinstance(e, ev.RequirementEvent):
            st.escalation = e.escalation
            if e.escalation == 0:
                await self.notice(f"requirement: reminded the model to call `{e.tool}`")
            else:
                await self.notice(f"requirement escalated ({e.escalation}/3): the next call is forced "
                                  f"to `{e.tool}`", "warning")
        elif isinstance(e, ev.JobStarted):
            self._jobs[e.job_id] = e.command
            await self.notice(f"background job {e.job_id} started: {e.command}")
            self._queue_changed()
        elif isinstance(e, ev.JobFinished):
            self._jobs.pop(e.job_id, None)
            await self.notice(f"background job {e.job_id} finished (exit {e.exit_code}): {e.command}")
            self._queue_changed()
        elif isinstance(e, ev.Retry):
            await self.notice(f"retrying in {e.delay_s:.1f} s (attempt {e.attempt}): {e.reason}", "warning")
        elif isinstance(e, ev.AgentEnd):
            self._echoed.clear()
            await self._end_assistant()
            await self._agent_end(e)

    async def _agent_end(self, e: ev.AgentEnd) -> None:
        if e.reason == "aborted":
            queued = len(self.runtime.inbox.peek("steer")) + len(self.runtime.inbox.peek("follow_up"))
            kept = f"; {queued} queued message{'s' if queued != 1 else ''} kept" if queued else ""
            await self.notice(f"aborted{kept}", "warning")
        elif e.reason == "error":
            await self.notice(f"error: {e.error or 'the run failed'}", "error")
        elif e.reason in ("round_limit", "failure_limit"):
            await self.notice(f"stopped: {e.reason.replace('_', ' ')}", "warning")
        self.status.state.escalation = 0

    async def _tool_block(self, call_id: str, name: str, arguments: dict[str, Any]) -> ToolBlock:
        block = self._tools.get(call_id)
        if block is None:
            block = ToolBlock(call_id, name, arguments)
            self._tools[call_id] = block
            await self.conversation.add(block)
        return block

    async def notice(self, text: str, kind: str = "info") -> NoticeBlock:
        block = NoticeBlock(text, kind)
        await self.conversation.add(block)
        return block

    # ---- other state sources -------------------------------------------------------------
    def _alive(self) -> bool:
        return self._setup_done and not self._quitting

    def _redraw_status(self) -> None:
        if not self._alive():
            return
        st = self.status.state
        st.running = bool(self.agent.running)
        st.paused = self.runtime.gate.paused
        req = self.runtime.requirement.current
        st.requirement = req.tool if req is not None else None
        st.steer = len(self.runtime.inbox.peek("steer"))
        st.follow_up = len(self.runtime.inbox.peek("follow_up"))
        st.jobs = len(self._jobs)
        self.status.redraw()

    def _queue_changed(self) -> None:
        if not self._alive():
            return
        self.queue_panel.show_queue(self.runtime.inbox.snapshot(), self._jobs)
        self._redraw_status()

    def _on_gate(self, paused: bool, seconds: float | None, quiet: bool = False) -> None:
        if not self._alive():
            return
        self.banner.redraw()
        self._redraw_status()
        if quiet:
            return
        if paused:
            self.call_later(self.notice, "paused: agents park before their next model call or tool start")
        else:
            self.call_later(self.notice, f"resumed after {format_duration(seconds or 0.0)}")

    def _on_requirement(self, what: str, req: SoftRequirement | None) -> None:
        if not self._alive():
            return
        self._redraw_status()
        if what == "satisfied" and req is not None:
            self.call_later(self.notice, f"requirement satisfied: `{req.tool}` was called", "success")
        elif what == "failed" and req is not None:
            self.status.state.escalation = 0
            self.call_later(self.notice, f"requirement failed: the model did not call `{req.tool}` "
                                         "after 3 forced turns", "error")

    def _on_approval_change(self, action: str, pending: Any) -> None:
        if action in ("withdrawn", "answered"):
            self._drop_approval(pending.call_id)

    def _drop_approval(self, call_id: str) -> None:
        if call_id in self._approvals:
            self._approvals.remove(call_id)
        block = self._tools.get(call_id)
        if block is not None:
            block.answered()

    def _theme_changed(self, theme: Any) -> None:
        if self.save_theme is not None:
            try:
                self.save_theme(theme.name)
            except Exception as exc:
                self.notify(f"could not save the theme: {exc}", severity="warning")

    # ---- approvals -----------------------------------------------------------------------
    def approve_first(self, decision: str) -> bool:
        """y / a / n from an empty input: answer the oldest pending approval."""
        if not self._approvals:
            return False
        self.answer_approval(self._approvals[0], decision)
        return True

    def answer_approval(self, call_id: str, decision: str) -> None:
        broker = getattr(self.runtime, "approvals", None)
        ok = broker.answer(call_id, decision) if broker is not None else False
        self._drop_approval(call_id)
        block = self._tools.get(call_id)
        name = block.tool_name if block is not None else "tool"
        if not ok:
            self.call_later(self.notice, "that approval request is no longer pending", "warning")
        elif decision == "always":
            self.call_later(self.notice, f"always allowed: `{name}` saved as a permission rule", "success")
        elif decision == "deny":
            self.call_later(self.notice, f"denied `{name}`", "warning")

    def on_approval_prompt_decided(self, msg: ApprovalPrompt.Decided) -> None:
        self.answer_approval(msg.call_id, msg.decision)
        self.input.focus()

    # ---- input ---------------------------------------------------------------------------
    async def on_prompt_input_send(self, msg: PromptInput.Send) -> None:
        text = msg.text
        parsed = commands.parse(text)
        if parsed is not None:
            await self.run_command(*parsed)
            return
        if text.startswith("//"):
            text = text[1:]
        if msg.lane == "follow_up":
            self.agent.follow_up(text)
        elif not self.agent.running and self.agent.prompt(text):
            # show the prompt now (a paused gate parks the run before it is delivered)
            self._echoed.append(text)
            await self.conversation.add(InputBlock("user", text))
        else:
            self.agent.steer(text)
        self._queue_changed()

    def on_prompt_input_pop_queue(self, _msg: PromptInput.PopQueue) -> None:
        entry = self.runtime.inbox.pop_last()
        if entry is None:
            self.notify("nothing queued")
            return
        self.input.put_back(entry.text)

    def action_abort(self) -> None:
        completions = self.screen_stack[0].query_one(CompletionList)
        if completions.display:
            completions.show([])
            return
        if self.agent.running:
            self.agent.abort()

    async def action_ctrl_c(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW:
            await self.action_quit()
            return
        self._last_ctrl_c = now
        self.input.clear()
        self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    async def action_ctrl_d(self) -> None:
        if not self.input.text:
            await self.action_quit()
        else:
            self.input.action_delete_right()

    def action_toggle_pause(self) -> None:
        gate = self.runtime.gate
        if gate.paused:
            gate.resume()
        else:
            gate.pause()

    def action_follow(self) -> None:
        self.conversation.follow()

    def action_scroll(self, direction: str) -> None:
        conv = self.conversation
        if direction == "up":
            conv.scroll_page_up(animate=False)
        else:
            conv.scroll_page_down(animate=False)

    def action_pick_requirement(self) -> None:
        names = self.runtime.tool_names()
        if not names:
            self.call_later(self.notice, "this agent has no tools to require", "warning")
            return
        options = [(n, n) for n in names]
        self.push_screen(PickerScreen("Require a tool for the next turn", options),
                         self._picked_requirement)

    def _picked_requirement(self, tool: str | None) -> None:
        if tool:
            self.call_later(self._require, tool, "")

    async def _require(self, tool: str, reason: str) -> None:
        names = self.runtime.tool_names()
        if tool not in names:
            await self.notice(f"unknown tool `{tool}`; tools: {', '.join(names)}", "error")
            return
        self.runtime.requirement.set(tool, reason)
        why = f" ({reason})" if reason else ""
        await self.notice(f"requirement: the next turn must call `{tool}`{why}")

    def action_pick_theme(self) -> None:
        options = [(name, name) for name in sorted(self.available_themes)]
        self.push_screen(PickerScreen("Theme", options, highlight=self.theme), self._picked_theme)

    def _picked_theme(self, name: str | None) -> None:
        if name:
            self.theme = name

    # ---- commands ------------------------------------------------------------------------
    async def run_command(self, name: str, arg: str) -> None:
        rt = self.runtime
        if name == "pause":
            if not rt.gate.pause():
                await self.notice("already paused")
        elif name == "resume":
            if rt.gate.resume() is None:
                await self.notice("not paused")
        elif name == "require":
            if not arg:
                self.action_pick_requirement()
            else:
                tool, _, reason = arg.partition(" ")
                await self._require(tool, reason.strip())
        elif name == "model":
            await self._model(arg)
        elif name == "sessions":
            await self._sessions()
        elif name == "new":
            await self._new_session()
        elif name == "compact":
            await self._compact()
        elif name == "theme":
            if not arg:
                self.action_pick_theme()
            elif arg in self.available_themes:
                self.theme = arg
                await self.notice(f"theme: {arg}")
            else:
                names = ", ".join(sorted(self.available_themes))
                await self.notice(f"unknown theme '{arg}'; themes: {names}", "error")
        elif name == "help":
            await self.notice(commands.help_text() + "\n\n" + KEYS_HELP)
        elif name == "quit":
            await self.action_quit()
        else:
            await self.notice(f"unknown command /{name} (/help lists them; // sends a literal /)", "error")

    async def _model(self, spec: str) -> None:
        rt = self.runtime
        if not spec:
            await self.notice(f"model: {self.status.state.model}")
            return
        set_model = getattr(rt, "set_model", None)
        if set_model is None:
            await self.notice("switching models is not available here", "warning")
            return
        try:
            set_model(spec)
        except Exception as exc:
            await self.notice(f"cannot switch model: {exc}", "error")
            return
        label = rt.model_label
        self.status.state.model = label if not label.startswith("demo") else f"{label} (demo)"
        await self.notice(f"model: {self.status.state.model}")

    async def _sessions(self) -> None:
        try:
            from owltui.session.paths import sessions_dir
            from owltui.session.sessions import format_listing, list_sessions
        except ImportError:
            await self.notice("sessions are not available", "warning")
            return
        env = getattr(self.runtime, "env", None)
        infos = list_sessions(sessions_dir(self.agent.config.workspace, env))
        current = getattr(self.runtime, "session_id", None)
        head = f"current session: {current}" if current else "this session is not saved (--no-session)"
        body = format_listing(infos) if infos else "no saved sessions in this directory"
        await self.notice(f"{head}\n{body}\n(resume one with: owltui --resume ID)")

    async def _new_session(self) -> None:
        if self.agent.running:
            await self.notice("a run is going: abort it (Esc) before /new", "warning")
            return
        rt = self.runtime
        fresh = getattr(rt, "new_session", None)
        if fresh is not None:
            result = fresh()
            if inspect.isawaitable(result):
                await result
        else:
            self.agent.history = MemoryHistory()
        self._tools.clear()
        self._approvals.clear()
        self._echoed.clear()
        await self.conversation.remove_children()
        st = self.status.state
        st.tokens_in = st.tokens_out = st.cache_read = st.round = 0
        st.cost = 0.0
        sid = getattr(rt, "session_id", None)
        await self.notice(f"new session{f' {sid}' if sid else ''}")

    async def _compact(self) -> None:
        compact = getattr(self.runtime, "compact", None)
        if compact is None:
            await self.notice("/compact is not available in this build", "warning")
            return
        if self.agent.running:
            await self.notice("a run is going: wait or abort (Esc) before /compact", "warning")
            return
        self._compact_worker(compact)

    @work(exclusive=True, group="compact")
    async def _compact_worker(self, compact: Callable[[], Any]) -> None:
        await self.notice("compacting…")
        try:
            result = compact()
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            await self.notice(f"compaction failed: {exc}", "error")
            return
        await self.notice(f"compacted{f': {result}' if isinstance(result, str) and result else ''}",
                          "success")

    # ---- command palette -----------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)

        def run(name: str, arg: str = "") -> Callable[[], None]:
            return lambda: self.call_later(self.run_command, name, arg)

        def prefill(name: str) -> Callable[[], None]:
            def go() -> None:
                self.input._set(f"/{name} ")
                self.input.focus()
            return go

        for cmd in commands.COMMANDS:
            if cmd.name in ("model",):
                yield SystemCommand(f"/{cmd.name}", cmd.help, prefill(cmd.name))
            else:
                yield SystemCommand(f"/{cmd.name}", cmd.help, run(cmd.name))


def _config_bits(runtime: Any) -> tuple[str | None, dict[str, str], Callable[[str], None] | None]:
    config = getattr(runtime, "config", None)
    theme = getattr(config, "theme", None)
    keys = dict(getattr(config, "keys", {}) or {})
    env = getattr(runtime, "env", None)

    def save(name: str) -> None:
        from owltui.session.config import save_config_value

        save_config_value("theme", name, env=env)

    return theme, keys, save if config is not None else None


def run_tui(options: Any, prompt: str | None = None) -> int:
    """The interactive TUI (CLI entry). Returns the exit code."""
    import sys

    from owltui.session.runtime import build_runtime

    try:
        runtime = build_runtime(options)
    except Exception as exc:  # config/provider/session errors are one clear sentence
        print(f"owltui: {exc}", file=sys.stderr)
        return 1
    theme, keys, save = _config_bits(runtime)
    app = OwlApp(runtime, prompt=prompt, theme=theme, keymap=keys, save_theme=save)
    result = app.run()
    return int(result or 0)


def main(argv: list[str] | None = None) -> int:
    """``python -m owltui.ui.app [--provider P] [--model M] [--base-url U] [PROMPT]`` (for tests)."""
    import argparse

    from owltui.session.runtime import Options

    p = argparse.ArgumentParser(prog="owltui-tui")
    p.add_argument("prompt", nargs="?")
    p.add_argument("--provider")
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--yes", action="store_true")
    p.add_argument("--no-session", action="store_true")
    p.add_argument("--plain", action="store_true")
    a = p.parse_args(argv)
    opts = Options(provider=a.provider, model=a.model, base_url=a.base_url, yes=a.yes,
                   no_session=a.no_session)
    if a.plain:
        from .plain import run_plain

        return run_plain(opts, a.prompt)
    return run_tui(opts, a.prompt)


if __name__ == "__main__":
    raise SystemExit(main())
