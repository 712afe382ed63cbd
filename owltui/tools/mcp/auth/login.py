"""``/mcp login`` (``login``: a connection on which the browser login may run, closed once it has
tokens) and ``/mcp logout`` (``logout``: the stored tokens and registered client deleted)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from owltui.tools.mcp.auth.errors import LoginFailed, LoginRequired
from owltui.tools.mcp.auth.settings import OAuthSettings
from owltui.tools.mcp.auth.store import open_store
from owltui.tools.mcp.config import ServerSpec

Show = Callable[[str], None]


async def login(spec: ServerSpec, env: Mapping[str, str], show: Show) -> str:
    """Log in to ``spec``'s server now (the browser, the URL shown); one sentence saying how it
    went. Tokens already stored are dropped first (a fresh login)."""
    if spec.transport != "http":
        return f"MCP server '{spec.name}' is not an HTTP server: it has no login."
    settings = spec.oauth or OAuthSettings()
    if not settings.enabled:
        return f"MCP server '{spec.name}' has OAuth turned off (\"oauth\": false)."
    backend = open_store(env)
    entry = backend.get(spec.url)
    if entry and "tokens" in entry:
        backend.put(spec.url, {k: v for k, v in entry.items() if k not in ("tokens", "expires_at")})
    from mcp import Client

    from owltui.tools.mcp.client import CLIENT_INFO, HttpTransport, describe_error

    transport = HttpTransport(spec.url, spec.headers, spec, env, show, may_log_in=True)
    client: Any = Client(transport, mode="auto", cache=None, client_info=CLIENT_INFO)
    try:
        async with client:
            pass
    except Exception as exc:
        why = _login_error(exc) or describe_error(exc, spec)
        if (backend.get(spec.url) or {}).get("tokens"):
            return f"Logged in to MCP server '{spec.name}' (then: {why})."
        return f"Login to MCP server '{spec.name}' failed: {why}"
    if not (backend.get(spec.url) or {}).get("tokens"):
        return f"MCP server '{spec.name}' did not ask for a login: it answers without one."
    return f"Logged in to MCP server '{spec.name}'."


def _login_error(exc: BaseException) -> str | None:
    """The sentence of a ``LoginFailed`` / ``LoginRequired`` somewhere inside ``exc``."""
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, LoginFailed | LoginRequired):
            return str(e)
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return None


def logout(spec: ServerSpec, env: Mapping[str, str]) -> str:
    """Delete the server's stored tokens and registered client."""
    backend = open_store(env)
    if backend.delete(spec.url):
        return f"Logged out of MCP server '{spec.name}': its tokens were deleted from {backend.where}."
    return f"MCP server '{spec.name}' has no stored login."
