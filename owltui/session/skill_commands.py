"""``/skills`` (the skills found at start: name, description, file, whether the model may use it)
and ``/skill NAME [args]`` (activate one: its instructions and the arguments become the user's
message, see ``owltui.features.skills.catalog.activation_text``).

They sit beside the command layer rather than in ``owltui.session.commands``, which already holds
as many modules as a folder may."""

from __future__ import annotations

from owltui.features.skills.catalog import activation_text, listing
from owltui.features.skills.discovery import SkillSet
from owltui.features.skills.frontmatter import FrontmatterError
from owltui.session.commands.spec import Args, CommandError, Context, Pick, Reply, Unavailable


def _skills(ctx: Context) -> SkillSet:
    found = ctx.host.skills
    if found is None:
        raise Unavailable(f"skills are not available in {ctx.front.label}")
    return found


def skills_list(ctx: Context, _a: Args) -> Reply:
    found = _skills(ctx)
    rows = [
        {
            "name": s.name,
            "description": s.description,
            "path": str(s.path),
            "level": s.level,
            "model_invocable": s.model_invocable,
        }
        for s in found.skills
    ]
    return Reply(listing(found), data={"skills": rows})


def skill(ctx: Context, a: Args) -> Reply:
    found = _skills(ctx)
    name: str = a["name"]
    chosen = found.get(name)
    if chosen is None:
        names = ", ".join(s.name for s in found.skills) or "none (see /skills)"
        raise CommandError(f"no skill named {name!r}; skills: {names}")
    agent = ctx.host.agent
    if agent.running:
        raise CommandError(f"a run is going: wait or abort ({ctx.front.abort_key}) before /skill", "warning")
    try:
        body = chosen.body()
    except FrontmatterError as exc:
        raise CommandError(f"skill {name}: {exc}") from None
    if not agent.prompt(activation_text(chosen, body, a["args"], ctx.host.workspace)):
        raise CommandError("a run is starting: try /skill again when it ends", "warning")
    return Reply(f"skill {name}: {chosen.path}", data={"skill": name, "path": str(chosen.path)})


def pick_skill(ctx: Context) -> Reply:
    names = [s.name for s in _skills(ctx).skills]
    if not names:
        raise CommandError("no skills found (see /skills)", "warning")
    return Reply(pick=Pick("Skill", names, "skill"))
