"""Slash commands: the registry, parsing, and completion (shared by the TUI and plain mode)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    args: str
    help: str


COMMANDS: tuple[Command, ...] = (
    Command("pause", "", "pause every agent before its next model call or tool start"),
    Command("resume", "", "open the pause gate and say how long it was closed"),
    Command("require", "[TOOL [reason]]", "the next turn must call TOOL (no argument: pick one)"),
    Command("model", "[PROVIDER:MODEL]", "show or switch the model"),
    Command("sessions", "", "list the saved sessions of this directory"),
    Command("new", "", "start a fresh session"),
    Command("compact", "", "summarize the conversation to free context"),
    Command("theme", "[NAME]", "pick or set the theme (remembered)"),
    Command("help", "", "keys and commands"),
    Command("quit", "", "leave OwlTUI"),
)


def parse(text: str) -> tuple[str, str] | None:
    """``"/require bash  why"`` -> ``("require", "bash  why")``; None when it is not a command."""
    text = text.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, rest = text[1:].partition(" ")
    return name.lower(), rest.strip()


def complete(text: str) -> list[Command]:
    """Commands matching a partly typed ``/na`` (nothing once an argument has started)."""
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    stem = text[1:].lower()
    return [c for c in COMMANDS if c.name.startswith(stem)]


def help_text() -> str:
    lines = ["Commands:"]
    lines += [f"  /{c.name} {c.args}".rstrip().ljust(34) + c.help for c in COMMANDS]
    return "\n".join(lines)
