"""Finding skills: the ``SKILL.md`` folders under the skill directories, their frontmatter checked
against the Agent Skills specification, and which one wins when two share a name.

The directories, nearest first (the first skill of a name wins; a later one of the same name is a
one-line notice naming both files):

1. ``.owltui/skills/`` in the workspace;
2. ``.agents/skills/`` in the workspace, then in each parent up to the repository root (the git
   root; only the workspace when it is not in a repository), deeper before its parent;
3. ``.claude/skills/`` at the same places, when ``hooks_from_claude = true``;
4. the user's: ``$XDG_CONFIG_HOME/owltui/skills/``, ``~/.agents/skills/``, then
   ``~/.claude/skills/`` when ``hooks_from_claude = true``.

A skill is a folder ``NAME/`` holding ``SKILL.md``. A file whose frontmatter is missing or breaks
the specification (``name``: 1-64 lowercase letters, digits and single hyphens, not at either end,
the same as the folder's name; ``description``: 1-1024 characters; ``compatibility`` at most 500;
``metadata`` a map of strings; ``allowed-tools`` a space-separated string) is one warning naming
the file, and the other skills still load. Keys the specification does not define are ignored,
except Claude Code's ``disable-model-invocation: true``, which keeps a skill out of the catalog.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from owltui.features.instructions import read_start
from owltui.features.skills.frontmatter import FrontmatterError, split_frontmatter

SKILL_FILE = "SKILL.md"
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_SKILL_CHARS = 64_000  # more than a SKILL.md needs; the rest of a huge file is never read
Level = Literal["project", "user"]


class SkillMeta(BaseModel):
    """The frontmatter fields the specification defines (plus ``disable-model-invocation``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    name: str = Field(min_length=1, max_length=64)
    description: str = Field(min_length=1, max_length=1024)
    license: str | None = None
    compatibility: str | None = Field(None, min_length=1, max_length=500)
    metadata: dict[str, str] = Field(default_factory=dict)
    allowed_tools: str | None = Field(None, alias="allowed-tools")
    disable_model_invocation: bool = Field(False, alias="disable-model-invocation")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError("lowercase letters, digits and single hyphens only, not at either end")
        return value

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("it is empty")
        return value.strip()


@dataclass(frozen=True)
class Skill:
    """One skill that loaded: its fields, its ``SKILL.md`` and where it was found."""

    meta: SkillMeta
    path: Path  # the SKILL.md, absolute
    level: Level

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def description(self) -> str:
        return self.meta.description

    @property
    def model_invocable(self) -> bool:
        return not self.meta.disable_model_invocation

    def body(self) -> str:
        """The instructions: the file after its frontmatter (read again, so an edit shows)."""
        text = read_start(self.path, MAX_SKILL_CHARS)
        if text is None:
            raise FrontmatterError(f"{self.path} cannot be read any more")
        return split_frontmatter(text)[1].strip()


@dataclass
class SkillSet:
    """The skills of a session, sorted by name, and the lines to tell the user about the rest."""

    skills: list[Skill] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def repository_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a directory or a pointer file)."""
    for here in (start, *start.parents):
        if (here / ".git").exists():
            return here
    return None


def project_dirs(workspace: Path) -> list[Path]:
    """The workspace, then each parent up to the repository root (just the workspace outside one)."""
    root = repository_root(workspace)
    if root is None:
        return [workspace]
    return [workspace, *[p for p in workspace.parents if p == root or root in p.parents]]


def home_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def user_roots(config_dir: Path, env: Mapping[str, str], claude: bool) -> list[Path]:
    """The user's skill directories, in the order they are searched."""
    home = home_dir(env)
    return [
        config_dir / "skills",
        home / ".agents" / "skills",
        *([home / ".claude" / "skills"] if claude else []),
    ]


def skill_roots(
    workspace: Path, config_dir: Path, env: Mapping[str, str], claude: bool
) -> list[tuple[Path, Level]]:
    """Every skill directory, nearest first (see the module's docstring), each once."""
    dirs = project_dirs(workspace)
    project = [workspace / ".owltui" / "skills", *(d / ".agents" / "skills" for d in dirs)]
    if claude:
        project += [d / ".claude" / "skills" for d in dirs]
    roots: list[tuple[Path, Level]] = [(p, "project") for p in project]
    roots += [(p, "user") for p in user_roots(config_dir, env, claude)]
    seen: set[str] = set()
    out: list[tuple[Path, Level]] = []
    for path, level in roots:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            out.append((path, level))
    return out


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "frontmatter"
    if first["type"] == "missing":
        return f"no {where!r} in the frontmatter"
    return f"{where!r}: {first['msg']}"


def load_skill(path: Path, level: Level) -> Skill:
    """The skill whose ``SKILL.md`` is ``path``; FrontmatterError saying why it is not one."""
    text = read_start(path, MAX_SKILL_CHARS)
    if text is None:
        raise FrontmatterError("cannot be read")
    fields, _body = split_frontmatter(text)
    try:
        meta = SkillMeta.model_validate(fields)
    except ValidationError as exc:
        raise FrontmatterError(_why(exc)) from None
    if meta.name != path.parent.name:
        raise FrontmatterError(f"name {meta.name!r} is not the folder's name {path.parent.name!r}")
    return Skill(meta, path, level)


def discover_skills(
    workspace: Path, config_dir: Path, env: Mapping[str, str], *, claude: bool = False
) -> SkillSet:
    """The session's skills: every root searched, nearest first; sorted by name."""
    found: dict[str, Skill] = {}
    notices: list[str] = []
    for root, level in skill_roots(workspace, config_dir, env, claude):
        try:
            folders = sorted(p for p in root.iterdir() if (p / SKILL_FILE).is_file())
        except OSError:
            continue
        for folder in folders:
            path = folder / SKILL_FILE
            try:
                skill = load_skill(path, level)
            except FrontmatterError as exc:
                notices.append(f"skill {path} skipped: {exc}")
                continue
            kept = found.get(skill.name)
            if kept is not None:
                notices.append(f"skill {skill.name!r}: {kept.path} is used, {path} has the same name")
                continue
            found[skill.name] = skill
    return SkillSet(sorted(found.values(), key=lambda s: s.name), notices)
