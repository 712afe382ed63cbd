"""MCP servers: RPC ``mcp_status`` and ``/mcp [approve|decline]``, on the host's ``mcp`` source
(``owltui.tools.mcp``; None when no server is configured)."""

from __future__ import annotations

from owltui.session.commands.spec import Args, CommandError, Context, Reply


def mcp_status(ctx: Context, _a: Args) -> Reply:
    from owltui.tools.mcp.wiring import status

    return Reply(data={"servers": status(ctx.host.mcp)})


def mcp(ctx: Context, a: Args) -> Reply:
    """``/mcp``: servers, state, tools; ``/mcp approve`` / ``/mcp decline``: the workspace's
    ``.mcp.json`` (remembered for the workspace)."""
    from owltui.tools.mcp.wiring import decide, describe

    source = ctx.host.mcp
    if a["action"] is None:
        return Reply(describe(source))
    if source is None:
        raise CommandError("there is no .mcp.json in this workspace to approve or decline", "warning")
    return Reply(decide(source, a["action"] == "approve"))
