"""The messages a user or a program sends: a prompt (``prompt``), a message for one lane of the
queue (``steer``, ``follow_up``, ``aside``, ``/now``), a shell command for the user (``!command``,
RPC ``shell``), and ``abort``. ``@path`` mentions in a message attach those files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from owltui.agent.cancel import CancelToken
from owltui.agent.inbox import QueueLane
from owltui.session.commands.background import background
from owltui.session.commands.spec import Args, CommandError, Context, Handler, Reply

if TYPE_CHECKING:
    from owltui.session.input.mentions import Expansion

STEER_OR_FOLLOW_UP = ("steer", "follow_up")


def _mentions(ctx: Context, text: str) -> Expansion:
    """``text`` with its ``@path`` mentions attached (the agent's workspace and read filter)."""
    from owltui.session.input.mentions import attach_mentions

    return attach_mentions(ctx.host.agent, text)


def _sent(expansion: Expansion, data: dict[str, Any] | None = None) -> Reply:
    """The reply to a message: what its mentions attached (``attached``) and what they did not."""
    data = dict(data or {})
    if expansion.attachments:
        data["attached"] = expansion.attached
    failed = expansion.notes or any(a.error for a in expansion.attachments)
    return Reply(expansion.summary(), "warning" if failed else "info", data=data)


def _resources(ctx: Context, text: str, sent: Expansion, lane: QueueLane | None) -> Reply | None:
    """A message with ``@server:uri`` mentions: sent once the resources are read (in the background)."""
    from owltui.session.input.mention_resources import drop_path_notes, resource_mentions, with_resources

    found = resource_mentions(ctx.host.mcp, text)
    if found is None:
        return None
    from owltui.session.custom_commands.mcp_prompts import deliver, in_background

    catalog, mentions = found
    drop_path_notes(sent, mentions)

    async def work() -> Reply:
        full, images, line, failed = await with_resources(ctx.host.agent, sent, catalog, mentions)
        return deliver(ctx, full, images, lane, line, failed)

    return in_background(ctx, "resource mentions", work)


def prompt(ctx: Context, a: Args) -> Reply:
    agent = ctx.host.agent
    lane: QueueLane | None = a["as"]
    if agent.running and lane is None:
        raise CommandError('a run is in progress: send it with "as": "steer" or "follow_up", or abort first')
    sent = _mentions(ctx, a["text"])
    resources = _resources(ctx, a["text"], sent, lane)
    if resources is not None:
        return resources
    if not agent.running and agent.prompt(sent.message()):
        return _sent(sent)
    if lane is None:
        raise CommandError('a run is starting: send it with "as": "steer" or "follow_up"')
    item = ctx.host.inbox.push(lane, sent.message(lane), immediate=a.get("immediate", False))
    return _sent(sent, {"queued": lane, "queue_id": item.id})


def steer_now(ctx: Context, a: Args) -> Reply:
    """``/now TEXT`` (the TUI's steer-now key: ``Commands.send(text, "immediate")``): steering that
    skips the calls of the running batch not yet started, for this message only."""
    return prompt(ctx, {"text": a["text"], "as": "steer", "immediate": True})


def lane_push(lane: QueueLane, mentions: bool = True) -> Handler:
    def push(ctx: Context, a: Args) -> Reply:
        immediate = a.get("immediate", False)
        if not mentions:
            item = ctx.host.inbox.push(lane, a["text"])
            return Reply(data={"queue_id": item.id})
        sent = _mentions(ctx, a["text"])
        item = ctx.host.inbox.push(lane, sent.message(lane), immediate=immediate)
        return _sent(sent, {"queue_id": item.id})

    return push


def shell(ctx: Context, a: Args) -> Reply:
    """``!command`` (RPC ``shell``): run it for the user, show it as a bash block, give it to the model."""
    from owltui.session.input.shell import new_call_id, run_shell

    command = a["command"].strip()
    host = ctx.host
    call_id = new_call_id()

    async def work(token: CancelToken) -> Reply:
        result = await run_shell(host.agent, host.emitter, command, call_id=call_id, cancel=token)
        return Reply(
            result.summary(),
            "info" if result.status == "ok" else "warning",
            data={"call_id": call_id, "exit_code": result.exit_code},
        )

    return Reply(data={"call_id": call_id}, then=background(host).start(call_id, work))


def abort(ctx: Context, a: Args) -> Reply:
    stopped = background(ctx.host).cancel_all()  # `!` commands and /init stop too
    aborted = ctx.host.agent.abort(clear_queue=a["clear_queue"])
    return Reply(data={"aborted": aborted or stopped > 0})
