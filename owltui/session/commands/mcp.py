"""MCP servers (issue 15): RPC ``mcp_status`` and ``/mcp [approve|decline]``, on the host's ``mcp``
source (``owltui.tools.mcp``; None when no server is configured)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from owltui.session.commands.spec import Args, CommandError, Context, Reply

if TYPE_CHECKING:
    from owltui.tools.mcp.source import McpSource


def _source(ctx: Context) -> McpSource | None:
    return getattr(ctx.host, "mcp", None)


def mcp_status(ctx: Context, _a: Args) -> Reply:
    from owltui.tools.mcp.wiring import status

    return Reply(data={"servers": status(_source(ctx))})


def mcp(ctx: Context, a: Args) -> Reply:
    """``/mcp``: servers, state, tools; ``/mcp approve`` / ``/mcp decline``: the workspace's
    ``.mcp.json`` (remembered for the workspace)."""
    from owltui.tools.mcp.wiring import decide, describe

    source = _source(ctx)
    if a["action"] is None:
        return Reply(describe(source))
    if source is None:
        raise CommandError("there is no .mcp.json in this workspace to approve or decline", "warning")
    return Reply(decide(source, a["action"] == "approve"))
