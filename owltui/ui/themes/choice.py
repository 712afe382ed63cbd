"""Which theme the app shows: loaded themes registered on the app and the wanted one chosen, an
unknown name falling back to ``DEFAULT_THEME`` with a warning; and the user's pick saved
(``save_choices``). Textual and ``loader`` only: the first frame uses it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.theme import Theme

from owltui.ui.themes.loader import ThemeLoad

DEFAULT_THEME = "owl-dark"


def use_themes(app: App[Any], loaded: ThemeLoad, wanted: str | None) -> list[str]:
    """Register ``loaded``'s themes on ``app`` and show ``wanted`` (None: the default); returns the
    warnings to show (bad theme files, an unknown name)."""
    warnings = list(loaded.warnings)
    for theme in loaded.themes.values():
        app.register_theme(theme)
    name = wanted or DEFAULT_THEME
    if name not in app.available_themes:
        warnings.append(f"unknown theme '{name}', using {DEFAULT_THEME}")
        name = DEFAULT_THEME if DEFAULT_THEME in app.available_themes else "textual-dark"
    if name != app.theme:
        app.theme = name
    return warnings


def save_choices(app: App[Any], save: Callable[[str], None]) -> None:
    """From now on, the name of a theme the user picks is saved with ``save``; a failure is a warning."""

    def changed(theme: Theme) -> None:
        try:
            save(theme.name)
        except Exception as exc:
            app.notify(f"could not save the theme: {exc}", severity="warning")

    app.theme_changed_signal.subscribe(app, changed)
