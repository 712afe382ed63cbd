"""``MainScreen``: the layout of the TUI (conversation, pause banner, queue panel, todo list,
completions, input, status bar, footer) and the screen's key bindings, which call the app's actions. Once
composed it asks its owner (the app, seen through ``ScreenOwner``) to set up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from owltui.session.commands.host import Host, PromptHistory
from owltui.session.commands.layer import Commands
from owltui.ui.widgets.conversation import ConversationView
from owltui.ui.widgets.pause_banner import PauseBanner, freezer_words
from owltui.ui.widgets.prompt_input import CompletionList, PromptInput
from owltui.ui.widgets.queue_panel import QueuePanel
from owltui.ui.widgets.status_bar import StatusBar
from owltui.ui.widgets.todo_panel import TOGGLE_KEY, TodoPanel


class FittingFooter(Footer):
    """The footer, shortened by whole items: the keys that do not fit beside the palette key are left
    out from the last one back (the bindings' order is their priority), never cut mid-word."""

    def __init__(self) -> None:
        super().__init__()
        self._widths: dict[int, int] = {}  # each key's width while shown

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    async def recompose(self) -> None:
        self._widths.clear()
        await super().recompose()
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        keys = [c for c in self.children if isinstance(c, FooterKey)]
        palette = [k for k in keys if k.has_class("-command-palette")]
        room = self.size.width - sum(k.outer_size.width for k in palette)
        for key in keys:
            if key.display and key.outer_size.width:
                self._widths[id(key)] = key.outer_size.width
        used = 0
        for key in (k for k in keys if not k.has_class("-command-palette")):
            used += self._widths.get(id(key), 0)
            key.display = used <= room


class ScreenOwner(Protocol):
    """What the main screen uses of the app."""

    runtime: Host
    commands: Commands
    clock: Callable[[], float]

    @property
    def input_history(self) -> PromptHistory: ...

    def paused_elapsed(self) -> float: ...

    def mention_source(self) -> Callable[[str], list[str] | None] | None: ...

    async def setup(self) -> None: ...


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
        Binding("pagedown", "app.scroll('down')", "Scroll down", show=False, priority=True, id="scroll_down"),
        Binding("ctrl+r", "app.history_search", "History", show=False, id="history_search"),
        Binding("ctrl+o", "app.toggle_tool", "Expand/collapse", show=False, id="toggle_tool"),
        Binding("f3", "app.focus_queue", "Queue", show=False, id="queue"),  # select queued messages
        Binding("ctrl+s", "app.steer_now", "Steer now", show=False, priority=True, id="steer_now"),
        Binding("alt+m,f6", "app.cycle_mode", "Mode", show=False, priority=True, id="mode"),
        Binding(TOGGLE_KEY, "toggle_todo", "Todo list", show=False, id="todo"),
    ]

    def __init__(self, app: ScreenOwner) -> None:
        super().__init__()
        self.conversation = ConversationView(id="conversation")
        host = app.runtime
        self.banner = PauseBanner(
            host.gate, app.paused_elapsed, id="banner", frozen=lambda: freezer_words(host)
        )
        self.queue_panel = QueuePanel(id="queue")
        self.todo_panel = TodoPanel(id="todo")
        self.completions = CompletionList(id="completions")
        self.input = PromptInput(
            self.completions,
            complete=app.commands.complete,
            mentions=app.mention_source(),
            input_history=app.input_history,
            id="input",
        )
        self.status = StatusBar(id="status", clock=app.clock)
        self._owl = app

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.banner
        yield self.queue_panel
        yield self.todo_panel
        yield self.completions
        yield self.input
        yield self.status
        yield FittingFooter()

    async def on_mount(self) -> None:
        await self._owl.setup()

    def action_toggle_todo(self) -> None:
        self.todo_panel.toggle()
