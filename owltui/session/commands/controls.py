"""What steers a run from outside the conversation: the pause gate (``pause``, ``resume``), the tool
requirement (``/require``, ``clear_requirement``), the answers to approval requests (``approve``) and
the state a program reads (``get_state``), the permission mode (``/mode``) and how steering meets a
running batch (``/steering``)."""

from __future__ import annotations

from owltui.session.commands.spec import Args, CommandError, Context, Pick, Reply, Unavailable

REQUIRE_OFF = "off"  # /require off: drop the requirement (unless a tool is named "off")


def pause(ctx: Context, a: Args) -> Reply:
    freeze: bool | None = a["freeze"]  # None: as configured (pause_freeze)
    changed = ctx.host.pause(freeze)  # the runtime's freezer and config decide what it freezes
    return Reply(
        "" if changed else "already paused", data={"changed": changed, "frozen": ctx.host.gate.frozen}
    )


def resume(ctx: Context, _a: Args) -> Reply:
    changed = ctx.host.gate.resume() is not None
    return Reply("" if changed else "not paused", data={"changed": changed})


def require(ctx: Context, a: Args) -> Reply:
    tool, reason = a["tool"], a["reason"].strip()
    names = ctx.host.tool_names()
    if tool == REQUIRE_OFF and tool not in names:
        return clear_requirement(ctx, a)
    if tool not in names:
        raise CommandError(f"unknown tool `{tool}`; tools: {', '.join(names)}")
    ctx.host.require(tool, reason)
    why = f" ({reason})" if reason else ""
    return Reply(f"requirement: the next turn must call `{tool}`{why}")


def pick_tool(ctx: Context) -> Reply:
    names = ctx.host.tool_names()
    if not names:
        return Reply("this agent has no tools to require", "warning")
    if ctx.host.requirement.current is not None:  # a requirement is set: offer to clear it
        names = [*names, REQUIRE_OFF]
    return Reply(pick=Pick("Require a tool for the next turn", names, "require"))


def clear_requirement(ctx: Context, _a: Args) -> Reply:
    ctx.host.requirement.clear()
    return Reply("requirement cleared")


def approve(ctx: Context, a: Args) -> Reply:
    call_id, decision = a["call_id"], a["decision"]
    broker = ctx.host.approvals
    pending = broker.get(call_id)
    if pending is None or not broker.answer(call_id, decision):
        raise CommandError(f"no approval request {call_id!r} is waiting", "warning")
    return Reply(*pending.outcome(decision))


def get_state(ctx: Context, _a: Args) -> Reply:
    return Reply(data=ctx.host.state())


def permission_mode(ctx: Context, a: Args) -> Reply:
    """``/mode MODE``: the permission mode from the next tool call on (not saved)."""
    from owltui.session.plan_commands import set_mode

    return set_mode(ctx, a["mode"])


def pick_mode(ctx: Context) -> Reply:
    from owltui.policy.permissions.model import MODES

    policy = ctx.host.permissions
    if policy is None:
        raise Unavailable("this session has no permission policy to set a mode on")
    return Reply(
        f"permission mode: {policy.mode}",
        pick=Pick("Permission mode", list(MODES), "mode", highlight=policy.mode),
    )


STEERING = ("batch", "immediate")


def steering(ctx: Context, a: Args) -> Reply:
    """``/steering batch|immediate``: whether steering waits for the running batch (config
    ``steering``), from the next batch on (not saved)."""
    ctx.host.agent.config.steering = a["mode"]
    return Reply(f"steering: {a['mode']}", data={"steering": a["mode"]})


def pick_steering(ctx: Context) -> Reply:
    now = ctx.host.agent.config.steering
    return Reply(f"steering: {now}", pick=Pick("Steering", list(STEERING), "steering", highlight=now))
