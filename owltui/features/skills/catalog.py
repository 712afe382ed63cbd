"""What the model and the user see of the skills: the catalog at the end of the system prompt and
the message ``/skill NAME [args]`` sends.

The catalog lists the model-invocable skills sorted by name, one line each (name, description,
the ``SKILL.md`` path: relative to the workspace inside it, else absolute), so the same files give
the same bytes on every run and the cached prefix holds. It is bounded: at most ``MAX_ENTRIES``
lines and ``MAX_CHARS`` characters (a description is cut at ``MAX_DESCRIPTION``); past that, one
line says how many more there are and that ``/skills`` lists them.
"""

from __future__ import annotations

from pathlib import Path

from owltui.features.skills.discovery import Skill, SkillSet

MAX_ENTRIES = 30
MAX_CHARS = 3_000  # with every built-in tool the first request stays under 16 KB
MAX_DESCRIPTION = 200

CATALOG_HEAD = """\
## Skills

Skills are folders of instructions, and sometimes scripts, for particular tasks. When a task \
matches a skill's description, read its SKILL.md with `read` (the path below) before you start and \
follow it; paths it names are relative to its folder, and its scripts run with `bash` like any \
command.
"""


def shown_path(skill: Skill, workspace: Path) -> str:
    try:
        return skill.path.relative_to(workspace).as_posix()
    except ValueError:
        return str(skill.path)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def catalog_text(skills: SkillSet, workspace: Path) -> str:
    """The system-prompt section; empty when no skill is offered to the model."""
    offered = [s for s in skills.skills if s.model_invocable]
    if not offered:
        return ""
    lines: list[str] = []
    size = len(CATALOG_HEAD)
    for skill in offered:
        about = _one_line(skill.description, MAX_DESCRIPTION)
        line = f"- {skill.name}: {about} ({shown_path(skill, workspace)})"
        if len(lines) >= MAX_ENTRIES or size + len(line) + 1 > MAX_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
    more = len(offered) - len(lines)
    if more:
        plural = "s" if more > 1 else ""
        lines.append(f"- … {more} more skill{plural} not listed here; the user can see them all with /skills")
    return CATALOG_HEAD + "\n" + "\n".join(lines)


def activation_text(skill: Skill, body: str, args: str, workspace: Path) -> str:
    """The user's message for ``/skill NAME [args]``: a head line, the body, then the arguments."""
    head = (
        f"[skill {skill.name}, activated by the user: the instructions of {shown_path(skill, workspace)} "
        f"follow; paths in them are relative to {skill.path.parent}]"
    )
    text = f"{head}\n\n{body}"
    if args.strip():
        text += f"\n\n[the user's request for this skill]\n{args.strip()}"
    return text


def listing(skills: SkillSet) -> str:
    """``/skills``: one line per skill (name, description, source file, model-invocable or not)."""
    if not skills.skills:
        return "no skills (folders holding a SKILL.md in .agents/skills/, .owltui/skills/, ~/.agents/skills/)"
    rows = []
    for s in skills.skills:
        who = "model and /skill" if s.model_invocable else "/skill only"
        rows.append(f"{s.name} ({s.level}, {who}): {_one_line(s.description, 120)}\n    {s.path}")
    return "\n".join(rows)
