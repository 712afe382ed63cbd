"""What one custom command's run may use: ``allowed-tools`` and ``model``.

``allowed-tools`` entries are OwlTUI tool names (``read``, ``bash``, ``mcp__server__tool``) or
Claude Code's (``Read``, ``Bash``, ``Glob``, ...), mapped to OwlTUI's; ``Bash(git status:*)`` allows
commands starting with those words, ``Bash(npm test)`` exactly that command. A bash command is
parsed as the permission rules parse it: each simple command in it (``a && b``, a pipeline) must be
allowed, and one the parser cannot see through is refused. ``read_result`` (rereading a stored
result) is always allowed. While the run goes, the loop's generic refusal checks refuse any other
call with a result that says why; the permission checks still judge the calls allowed here.

``model`` switches the model as ``/model`` does for that run only; the model before it comes back
when the run ends (also after an abort or an error).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from owltui.agent.agent import Agent
from owltui.agent.hooks import Refusal
from owltui.agent.messages import ToolCall
from owltui.agent.state import RunState

log = logging.getLogger(__name__)

CLAUDE_NAMES = {
    "bash": "bash",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "grep": "grep",
    "glob": "find",
    "ls": "ls",
    "task": "task",
    "todowrite": "todo",
    "webfetch": "fetch",
}
ALWAYS_ALLOWED = frozenset({"read_result"})


class BadRule(ValueError):
    """An ``allowed-tools`` entry this reader does not understand."""


@dataclass(frozen=True)
class ToolRule:
    """One allowed tool; for ``bash`` optionally the words a command must be (``prefix``: start with)."""

    tool: str
    words: tuple[str, ...] | None = None
    prefix: bool = False

    @property
    def shown(self) -> str:
        if self.words is None:
            return self.tool
        return f"{self.tool}({' '.join(self.words)}{' …' if self.prefix else ''})"

    def matches(self, words: tuple[str, ...]) -> bool:
        if self.words is None:
            return True
        return words[: len(self.words)] == self.words if self.prefix else words == self.words


def parse_rule(text: str) -> ToolRule:
    text = text.strip()
    name, paren, spec = text.partition("(")
    name = name.strip()
    tool = CLAUDE_NAMES.get(name.lower(), name)
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise BadRule(f"{text!r} is not a tool name")
    if not paren:
        return ToolRule(tool)
    if not spec.endswith(")") or not spec[:-1].strip():
        raise BadRule(f"{text!r}: expected NAME or NAME(pattern)")
    if tool != "bash":
        raise BadRule(f"{text!r}: only Bash takes a pattern here")
    pattern, prefix = spec[:-1].strip(), False
    for tail in (":*", " *"):
        if pattern.endswith(tail):
            pattern, prefix = pattern[: -len(tail)].strip(), True
    from owltui.session.custom_commands.template import split_arguments

    words = tuple(split_arguments(pattern))
    if not words:
        raise BadRule(f"{text!r}: the pattern names no command")
    return ToolRule(tool, words, prefix)


def parse_rules(entries: Sequence[str]) -> tuple[ToolRule, ...]:
    return tuple(parse_rule(e) for e in entries)


def allowed(rules: Sequence[ToolRule], call: ToolCall) -> bool:
    if call.name in ALWAYS_ALLOWED:
        return True
    # edit and apply_patch are one tool under two names (a session offers one of them)
    mine = [r for r in rules if r.tool == call.name or {r.tool, call.name} == {"edit", "apply_patch"}]
    if not mine:
        return False
    if call.name != "bash" or any(r.words is None for r in mine):
        return True
    command = call.arguments.get("command")
    if not isinstance(command, str):
        return False
    from owltui.policy.shell.parse import analyze

    found = analyze(command)
    if found.error or found.unsafe or found.opaque:
        return False
    simple = [*found.commands, *found.possible]
    for cmd in simple:
        if not all(w.static for w in cmd.words):
            return False
        words = tuple(w.value for w in cmd.words)
        if not any(r.matches(words) for r in mine):
            return False
    return bool(simple)


def refusal(name: str, rules: Sequence[ToolRule]) -> Refusal:
    shown = ", ".join(r.shown for r in rules) or "no tools"

    async def check(_state: RunState, call: ToolCall) -> str | None:
        if allowed(rules, call):
            return None
        return (
            f"Refused: /{name} allows only {shown} (its allowed-tools); this `{call.name}` call is "
            "not one of them. Do the task with those tools, or say what you could not do."
        )

    return check


class RunScope:
    """Gives one agent's next run a command's refusal check and model, and takes them back when that
    run ends. One per agent (``for_agent``)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._undo: list[Callable[[], None]] = []
        self._started = False
        agent.on_running(self._on_running)

    def restrict(self, check: Refusal) -> None:
        cfg = self.agent.config
        cfg.refusals = (*cfg.refusals, check)

        def undo() -> None:
            cfg.refusals = tuple(r for r in cfg.refusals if r is not check)

        self._undo.append(undo)

    def on_release(self, fn: Callable[[], None]) -> None:
        self._undo.append(fn)

    def release(self) -> None:
        undo, self._undo, self._started = self._undo, [], False
        for fn in reversed(undo):
            try:
                fn()
            except Exception:  # a model that cannot come back must not leave the refusal in place
                log.exception("could not undo a custom command's settings")

    def _on_running(self, running: bool) -> None:
        if not self._undo:
            return
        if running:
            self._started = True
        elif self._started:
            self.release()


_SCOPES: weakref.WeakKeyDictionary[Agent, RunScope] = weakref.WeakKeyDictionary()


def for_agent(agent: Agent) -> RunScope:
    scope = _SCOPES.get(agent)
    if scope is None:
        scope = _SCOPES[agent] = RunScope(agent)
    return scope
