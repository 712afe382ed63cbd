"""What print mode tells about calls that did not run: one stderr line for every refused or skipped
call, naming the tool, its target and why, and whether the run ended with refusals the answer may
depend on (then print mode exits ``EXIT_REFUSED`` and its last stderr line says how many).

A refusal counts until it is made good: a later call of the same tool on the same target (its
``path``, ``command`` or ``url``; otherwise its whole arguments) that ends ``ok`` clears every
earlier refusal of it, and so does an earlier ``ok`` call with exactly the same arguments (a repeat
refused as a repeat: the work was done). Skipped calls (the run ended, the model's response failed)
get their line but do not count: the run that skipped them has already failed. Subagents' calls
count like the main agent's, with the subagent named.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from owltui.agent.events import Event, MessageEnd, ToolEnd
from owltui.text.sanitize import sanitize

EXIT_REFUSED = 3
_TARGET_KEYS = ("path", "command", "url")
_PREFIXES = ("Refused: ", "Not executed: ")
_MAX_WHY = 400
_MAX_TARGET = 80


def call_target(arguments: dict[str, Any]) -> str:
    """What a call acts on: its path, command or URL (empty when it has none of them)."""
    for key in _TARGET_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(sanitize(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def refusal_line(status: str, name: str, arguments: dict[str, Any], output: str, agent: str | None) -> str:
    """``owltui: refused edit (src/a.py): edit needs approval …`` — the tool, its target and why."""
    why = output.strip()
    for prefix in _PREFIXES:
        if why.startswith(prefix):
            why = why[len(prefix) :]
    target = call_target(arguments)
    what = _one_line(name, _MAX_TARGET) + (f" ({_one_line(target, _MAX_TARGET)})" if target else "")
    by = f" [subagent {_one_line(agent, _MAX_TARGET)}]" if agent else ""
    return f"owltui: {status} {what}{by}: {_one_line(why, _MAX_WHY) or 'no reason given'}"


def refusal_summary(count: int) -> str:
    """The last stderr line of a run that ended with ``count`` refusals standing."""
    calls = "1 call was" if count == 1 else f"{count} calls were"
    return f"owltui: {calls} refused; the answer may describe work that was not done"


def _same_call(name: str, arguments: dict[str, Any]) -> str:
    return name + "\0" + json.dumps(arguments, sort_keys=True, default=str)


def _same_target(name: str, arguments: dict[str, Any]) -> str:
    target = call_target(arguments)
    return name + "\0" + target if target else _same_call(name, arguments)


class RefusalLog:
    """Listens to the run's events; ``say`` gets each refused or skipped call's line as it ends."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self._calls: dict[tuple[str | None, str], dict[str, Any]] = {}  # (agent, call id) -> arguments
        self._standing: dict[str, int] = {}  # same-target key -> refusals not made good
        self._done: set[str] = set()  # same-call keys of calls that ended ok

    @property
    def standing(self) -> int:
        """Refusals not made good by a later successful call on the same target."""
        return sum(self._standing.values())

    def __call__(self, ev: Event) -> None:
        if isinstance(ev, MessageEnd):
            for call in ev.tool_calls:
                self._calls[(ev.agent, call.id)] = call.arguments
        elif isinstance(ev, ToolEnd):
            self._ended(ev)

    def _ended(self, ev: ToolEnd) -> None:
        arguments = self._calls.pop((ev.agent, ev.call_id), {})
        target = _same_target(ev.name, arguments)
        if ev.status == "ok":
            self._standing.pop(target, None)
            self._done.add(_same_call(ev.name, arguments))
            return
        if ev.status not in ("refused", "skipped"):
            return
        self.say(refusal_line(ev.status, ev.name, arguments, ev.output, ev.agent))
        if ev.status == "refused" and _same_call(ev.name, arguments) not in self._done:
            self._standing[target] = self._standing.get(target, 0) + 1
