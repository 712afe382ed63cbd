"""Permission modes and rules: which tool calls run freely, which ask the user, which are refused.

Modes: ``ask`` (default; reading is free, write/edit/bash ask), ``edits`` (writes and edits inside
the workspace are free too), ``yolo`` (``--yes``: everything runs) and ``read-only`` (write, edit,
bash refused). Rules live in ``<workspace>/.owltui/permissions.toml``::

    [allow]
    bash = ["git status*", "pytest*"]
    write = ["src/**"]
    [deny]
    bash = ["rm -rf*"]

Patterns are shell globs (``*`` also crosses ``/``) over the command (bash) or the workspace-relative
path (write, edit); ``"*"`` matches any call of that tool. Deny wins over everything, ``--yes``
included. An "always" answer is saved as an allow rule. Writes outside the workspace always ask
(except in yolo mode), whatever the allow rules say.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import tomli_w

from owltui.agent.messages import ToolCall

from .base import is_inside, resolve_path
from .fs import atomic_write

log = logging.getLogger(__name__)

Mode = Literal["ask", "edits", "yolo", "read-only"]
MODES: tuple[str, ...] = get_args(Mode)
Answer = Literal["allow", "deny", "always"]
Ask = Callable[[ToolCall, str], Awaitable[Answer]]

RULES_FILE = ".owltui/permissions.toml"
FREE_TOOLS = frozenset({"read", "ls", "grep", "find", "read_result", "job_output", "job_kill"})
EDIT_TOOLS = frozenset({"write", "edit"})
_SPLIT = re.compile(r"\|\||&&|[;|&\n]")
_UNSAFE = ("$(", "`", ">", "<(")


@dataclass
class Rules:
    allow: dict[str, list[str]] = field(default_factory=dict)
    deny: dict[str, list[str]] = field(default_factory=dict)


def _patterns(table: Any) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        return {}
    out: dict[str, list[str]] = {}
    for tool, value in table.items():
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        out[str(tool)] = [str(p) for p in items]
    return out


class PermissionPolicy:
    """Decides each tool call: ``await check(call, read_only)`` is None to run it, else the refusal."""

    def __init__(self, workspace: Path, mode: Mode | str = "ask", ask: Ask | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
        self.workspace = workspace
        self.mode: str = mode
        self.ask = ask

    @property
    def rules_path(self) -> Path:
        return self.workspace / RULES_FILE

    def load_rules(self) -> Rules:
        try:
            data = tomllib.loads(self.rules_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Rules()
        except (OSError, tomllib.TOMLDecodeError) as exc:
            log.warning("ignoring %s: %s", self.rules_path, exc)
            return Rules()
        return Rules(_patterns(data.get("allow")), _patterns(data.get("deny")))

    def save_rule(self, tool: str, pattern: str) -> None:
        """Add ``pattern`` to ``[allow] tool`` (keeping whatever else the file holds)."""
        try:
            data: dict[str, Any] = tomllib.loads(self.rules_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, tomllib.TOMLDecodeError) as exc:
            log.warning("not saving a rule to unreadable %s: %s", self.rules_path, exc)
            return
        allow = data.setdefault("allow", {})
        patterns = allow.setdefault(tool, [])
        if isinstance(patterns, str):
            patterns = allow[tool] = [patterns]
        if pattern not in patterns:
            patterns.append(pattern)
        atomic_write(self.rules_path, tomli_w.dumps(data).encode("utf-8"))

    def _target(self, call: ToolCall) -> tuple[str | None, bool]:
        """The subject rules match (command or relative path) and whether it lies outside."""
        if call.name == "bash":
            command = call.arguments.get("command")
            return (command if isinstance(command, str) else None), False
        path = call.arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            return None, False
        resolved = resolve_path(self.workspace, path)
        if not is_inside(self.workspace, resolved):
            return str(resolved), True
        return resolved.relative_to(self.workspace).as_posix(), False

    @staticmethod
    def _match(patterns: list[str], subject: str | None, bash: bool, every: bool) -> str | None:
        """The first pattern matching; for bash each part of a compound command is checked (all
        parts must match for ``every``, any part for a deny)."""
        if "*" in patterns:
            return "*"
        if subject is None:
            return None
        subjects = [subject.strip()]
        if bash:
            parts = [p.strip() for p in _SPLIT.split(subject) if p.strip()]
            if every:
                if any(u in subject for u in _UNSAFE):
                    return None
                subjects = parts or subjects
            else:
                subjects += parts
        found = None
        for item in subjects:
            hit = next((p for p in patterns if fnmatch.fnmatchcase(item, p)), None)
            if hit is None and every:
                return None
            found = found or hit
            if hit is not None and not every:
                return hit
        return found

    def _reason(self, call: ToolCall, subject: str | None, outside: bool) -> str:
        if call.name == "bash":
            return f"run `{subject}`"
        if outside:
            return f"{call.name} outside the workspace: {subject}"
        return f"{call.name} {subject}" if subject else f"run {call.name}"

    async def check(self, call: ToolCall, read_only: bool) -> str | None:
        free = read_only or call.name in FREE_TOOLS
        if self.mode == "read-only" and not free:
            return f"Refused: OwlTUI is in read-only mode, so {call.name} cannot run."
        subject, outside = self._target(call)
        rules = self.load_rules()
        bash = call.name == "bash"
        denied = self._match(rules.deny.get(call.name, []), subject, bash, every=False)
        if denied is not None:
            return f"Refused: the deny rule {call.name} = {denied!r} in {RULES_FILE} blocks this call."
        if free or self.mode == "yolo":
            return None
        if not outside:
            if self._match(rules.allow.get(call.name, []), subject, bash, every=True) is not None:
                return None
            if self.mode == "edits" and call.name in EDIT_TOOLS:
                return None
        reason = self._reason(call, subject, outside)
        if self.ask is None:
            example = f'[allow] {call.name} = ["{subject if subject and not outside else "*"}"]'
            return (
                f"Refused: {call.name} needs approval ({reason}) and nobody can approve it here. "
                f"Run with --yes, or allow it with a rule in {RULES_FILE}, e.g. {example}."
            )
        answer = await self.ask(call, reason)
        if answer == "deny":
            return f"Refused: the user denied this call ({reason})."
        if answer == "always" and not outside:
            try:
                self.save_rule(call.name, subject if subject is not None else "*")
            except OSError as exc:
                log.warning("could not save the permission rule: %s", exc)
        return None
