"""An MCP prompt as a slash command's words: its name ``mcp__SERVER__PROMPT``, its usage, and the
typed arguments bound to the prompt's declared ones - ``key=value`` words by name, the other words
in the declared order (quotes group words: ``/mcp__s__p "New York" state=NY``); a required argument
left out, an unknown name or one word too many is a ``PromptArgsError`` saying which."""

from __future__ import annotations

import shlex
from typing import Any

from owltui.policy.permissions.mcp_names import tool_name


class PromptArgsError(ValueError):
    """The typed arguments do not fit the prompt's declared ones (the message says how)."""


def command_name(server_key: str, prompt: str) -> str:
    """``mcp__SERVER__PROMPT``, named like the server's tools."""
    return tool_name(server_key, prompt)


def declared(prompt: Any) -> list[Any]:
    return list(getattr(prompt, "arguments", None) or [])


def usage(prompt: Any) -> str:
    """``CITY [STATE]``: required arguments bare, optional ones in brackets."""
    words = [a.name.upper() if a.required else f"[{a.name.upper()}]" for a in declared(prompt)]
    return " ".join(words)


def bind(prompt: Any, typed: str) -> dict[str, str]:
    """The prompt's arguments from ``typed``."""
    args = declared(prompt)
    names = [a.name for a in args]
    try:
        words = shlex.split(typed)
    except ValueError as exc:
        raise PromptArgsError(f"cannot read the arguments: {exc}") from None
    out: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in names:
            out[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in out]
    if len(positional) > len(free):
        if not free:
            raise PromptArgsError(f"it takes {_takes(names)}; {positional[len(free)]!r} is one too many")
        positional[len(free) - 1 :] = [" ".join(positional[len(free) - 1 :])]  # the last takes the rest
    out.update(zip(free, positional, strict=False))
    missing = [a.name for a in args if a.required and not out.get(a.name)]
    if missing:
        raise PromptArgsError(
            f"missing required argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}"
        )
    return out


def _takes(names: list[str]) -> str:
    return f"the arguments {', '.join(names)}" if names else "no arguments"
