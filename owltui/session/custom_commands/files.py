"""Finding and reading custom command files: ``NAME.md`` under the workspace's ``.owltui/commands/``
and the user config dir's ``commands/`` (and Claude Code's ``.claude/commands/`` and
``~/.claude/commands/`` with ``hooks_from_claude = true``); a subfolder namespaces its files
(``git/review.md`` is ``/git:review``). A project's command wins over the user's of the same name.

A file is an optional frontmatter block (``---`` lines around ``key: value`` lines: ``description``,
``argument-hint``, ``model``, ``allowed-tools`` - a comma-separated string, a ``[a, b]`` list or
``- item`` lines; a bracketed value of another key, such as ``argument-hint: [file]``, is the text
itself) and the template after it. The reader is a small strict subset of YAML (no PyYAML
here): a file it cannot read, or whose fields do not validate, is one warning line naming the file
and is left out; the other files still load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

Source = Literal["project", "user"]
MAX_FILE_BYTES = 256 * 1024
NAME_PART = re.compile(r"[a-z0-9][a-z0-9_.-]*")  # one file or folder name of a command, lowercased
# Claude Code keys a command file may carry that have no meaning here (a command is never
# started by the model): accepted and ignored so a copied file still loads
IGNORED_KEYS = frozenset({"disable-model-invocation", "name"})


class Frontmatter(BaseModel):
    """A command file's fields."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    description: str = ""
    argument_hint: str = Field("", alias="argument-hint")
    model: str | None = None
    allowed_tools: tuple[str, ...] | None = Field(None, alias="allowed-tools")

    @field_validator("allowed_tools", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(_split_rules(value))
        return value


@dataclass(frozen=True)
class CommandFile:
    """One command read from disk: its name (``git:review``), where it came from, its fields and its
    template (the text after the frontmatter)."""

    name: str
    path: Path
    source: Source
    fields: Frontmatter
    template: str
    shadows: Path | None = None  # a user file of the same name this project file hides


@dataclass
class Discovered:
    commands: dict[str, CommandFile] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class BadFile(ValueError):
    """A command file that cannot be read: the reason, without the file's name."""


def command_dirs(
    workspace: Path, config_dir: Path, env: Mapping[str, str], from_claude: bool
) -> list[tuple[Path, Source]]:
    """Where command files live, the one that wins a name first."""
    dirs: list[tuple[Path, Source]] = [(workspace / ".owltui" / "commands", "project")]
    if from_claude:
        dirs.append((workspace / ".claude" / "commands", "project"))
    dirs.append((config_dir / "commands", "user"))
    if from_claude and env.get("HOME"):
        dirs.append((Path(env["HOME"]) / ".claude" / "commands", "user"))
    return dirs


def discover(dirs: list[tuple[Path, Source]], shown: Path | None = None) -> Discovered:
    """Every command of ``dirs`` (earlier ones win a name); a bad file is a warning line."""
    out = Discovered()
    for root, source in dirs:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            where = shown_path(path, shown)
            try:
                name = command_name(path.relative_to(root))
                cmd = read_command(path, name, source)
            except BadFile as exc:
                out.warnings.append(f"custom command {where} left out: {exc}")
                continue
            earlier = out.commands.get(name)
            if earlier is None:
                out.commands[name] = cmd
            elif earlier.source == "project" and source == "user" and earlier.shadows is None:
                out.commands[name] = CommandFile(
                    earlier.name, earlier.path, earlier.source, earlier.fields, earlier.template, path
                )
    return out


def shown_path(path: Path, base: Path | None) -> str:
    if base is not None and path.is_relative_to(base):
        return str(path.relative_to(base))
    return str(path)


def command_name(relative: Path) -> str:
    """``git/review.md`` -> ``git:review``; BadFile when a part is not a command word."""
    parts = [*relative.parent.parts, relative.stem]
    lowered = [p.lower() for p in parts]
    for part in lowered:
        if not NAME_PART.fullmatch(part):
            raise BadFile(f"{part!r} is not a command name (letters, digits, '-', '_', '.')")
    return ":".join(lowered)


def read_command(path: Path, name: str, source: Source) -> CommandFile:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise BadFile(f"larger than {MAX_FILE_BYTES // 1024} KB")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise BadFile("not UTF-8 text") from None
    except OSError as exc:
        raise BadFile(exc.strerror or str(exc)) from None
    raw, template = split_frontmatter(text)
    try:
        fields = Frontmatter.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "frontmatter"
        raise BadFile(f"{where}: {first['msg']}") from None
    if not template.strip():
        raise BadFile("the template after the frontmatter is empty")
    return CommandFile(name, path, source, fields, template.strip("\n"))


def split_frontmatter(text: str) -> tuple[dict[str, object], str]:
    """``(fields, template)``; no frontmatter: ``({}, text)``. BadFile on a line it cannot read."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.rstrip() == "---")
    except StopIteration:
        raise BadFile("the frontmatter has no closing '---' line") from None
    fields: dict[str, object] = {}
    key: str | None = None
    for n, line in enumerate(lines[1:end], 2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and key is not None:
            items = fields.setdefault(key, [])
            if not isinstance(items, list):
                raise BadFile(f"line {n}: a list item under '{key}', which already has a value")
            items.append(_scalar(stripped[2:]))
            continue
        match = re.fullmatch(r"([A-Za-z][A-Za-z0-9_-]*):(?:\s+(.*))?", stripped)
        if match is None or line[:1].isspace():
            raise BadFile(f"line {n}: expected 'key: value'")
        key, value = match.group(1), (match.group(2) or "").strip()
        if key in fields:
            raise BadFile(f"line {n}: '{key}' is given twice")
        if key in IGNORED_KEYS:
            key = None
            continue
        if key == "allowed-tools" and value.startswith("[") and value.endswith("]"):
            fields[key] = [_scalar(v) for v in _split_rules(value[1:-1])]
        elif value:
            fields[key] = _scalar(value)
    return fields, "\n".join(lines[end + 1 :])


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value.startswith(("{", "|", ">", "&", "*", "!")):  # YAML this reader does not take
        raise BadFile(f"{value[:20]!r}: only plain, quoted or list values are read here")
    return value


def _split_rules(text: str) -> list[str]:
    """``Bash(git add:*), Read`` -> ``["Bash(git add:*)", "Read"]``: commas outside parentheses."""
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [p.strip() for p in out if p.strip()]
