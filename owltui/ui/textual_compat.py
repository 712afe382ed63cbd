"""The one module that works around Textual where it offers no public way; each workaround, and why
(``tests/ui/test_textual_compat.py`` fails when Textual changes what one relies on):

- ``install_alt_enter``: ESC CR (Alt+Enter from a terminal that sends Alt as Esc, tmux included)
  reads as ``alt+enter``. Textual's parser maps escape sequences to keys with its private table
  ``textual._ansi_sequences.ANSI_SEQUENCES_KEYS``, where ESC CR is missing: the Esc is dropped and a
  plain Enter reported (a follow-up sent as steering). Textual has no public way to add a sequence,
  so the entry is added to that table (never replacing one Textual has), a ``_KeyName`` standing in
  for the ``Keys`` member the parser expects (it reads ``.value``).
- ``follows_bottom``: whether an anchored widget still follows its bottom. Textual releases the
  anchor when the user scrolls away and takes the release back once they scroll to the bottom (or
  it scrolls to the end) but only keeps that in the private ``Widget._anchor_released``: the scroll
  position cannot tell, as the bottom moves away for a moment each time content grows.
- ``drop_exit_traceback``: an exception nothing caught reaches ``App._handle_exception`` (the one
  place Textual sees it; OwlApp overrides it to keep what was not sent), which queues a full-screen
  traceback with local variables in the private ``App._exit_renderables``, printed once the terminal
  is restored. OwlTUI writes the traceback to a log and prints one line instead, so the list is
  emptied.
- ``release_styles_caches``: Textual memoizes ``StylesCache.get_inner_outer`` (two styles made from
  two colours) with ``functools.lru_cache`` on the method, so the cache's keys hold the instance:
  up to 1,024 ``StylesCache`` objects, each with every line it rendered, outlive their widgets (a long
  turn mounts and drops blocks all the time: ~15 kB a round until the cache is full). The method is
  replaced by one memoized on the two colours alone, which is what it depends on.

Beside it, public facts only: ``alt_enter_distinct``, whether this terminal tells Alt+Enter apart
anyway (Textual turns on the kitty keyboard protocol, where the terminal has it Alt+Enter is its own
key; the footer names Ctrl+J where it may not be).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from textual._styles_cache import StylesCache
from textual.app import App
from textual.color import Color
from textual.style import Style
from textual.widget import Widget

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
    """ESC CR becomes ``alt+enter`` (see the module's docstring); calling it again changes nothing."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    table: dict[str, Any] = ANSI_SEQUENCES_KEYS  # type: ignore[assignment]
    table.setdefault("\x1b\r", (_KeyName("alt+enter"),))


TEXTUAL_INNER_OUTER = StylesCache.__dict__["get_inner_outer"]  # Textual's own (tests show it leaks)


@lru_cache(1024)
def _inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    return Style(background=base_background + background), Style(background=base_background)


def _get_inner_outer(_cache: StylesCache, base_background: Color, background: Color) -> tuple[Style, Style]:
    return _inner_outer(base_background, background)


def release_styles_caches() -> None:
    """A widget's ``StylesCache`` dies with it (see the module's docstring); calling it again changes
    nothing."""
    setattr(StylesCache, "get_inner_outer", _get_inner_outer)  # noqa: B010 - a method of Textual's class


def install_workarounds() -> None:
    """The app's two: ``install_alt_enter`` and ``release_styles_caches``."""
    install_alt_enter()
    release_styles_caches()


def follows_bottom(widget: Widget) -> bool:
    """``widget`` is anchored and the user has not scrolled away (see the module's docstring)."""
    released: bool = widget._anchor_released
    return widget.is_anchored and not released


def drop_exit_traceback(app: App[Any]) -> None:
    """Textual prints no traceback when ``app`` ends (see the module's docstring)."""
    renderables: list[Any] = app._exit_renderables
    renderables.clear()
