"""Queued messages, item by item: edit, remove and move one by its id, paused or not, until the
moment the loop delivers it; ``/queue`` lists them with their ids.

What the front ends call (the TUI's queue panel, RPC): ``queue_edit {id, text}``,
``queue_remove {id}``, ``queue_move {id, lane?, before?}``. Each answers ``ok: false`` with the
inbox's one sentence for an id that is no longer queued (delivered or removed meanwhile) or a
change that cannot be made; on success the reply's ``data`` carries ``item`` (``{id, text,
source}``) and, for an edit or a move, the message's ``lane``. The panel redraws from the inbox's
own change notices, so a successful change says nothing (``text`` is empty).
"""

from __future__ import annotations

from owltui.agent.inbox import QueueError
from owltui.session.commands.spec import Args, CommandError, Context, Reply


def _lane_of(ctx: Context, qid: str) -> str:
    return ctx.host.inbox.get(qid).lane


def queue_edit(ctx: Context, a: Args) -> Reply:
    try:
        item = ctx.host.inbox.edit(a["id"], a["text"])
        return Reply(data={"item": item, "lane": _lane_of(ctx, a["id"])})
    except QueueError as exc:
        raise CommandError(str(exc), "warning") from None


def queue_remove(ctx: Context, a: Args) -> Reply:
    try:
        item = ctx.host.inbox.remove(a["id"])
    except QueueError as exc:
        raise CommandError(str(exc), "warning") from None
    return Reply(data={"item": item})


def queue_move(ctx: Context, a: Args) -> Reply:
    try:
        item = ctx.host.inbox.move(a["id"], a["lane"] or None, a["before"] or None)
        return Reply(data={"item": item, "lane": _lane_of(ctx, a["id"])})
    except QueueError as exc:
        raise CommandError(str(exc), "warning") from None


def queue_list(ctx: Context, _a: Args) -> Reply:
    """``/queue``: the queued messages with their ids (what plain mode has of the queue panel)."""
    snap = ctx.host.inbox.snapshot()
    lines = [f"  {lane:<9} {q['id']}  {q['text']}" for lane, items in snap.items() for q in items]
    if not lines:
        return Reply("nothing is queued")
    return Reply("queued, in delivery order:\n" + "\n".join(lines))
