"""What hooks are configured: the settings shape (Claude Code's ``hooks`` object), where it comes from.

OwlTUI's config takes the same shape as Claude Code's settings files, in TOML::

    [[hooks.PreToolUse]]
    matcher = "bash"
    hooks = [{ type = "command", command = "~/bin/check.sh", timeout = 30 }]

``load_hooks`` gathers the user's table (``config.toml``), the project's ``.owltui/hooks.toml`` (the
same ``[[hooks.EVENT]]`` tables, OwlTUI's names; a project file, so its hooks wait for approval),
then, with ``hooks_from_claude = true``, ``~/.claude/settings.json``, the project's
``.claude/settings.json`` and ``.claude/settings.local.json``. A malformed file is one warning line
and contributes nothing; the other files still count.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

EventName = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
]
EVENTS: tuple[str, ...] = EventName.__args__  # type: ignore[attr-defined]
TOOL_EVENTS = ("PreToolUse", "PostToolUse")  # the matcher is a tool name pattern
DEFAULT_TIMEOUT = 60.0
Dialect = Literal["owltui", "claude"]  # which tool names and arguments the hook sees


class HookCommand(BaseModel):
    model_config = ConfigDict(extra="ignore")  # Claude Code's newer keys (async, statusMessage) are ignored
    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float | None = Field(None, gt=0)


class HookGroup(BaseModel):
    model_config = ConfigDict(extra="ignore")
    matcher: str = ""
    hooks: list[HookCommand] = Field(default_factory=list)


class HooksTable(BaseModel):
    """``{"PreToolUse": [{"matcher": ..., "hooks": [...]}], ...}``; unknown events are errors."""

    model_config = ConfigDict(extra="forbid")
    PreToolUse: list[HookGroup] = Field(default_factory=list)
    PostToolUse: list[HookGroup] = Field(default_factory=list)
    UserPromptSubmit: list[HookGroup] = Field(default_factory=list)
    Stop: list[HookGroup] = Field(default_factory=list)
    SubagentStop: list[HookGroup] = Field(default_factory=list)
    SessionStart: list[HookGroup] = Field(default_factory=list)
    SessionEnd: list[HookGroup] = Field(default_factory=list)
    PreCompact: list[HookGroup] = Field(default_factory=list)
    Notification: list[HookGroup] = Field(default_factory=list)


@dataclass(frozen=True)
class Source:
    """Where hooks were read: the file, the names they see, and whether the project defines them
    (a project's hooks run only once the user approved them)."""

    path: Path
    dialect: Dialect
    project: bool


@dataclass(frozen=True)
class ConfiguredHook:
    event: str
    matcher: str
    command: str
    timeout: float
    source: Source

    def matches(self, subject: str | None) -> bool:
        """Claude Code's rule: empty or ``*`` matches everything, else a regular expression that
        must match the whole name (``Edit|Write``, ``mcp__github__.*``); a bad pattern matches only
        itself literally."""
        if subject is None or self.matcher in ("", "*"):
            return True
        try:
            return re.fullmatch(self.matcher, subject) is not None
        except re.error:
            return self.matcher == subject


def _flatten(table: HooksTable, source: Source) -> list[ConfiguredHook]:
    found: list[ConfiguredHook] = []
    for event in EVENTS:
        for group in getattr(table, event):
            for cmd in group.hooks:
                found.append(
                    ConfiguredHook(event, group.matcher, cmd.command, cmd.timeout or DEFAULT_TIMEOUT, source)
                )
    return found


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(["hooks", *(str(p) for p in first["loc"])])
    return f"{where}: {first['msg']}"


def parse_table(data: Any, source: Source, warn: Callable[[str], None]) -> list[ConfiguredHook]:
    """The hooks of one ``hooks`` object; a bad one is a warning and nothing."""
    try:
        return _flatten(HooksTable.model_validate(data), source)
    except ValidationError as exc:
        warn(f"hooks in {source.path} ignored: {_problem(exc)}")
        return []


def _read(path: Path, loads: Callable[[str], Any], kind: str, warn: Callable[[str], None]) -> Any:
    """The file parsed (None when missing, or unreadable: then one warning)."""
    try:
        return loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warn(f"hooks in {path} ignored: not readable {kind} ({exc})")
        return None


def claude_file(path: Path, project: bool, warn: Callable[[str], None]) -> list[ConfiguredHook]:
    """The ``hooks`` of one Claude Code settings file (missing file or key: none)."""
    data = _read(path, json.loads, "JSON", warn)
    if not isinstance(data, dict) or "hooks" not in data:
        return []
    return parse_table(data["hooks"], Source(path, "claude", project), warn)


PROJECT_FILE = ".owltui/hooks.toml"  # the project's hooks in OwlTUI's own shape


def project_file(workspace: Path, warn: Callable[[str], None]) -> list[ConfiguredHook]:
    """The ``hooks`` tables of the project's ``.owltui/hooks.toml`` (missing: none)."""
    path = workspace / PROJECT_FILE
    data = _read(path, tomllib.loads, "TOML", warn)
    if data is None:
        return []
    unknown = sorted(set(data) - {"hooks"})
    if unknown:
        warn(f"{path}: only hooks tables are read here, not {', '.join(unknown)}")
    return parse_table(data.get("hooks", {}), Source(path, "owltui", True), warn)


def claude_files(workspace: Path, home: Path) -> list[tuple[Path, bool]]:
    """The Claude Code settings files read with ``hooks_from_claude`` (path, defined by the project)."""
    return [
        (home / ".claude" / "settings.json", False),
        (workspace / ".claude" / "settings.json", True),
        (workspace / ".claude" / "settings.local.json", True),
    ]


def load_hooks(
    own: Mapping[str, Any],
    own_path: Path,
    *,
    from_claude: bool,
    workspace: Path,
    home: Path,
    warn: Callable[[str], None],
) -> list[ConfiguredHook]:
    """Every configured hook: the user's config, the project's file, then the Claude Code files."""
    found = parse_table(dict(own), Source(own_path, "owltui", False), warn) if own else []
    found += project_file(workspace, warn)
    if from_claude:
        for path, project in claude_files(workspace, home):
            if project and workspace.resolve() == home.resolve() and path.name == "settings.json":
                continue  # started in the home directory: that file is the user's, read once
            found.extend(claude_file(path, project, warn))
    return found
