"""Answering an MCP server's question: RPC ``mcp_elicitation_answer`` (after an ``mcp_elicitation``
event), on the session's ``ElicitBroker`` (``host.mcp.requests.asker``)."""

from __future__ import annotations

from owltui.session.commands.spec import Arg, Args, Command, CommandError, Context, Reply

ACTIONS = ("accept", "decline", "cancel")


def mcp_elicitation_answer(ctx: Context, a: Args) -> Reply:
    from owltui.tools.mcp.requests.broker import ElicitBroker

    source = ctx.host.mcp
    broker = source.requests.asker if source is not None else None
    if not isinstance(broker, ElicitBroker):
        raise CommandError("no MCP server can ask anything in this session", "warning")
    why = broker.answer(a["id"], a["action"], a.get("content") or None)
    if why is not None:
        raise CommandError(why, "warning")
    return Reply(f"answered the MCP question: {a['action']}", data={"id": a["id"], "action": a["action"]})


MCP_ELICIT_COMMANDS: tuple[Command, ...] = (
    Command(
        "answer an MCP server's question",
        mcp_elicitation_answer,
        rpc="mcp_elicitation_answer",
        args=(
            Arg("id"),
            Arg("action", choices=ACTIONS),
            Arg("content", "object", required=False, default=None),
        ),
        doc="Answer an `mcp_elicitation` event. `accept` with `content` (a form's values; fields left "
        "out get their defaults) or, for a URL question, to open the URL; `decline`; `cancel`. `ok: "
        "false` with the reason when no such question waits or the content does not fit the form "
        "(the question stays open).",
    ),
)
