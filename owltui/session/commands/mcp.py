"""MCP servers: RPC ``mcp_status`` and ``/mcp [approve|decline|login NAME|logout NAME]``, on the
host's ``mcp`` source (``owltui.tools.mcp``; None when no server is configured)."""

from __future__ import annotations

from owltui.agent.cancel import CancelToken
from owltui.session.commands.spec import Arg, Args, CommandError, Context, Reply

MCP_ACTIONS = ("approve", "decline", "login", "logout")
NAME = Arg("name", required=False, metavar="NAME")  # the server /mcp login|logout names


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
    if a["action"] in ("login", "logout"):
        return mcp_login(ctx, a)
    if source is None:
        raise CommandError("there is no .mcp.json in this workspace to approve or decline", "warning")
    return Reply(decide(source, a["action"] == "approve"))


def mcp_login(ctx: Context, a: Args) -> Reply:
    """``/mcp login NAME`` (in the background: the browser, the URL shown; the server connects
    again on success) and ``/mcp logout NAME`` (its stored tokens and client deleted)."""
    from owltui.tools.mcp.auth.commands import NoSuchServer, http_spec, login_and_reconnect, logout_now

    source, name = ctx.host.mcp, (a.get("name") or "").strip()
    if not name:
        raise CommandError(f"usage: /mcp {a['action']} NAME")
    try:
        spec = http_spec(source, name)
    except NoSuchServer as exc:
        raise CommandError(str(exc), "warning") from None
    if a["action"] == "logout":
        return Reply(logout_now(source, spec))
    from owltui.session.commands.background import background

    async def work(_token: CancelToken) -> Reply:
        said = await login_and_reconnect(source, spec)
        ok = said.startswith("Logged in")
        if source is not None:
            source.warn(said)  # a detached reply is seen by no one: the transcript says it
        return Reply(said, "info" if ok else "error", ok=ok)

    then = background(ctx.host).start(f"mcp login {name}", work)
    return Reply(
        f"Logging in to MCP server '{name}': open the URL shown next.", data={"pending": "login"}, then=then
    )
