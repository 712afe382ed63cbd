"""The TUI as the command layer sees it: a ``Frontend`` that offers themes, and the keys for /help."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App

KEYS_HELP = """Keys:
  Enter            send (a prompt when idle, steering while the agent works)
  Alt+Enter/Ctrl+J send as a follow-up (delivered when the agent would stop); Alt+Enter where the
                   terminal tells it apart (the footer names the key that works here)
  Shift+Enter/Ctrl+N, or \\ then Enter   newline
  Up / Down        on the first / last line: the input history of this directory;  Ctrl+R search it
  @ then a name    pick a file to attach (Tab or Enter takes it);  /  commands
  Alt+Up           take the last queued message back into the editor
  Esc / Ctrl+C     abort the run, a !command or /init (queued messages stay queued)
  F2               pause / resume every agent (the process-wide gate)
  Alt+M, F6        the next permission mode: ask → edits → plan (/plan, /mode MODE); on a plan:
                   a accept · e accept into edits · y accept into yolo · r refine · n / Esc reject
  Ctrl+T           require a tool for the next turn (picker)
  Ctrl+O           expand / collapse the last tool block (Shift+Tab walks the blocks, Enter toggles)
  Ctrl+G           go to the waiting approval; there y / a / n allow once / always / deny,
                   Esc goes back (letters typed in the input are never an answer)
  /allow /always /deny [CALL_ID]   answer the oldest waiting approval (or that one)
  PgUp / PgDn      scroll;  Ctrl+End or F4 follow the bottom again
  Ctrl+C           (idle) clear the input; on an empty input twice quits.   Ctrl+D on an empty input quits
  Ctrl+P           the command palette (F1 when [keys] gives Ctrl+P to something else)"""


class TuiFront:
    """``Frontend`` and ``Themes`` for the command layer, over the Textual app."""

    label = "the TUI"
    capabilities = frozenset({"themes"})
    abort_key = "Esc"
    keys_help = KEYS_HELP

    def __init__(self, app: App[Any], quit: Callable[[], Awaitable[None]]) -> None:
        self._app = app
        self._quit = quit
        self.themes = self

    def names(self) -> list[str]:
        return list(self._app.available_themes)

    @property
    def current(self) -> str:
        return self._app.theme

    def use(self, name: str) -> None:
        self._app.theme = name

    def quit(self) -> None:
        self._app.call_later(self._quit)
