"""Start-up and shutdown of the TUI, and the agent events' way in: ``Lifecycle`` (held by the app
as ``app.life`` once it has its runtime) subscribes the presenter to the host, holds the runtime open
in a worker until shutdown, sends what waited for it (the CLI prompt, then the lines typed on the
first frame, in order), and buffers agent events (from the agent's task) for the drawing worker,
which draws them in batches: at once after a quiet moment, else at most once per ``FLUSH_GAP``. The
worker is a task of its own, not a message handler of the app: a batch that mounts blocks waits for
their mounting, and the app's messages (the keys typed meanwhile) are not queued behind that wait;
and a turn of fast tool rounds is laid out a few times a second, not once per round.
``app_keys`` checks the ``[keys]`` map the app applies."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio
from textual.worker import Worker

from owltui.agent import events as ev
from owltui.session.commands.keys import KeysError, check_keys, default_keys, split_keys
from owltui.ui.app_options import AppOptions
from owltui.ui.control.app_api import OwlAppApi
from owltui.ui.control.input_routing import on_send
from owltui.ui.control.interrupt import watch_interrupts
from owltui.ui.control.presenter import Presenter
from owltui.ui.control.transcript import draw_history
from owltui.ui.widgets.prompt_input import PromptInput

FLUSH_GAP = 0.05  # while events keep coming, they are drawn at most this often (20 times a second)
URGENT = (ev.AgentEnd, ev.ApprovalRequest)  # drawn at once: the run is over, or the user is asked


@dataclass(frozen=True)
class AppKeys:
    """The ``[keys]`` map the app applies (checked), and the keys it names itself: the follow-up's
    (the footer's label) and the palette's."""

    keymap: dict[str, str]
    follow_up: list[str]
    palette: list[str]


def app_keys(keymap: Mapping[str, str], notices: list[str]) -> AppKeys:
    """``keymap`` checked; a bad one is a notice and the default keys apply (the config checks
    ``[keys]`` first: this is for a keymap passed in)."""
    try:
        keys = check_keys(keymap)
    except KeysError as exc:
        notices.append(f"{exc}; the default keys apply")
        keys = {}
    follow_up = split_keys(keys.get("follow_up", "")) or default_keys("follow_up")
    return AppKeys(keys, follow_up, split_keys(keys.get("palette", "")) or default_keys("palette"))


class Lifecycle:
    """Set-up, the runtime's worker, shutdown and the event buffer of one app."""

    def __init__(
        self, app: OwlAppApi, options: AppOptions, *, keymap: dict[str, str], typed: list[tuple[str, str]]
    ) -> None:
        self._app = app
        self._keymap = keymap
        self._max_blocks = options.max_blocks
        self._cursor_blink = options.cursor_blink
        self._prompt = options.prompt
        self._typed = typed  # lines sent on the first frame (text, lane), in order
        self._events: list[ev.Event] = []
        self._news = asyncio.Event()  # events wait in the buffer
        self._urgent = asyncio.Event()  # one of them is ``URGENT``
        self._drawing = False
        self._last_flush = -math.inf
        self._unsubscribe: list[Callable[[], None]] = []
        self._runtime_worker: Worker[None] | None = None
        self._close_event: anyio.Event | None = None
        self.quitting = False

    def alive(self) -> bool:
        return self._app.presenter is not None and not self.quitting

    async def setup(self) -> None:
        """Called once the main screen is composed: subscribe, then start the runtime."""
        app = self._app
        if self._keymap:
            app.set_keymap(self._keymap)
        rt, main = app.runtime, app.main
        stats = rt.stats  # counting from now on, and before the presenter listens to the same sources
        if self._max_blocks:
            main.conversation.max_blocks = self._max_blocks
        p = app.presenter = Presenter(
            rt,
            stats,
            conversation=main.conversation,
            status=main.status,
            queue=main.queue_panel,
            banner=main.banner,
            todo=main.todo_panel,
            later=app.call_later,
            alive=self.alive,
        )
        app.run_worker(self._draw(), name="draw")  # ends with the app
        resumed = await draw_history(app)
        if resumed:
            n = len(app.agent.history.items())
            await p.notice(f"resumed session {rt.session_id} ({n} message{'s' if n != 1 else ''})")
        self._unsubscribe += [
            rt.emitter.subscribe(self.on_event),
            rt.inbox.subscribe(lambda *_: p.queue_changed()),
            rt.gate.subscribe(p.gate_changed),
            rt.approvals.subscribe(p.approval_changed),
            rt.approvals.subscribe(lambda *_: app.refresh_bindings()),
        ]
        if rt.plans is not None:  # plan mode: the plan screen opens when the model presents a plan
            from owltui.ui.control.plan_review import plan_changed

            self._unsubscribe.append(rt.plans.subscribe(lambda a, p: plan_changed(app, a, p)))
        from owltui.ui.control.elicit_ui import watch_elicitations

        self._unsubscribe += watch_elicitations(app)  # MCP servers' questions
        self._unsubscribe.append(watch_interrupts(app))  # what still runs after an abort
        rt.requirement.subscribe(p.requirement_changed)
        app.agent.on_running(lambda _running: p.redraw_status())
        app.notices += app.theme_warnings
        while app.notices:
            await p.notice(app.notices.pop(0), "warning")
        p.queue_changed()
        p.gate_changed()
        app.input.cursor_blink = self._cursor_blink
        app.input.focus()
        self._runtime_worker = app.run_worker(self._hold_runtime(), name="runtime", exit_on_error=False)

    async def _hold_runtime(self) -> None:
        app = self._app
        self._close_event = anyio.Event()
        async with app.runtime:
            # start-up objects (modules, styles, widgets) move out of the collector's reach: a full
            # collection mid-stream would otherwise walk them all (50-70 ms, a visible hitch)
            gc.freeze()
            first, second, _third = gc.get_threshold()
            gc.set_threshold(first, second, 50)  # and run about 5x rarer (each walks what streaming kept)
            app.ready = True
            if self._prompt:
                app.agent.prompt(self._prompt)
            typed, self._typed = self._typed, []
            for text, lane in typed:  # typed on the first frame: sent as if now
                await on_send(app, PromptInput.Send(text, lane))
            if not self.quitting:
                await self._close_event.wait()

    async def shutdown(self) -> None:
        """Abort the run, close the runtime (kills jobs, closes the session)."""
        self.quitting = True
        if self._close_event is not None:
            self._close_event.set()
        if self._runtime_worker is not None:
            await self._runtime_worker.wait()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    def on_event(self, event: ev.Event) -> None:
        """Called synchronously from the agent's task: buffer and wake the drawer, never block."""
        self._events.append(event)
        self._news.set()
        if isinstance(event, URGENT):
            self._urgent.set()

    @property
    def drawn(self) -> bool:
        """Every event received so far is drawn (tests wait for it)."""
        return not self._events and not self._drawing

    async def _draw(self) -> None:
        """The drawing worker: draws what the buffer holds, batch after batch, until the app ends."""
        while True:
            await self._news.wait()
            wait = self._last_flush + FLUSH_GAP - time.monotonic()
            if wait > 0 and not self._urgent.is_set():
                with contextlib.suppress(TimeoutError):  # what comes meanwhile joins the batch
                    await asyncio.wait_for(self._urgent.wait(), wait)
            self._news.clear()
            self._urgent.clear()
            self._last_flush = time.monotonic()
            batch, self._events = self._events, []
            self._drawing = True
            try:
                if self._app.presenter is not None and self.alive():
                    await self._app.presenter.show(batch)
            finally:
                self._drawing = False
