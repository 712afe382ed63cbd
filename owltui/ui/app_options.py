"""``AppOptions``: what an ``OwlApp`` is given beside its runtime (or its ``Boot``): the CLI prompt,
the theme, the ``[keys]`` map, the conversation's limits, and the clocks and terminal facts tests fix.
Standard library only: the app is built with it before the first frame."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class AppOptions:
    """How one ``OwlApp`` runs; every field has the CLI's default."""

    prompt: str | None = None
    """Sent once the runtime is open (before the lines typed on the first frame)."""
    theme: str | None = None
    """The theme to show (None: ``DEFAULT_THEME``); a ``Started`` may name the configured one."""
    save_theme: Callable[[str], None] | None = None
    """Called with the name of a theme the user picks (a ``Started`` may bring its own)."""
    keymap: Mapping[str, str] = field(default_factory=dict)
    """``[keys]`` (binding id -> keys) for an app given its runtime; a ``Started`` brings its own."""
    theme_dirs: Sequence[Path] | None = None
    """Where theme files are read (None: the package's, then the user's)."""
    max_blocks: int | None = None
    """Blocks the conversation keeps before pruning the oldest (None: the widget's default)."""
    cursor_blink: bool = True
    notices: Sequence[str] = ()
    """Start-up warnings (the sandbox's notes...), shown once the main screen is up."""
    elapsed: Callable[[], float] | None = None
    """Seconds the pause banner shows (None: since the gate was paused)."""
    clock: Callable[[], float] = time.monotonic
    """The status bar's run timer."""
    alt_enter: bool | None = None
    """Whether the terminal tells Alt+Enter apart (None: guessed from the environment)."""
