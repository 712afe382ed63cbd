"""``/sessions`` (a picker of this directory's saved sessions; ``/sessions ID`` switches to one in
place) and ``/new`` (a fresh session; asks whether the queued messages go along).

Both answer with ``clear_view``: the front end empties its conversation and draws it again from
``host.agent.history`` (the switched-to session's transcript; nothing after ``/new``). ``data``
says what happened: ``session_id``, and ``resumed`` for a switch.

Switching is the host's ``switch_session(id)`` (``Runtime.switch_session``): the queue in the inbox
goes along, the session's own undelivered messages come back. A host that cannot switch (a bare test
host, which also lists no saved sessions to pick from) raises ``Unavailable``.
"""

from __future__ import annotations

from owltui.session.commands.spec import Args, CommandError, Context, Pick, Reply, Unavailable
from owltui.session.store.sessions import format_listing

QUEUE_CHOICES = ("keep", "drop")


def _refuse_while_running(ctx: Context, verb: str) -> None:
    if ctx.host.agent.running:
        raise CommandError(f"a run is going: abort it ({ctx.front.abort_key}) before {verb}", "warning")


# ---- /new ----------------------------------------------------------------------------------------
def new(ctx: Context, a: Args) -> Reply:
    _refuse_while_running(ctx, "/new")
    host = ctx.host
    kept = 0
    if a["queue"] == "drop":
        host.inbox.clear()
    else:
        kept = len(host.inbox)
    host.requirement.clear()
    host.new_session()
    host.stats.new_session()
    sid = host.session_id
    text = f"new session{f' {sid}' if sid else ''}"
    if kept:
        text += f"; {kept} queued message{'s' if kept != 1 else ''} carried over"
    return Reply(text, clear_view=True, data={"session_id": sid})


def pick_new(ctx: Context) -> Reply:
    """``/new`` alone: straight to a fresh session, unless messages are queued (then: keep or drop?)."""
    _refuse_while_running(ctx, "/new")
    n = len(ctx.host.inbox)
    if not n:
        return new(ctx, {"queue": "drop"})
    what = f"{n} queued message{'s' if n != 1 else ''}"
    return Reply(
        f"{what}: /new keep carries them over, /new drop leaves them behind",
        pick=Pick(
            f"Carry the {what} over to the new session?",
            list(QUEUE_CHOICES),
            "new",
            labels=(f"keep: the {what} go to the new session", "drop: start with an empty queue"),
        ),
    )


# ---- /sessions -----------------------------------------------------------------------------------
def _listing(ctx: Context) -> str:
    infos = ctx.host.saved_sessions()
    current = ctx.host.session_id
    head = f"current session: {current}" if current else "this session is not saved (--no-session)"
    body = format_listing(infos) if infos else "no saved sessions in this directory"
    return f"{head}\n{body}"


def pick_session(ctx: Context) -> Reply:
    """``/sessions`` alone: the listing, and a picker of the other sessions (a choice switches)."""
    infos = [i for i in ctx.host.saved_sessions() if i.id != ctx.host.session_id]
    text = _listing(ctx)
    if not infos:
        return Reply(f"{text}\n(resume one with: owltui --resume ID)")
    rows = format_listing(infos).splitlines()
    return Reply(
        f"{text}\n(/sessions ID switches to one)",
        pick=Pick("Switch to which session?", [i.id for i in infos], "sessions", labels=tuple(rows)),
    )


def sessions(ctx: Context, a: Args) -> Reply:
    """``/sessions ID``: continue that session here, in place of this one."""
    _refuse_while_running(ctx, "switching sessions")
    host = ctx.host
    target = a["id"].strip()
    current = host.session_id
    if current is not None and (target == current or current.startswith(target)):
        return Reply(f"already in session {current}")
    try:
        host.switch_session(target)
    except (CommandError, Unavailable):
        raise
    except Exception as exc:  # SessionError and friends: one sentence
        raise CommandError(f"cannot switch sessions: {exc}") from exc
    host.stats.new_session()
    sid = host.session_id
    n = len(host.agent.history.items())
    return Reply(
        f"resumed session {sid} ({n} message{'s' if n != 1 else ''})",
        clear_view=True,
        data={"session_id": sid, "resumed": True},
    )
