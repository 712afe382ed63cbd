"""``OwlAppApi``: what the app's helper modules (``lifecycle``, ``transcript``, ``input_routing``,
``actions``) use of ``OwlApp`` — a Protocol, so that they never import the app module."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import Worker

from owltui.agent.agent import Agent
from owltui.session.commands.host import Host, PromptHistory
from owltui.session.commands.layer import Commands
from owltui.session.commands.spec import Reply
from owltui.ui.control.presenter import Presenter
from owltui.ui.widgets.conversation import ConversationView
from owltui.ui.widgets.main_screen import MainScreen
from owltui.ui.widgets.prompt_input import PromptInput


class OwlAppApi(Protocol):
    runtime: Host
    agent: Agent  # the host's agent
    commands: Commands
    presenter: Presenter | None
    ready: bool
    theme_warnings: list[str]
    notices: list[str]  # warnings waiting to be shown (start-up) or printed (after quitting)
    last_ctrl_c: float

    @property
    def main(self) -> MainScreen: ...

    @property
    def conversation(self) -> ConversationView: ...

    @property
    def input(self) -> PromptInput: ...

    @property
    def input_history(self) -> PromptHistory: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def screen(self) -> Screen[Any]: ...

    @property
    def is_running(self) -> bool: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def post_message(self, message: Message) -> bool: ...

    def push_screen(self, screen: Screen[Any], callback: Any = None) -> Any: ...

    def notify(self, message: str, *, timeout: float | None = None) -> None: ...

    def refresh_bindings(self) -> None: ...

    def set_keymap(self, keymap: dict[str, str]) -> None: ...

    def run_worker(
        self, work: Coroutine[None, None, None], *, name: str | None = "", exit_on_error: bool = True
    ) -> Worker[None]: ...

    async def action_quit(self) -> None: ...

    async def run_line(self, text: str) -> None: ...

    async def show(self, reply: Reply) -> None: ...

    def show_later(self, reply: Reply) -> None: ...

    def finish(self, then: Awaitable[Reply]) -> Any: ...

    def busy(self) -> bool: ...
