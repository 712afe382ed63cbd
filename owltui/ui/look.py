"""The look of the main layout's parts, shared by the real widgets and the start-up screen (``boot``)
that stands in for them until the runtime is built: the same rules, so the hand-over does not jump.
Light on purpose: nothing but strings."""

from __future__ import annotations

CONVERSATION = "height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1;"
WELCOME = "margin: 0; padding: 0 1; color: $text-muted;"
INPUT = "height: auto; min-height: 3; max-height: 12; margin: 0 1; border: round $primary 60%;"
INPUT_FOCUS = "border: round $primary;"
STATUS = "height: 1; padding: 0 1; background: $panel; color: $text-muted;"


def rules(selector: str, body: str) -> str:
    """One CSS rule: ``selector { body }``."""
    return f"{selector} {{ {body} }}\n"
