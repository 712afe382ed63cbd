"""The ``/rewind`` picker in two steps: which checkpoint (its label: time, files changed, prompt,
what it left out; the note under the list says what no checkpoint restores), then what to restore —
files and conversation, files only, or the conversation only. The choice runs
``/rewind ID both|files|conversation`` (whose reply redraws the conversation when it forks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from owltui.ui.widgets.picker import PickerScreen, pick_options

if TYPE_CHECKING:
    from owltui.session.commands.spec import Pick

WHAT_OPTIONS = [
    ("both", "files and conversation"),
    ("files", "files only (the conversation stays)"),
    ("conversation", "conversation only (the files stay as they are)"),
]


def pick_rewind(app: Any, pick: Pick) -> None:
    """Push the two pickers for a ``Pick`` from ``/rewind``."""
    options = pick_options(pick)
    labelled = dict(options)

    def what(checkpoint: str | None) -> None:
        if not checkpoint:
            return

        def chosen(restore: str | None) -> None:
            if restore:
                app.call_later(app.run_line, f"/{pick.command} {checkpoint} {restore}")

        title = f"Restore what, to before {labelled.get(checkpoint, checkpoint)}?"
        app.push_screen(PickerScreen(title, WHAT_OPTIONS), chosen)

    app.push_screen(PickerScreen(pick.title, options, highlight=pick.highlight, note=pick.note), what)
