"""Alt+Enter across terminals: whether this terminal tells it apart (the footer names Ctrl+J where it
may not), and ``install_alt_enter``, which makes ESC CR (Alt sent as Esc, tmux included) read as
``alt+enter`` instead of a plain Enter. Textual turns on the kitty keyboard protocol, where the
terminal has it Alt+Enter is its own key."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

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
    return (
        env.get("TERM", "") in KITTY_TERMS
        or env.get("TERM_PROGRAM", "") in KITTY_PROGRAMS
        or any(env.get(m) for m in KITTY_MARKERS)
    )


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
