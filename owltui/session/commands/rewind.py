"""Checkpoints and rewinding: RPC ``checkpoints`` and ``rewind``, ``/rewind`` with its picker,
``/undo``. The host's ``checkpoints`` (``owltui.session.checkpoints.rewind.Checkpointing``) does
the work in a worker thread, so each command answers with ``then`` (the reply once git is done).

What a front end calls:

- ``/rewind`` (no id): a reply whose ``then`` gives a ``Pick`` over the checkpoints, newest first:
  ``options`` are checkpoint ids, ``labels`` their rows (time, files changed, prompt, what that
  checkpoint left out), ``note`` what no checkpoint restores (ignored files present now); the text
  lists the same for front ends without a picker. A choice runs ``/rewind ID`` (files and
  conversation); ``/rewind ID files`` or ``/rewind ID conversation`` restores one of them
  (``call("rewind", id=ID, files=..., conversation=...)`` likewise).
- ``/undo``: the files of the last turn back as they were before it; the conversation stays.
- A conversation rewind replies with ``clear_view``: the front end redraws the conversation from
  ``host.agent.history``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from owltui.session.commands.spec import Args, CommandError, Context, Pick, Reply, Unavailable

if TYPE_CHECKING:
    from owltui.session.checkpoints.rewind import Checkpointing, Rewound

WHAT = ("both", "files", "conversation")


def _checkpointing(ctx: Context, verb: str) -> Checkpointing:
    cps = ctx.host.checkpoints
    if cps is None:
        raise Unavailable(
            "checkpoints are not taken in this session (config checkpoints = false, or "
            "print mode without a session)"
        )
    if ctx.host.agent.running:
        raise CommandError(f"a run is going: wait or abort ({ctx.front.abort_key}) before {verb}", "warning")
    return cps


def _later(work: Callable[[], Awaitable[Reply]]) -> Reply:
    """A reply whose ``then`` runs ``work`` (git, in a worker thread); a rewind error is its reply."""

    async def finish() -> Reply:
        from owltui.session.checkpoints.rewind import RewindError

        try:
            return await work()
        except RewindError as exc:
            return Reply(str(exc), "error", ok=False)

    return Reply(then=finish())


def _paths(paths: list[str], limit: int = 6) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _said(done: Rewound, files: bool) -> Reply:
    parts = []
    if files:
        n = len(done.restored)
        parts.append(
            f"{n} file{'' if n == 1 else 's'} restored ({_paths(done.restored)})"
            if n
            else "the files were already as they were then"
        )
    if done.unrestored:
        parts.append(_unrestored(done))
    if done.conversation:
        parts.append("the conversation goes on from there (the later turns stay in the session file)")
    where = f"before “{_short(done.prompt)}”" if done.prompt else "the checkpoint"
    return Reply(
        f"rewound to {where}: " + "; ".join(parts),
        "success",
        clear_view=done.conversation,
        data={"restored": done.restored, "conversation": done.conversation, **_lost(done)},
    )


def _unrestored(done: Rewound) -> str:
    n = len(done.unrestored)
    return (
        f"{n} file{'' if n == 1 else 's'} not put back, recorded by hash only in this large workspace "
        f"({_paths(list(done.unrestored))})"
    )


def _lost(done: Rewound) -> dict[str, list[str]]:
    return {"unrestored": list(done.unrestored)} if done.unrestored else {}


def _short(text: str, width: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def checkpoints(ctx: Context, _a: Args) -> Reply:
    cps = _checkpointing(ctx, "listing checkpoints")

    async def listed() -> Reply:
        return Reply(data={"checkpoints": [c.wire() for c in await cps.checkpoints()]})

    return _later(listed)


def _rewind(ctx: Context, checkpoint_id: str | None, files: bool, conversation: bool, verb: str) -> Reply:
    if not (files or conversation):
        raise CommandError("nothing to rewind: both files and conversation are false")
    cps = _checkpointing(ctx, verb)

    async def rewound() -> Reply:
        return _said(await cps.rewind(checkpoint_id, files=files, conversation=conversation), files)

    return _later(rewound)


def rewind(ctx: Context, a: Args) -> Reply:
    """RPC ``rewind {id, files?, conversation?}``."""
    return _rewind(ctx, a["id"], a["files"], a["conversation"], "rewinding")


def rewind_slash(ctx: Context, a: Args) -> Reply:
    """``/rewind ID [both|files|conversation]``."""
    what = a["what"] or "both"
    return _rewind(ctx, a["id"], what != "conversation", what != "files", "/rewind")


def undo(ctx: Context, _a: Args) -> Reply:
    """``/undo``: the last turn's file changes, rewound."""
    cps = _checkpointing(ctx, "/undo")

    async def undone() -> Reply:
        done = await cps.rewind(None, files=True, conversation=False)
        n = len(done.restored)
        lost = f"; {_unrestored(done)}" if done.unrestored else ""
        if not n:
            return Reply(
                "nothing to undo: the files are as they were before the last turn" + lost,
                "warning" if lost else "info",
                data={"restored": [], **_lost(done)},
            )
        return Reply(
            f"undone: {n} file{'' if n == 1 else 's'} as before the last turn ({_paths(done.restored)})"
            + lost,
            "warning" if lost else "success",
            data={"restored": done.restored, **_lost(done)},
        )

    return _later(undone)


def pick_checkpoint(ctx: Context) -> Reply:
    """``/rewind`` without an id: the picker (see the module)."""
    cps = _checkpointing(ctx, "/rewind")

    async def picker() -> Reply:
        listing = await cps.listing()
        if not listing.rows:
            note = cps.pruned_note()
            return Reply(note or "no checkpoints yet: one is taken before each prompt", "info")
        labels = tuple(row.label for row in listing.rows)
        lines = [f"  {row.id}  {label}" for row, label in zip(listing.rows, labels, strict=True)]
        text = "checkpoints, newest first (/rewind ID [files|conversation]):\n" + "\n".join(lines)
        if listing.ignored:
            text += f"\n  ({listing.ignored})"
        data: dict[str, Any] = {"checkpoints": [row.id for row in listing.rows]}
        pick = Pick(
            "Rewind to before which prompt?",
            [r.id for r in listing.rows],
            "rewind",
            labels=labels,
            note=listing.ignored,
        )
        return Reply(text, data=data, pick=pick)

    return _later(picker)
