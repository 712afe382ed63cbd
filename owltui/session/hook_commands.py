"""``/hooks``: the configured hooks (file, event, matcher, command, approved or not);
``/hooks approve`` / ``/hooks decline``: the project's hooks (``owltui.features.hooks``)."""

from __future__ import annotations

from owltui.features.hooks.session import attached
from owltui.session.commands.spec import Args, CommandError, Context, Reply


def hooks(ctx: Context, a: Args) -> Reply:
    session = attached(ctx.host.agent.config)
    if session is None:
        return Reply("no hooks configured (see docs/hooks.md)")
    action = a.get("action")
    if action is None:
        return Reply(session.listing())
    if not session.trust.hooks:
        raise CommandError("this workspace defines no project hooks to approve or decline", "warning")
    return Reply(session.decide(action == "approve"))
