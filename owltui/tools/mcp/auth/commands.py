"""``/mcp login NAME`` and ``/mcp logout NAME`` on a session's ``McpSource``: which server, the
login run (its URL shown as a notice), and on success the server connected again so its tools
join. No SDK import here (``login`` imports it when a login runs)."""

from __future__ import annotations

from typing import Any

from owltui.tools.mcp.config import ServerSpec


class NoSuchServer(Exception):
    """One sentence naming the servers there are."""


def http_spec(source: Any, name: str) -> ServerSpec:
    """The configured HTTP server called ``name``."""
    servers = list(getattr(source, "servers", []) or [])
    for server in servers:
        if server.spec.name == name:
            if server.spec.transport != "http":
                raise NoSuchServer(f"MCP server '{name}' runs over stdio: only HTTP servers log in")
            return server.spec  # type: ignore[no-any-return]
    http = [s.spec.name for s in servers if s.spec.transport == "http"]
    known = f" (HTTP servers: {', '.join(http)})" if http else " (no HTTP server is configured)"
    raise NoSuchServer(f"there is no MCP server '{name}'{known}")


async def login_and_reconnect(source: Any, spec: ServerSpec) -> str:
    """Run the login; when it gave tokens, connect the server again (``source.restart``)."""
    from owltui.tools.mcp.auth.login import login

    said = await login(spec, source.env, source.warn)
    if not said.startswith("Logged in"):
        return said
    restart = getattr(source, "restart", None)
    if restart is not None and restart(spec.name):
        return f"{said} Connecting it again."
    return f"{said} It connects with the next session."


def logout_now(source: Any, spec: ServerSpec) -> str:
    from owltui.tools.mcp.auth.login import logout

    return logout(spec, source.env)
