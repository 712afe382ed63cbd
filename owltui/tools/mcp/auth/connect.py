"""The auth of one HTTP connection (``open_auth``, which ``client.HttpTransport`` uses): the
provider over the token store, with the loopback listening when a login may run now (the entry's
``oauth.auto_login``, ``OWLTUI_MCP_AUTO_LOGIN=1``, or ``/mcp login``); the enterprise-managed
grant's provider (``identity``) for ``grant = "identity_assertion"``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack

import httpx2

from owltui.tools.mcp.auth.errors import LoginFailed
from owltui.tools.mcp.auth.identity import build_identity_auth
from owltui.tools.mcp.auth.loopback import Loopback
from owltui.tools.mcp.auth.provider import ServerTokens, build_auth
from owltui.tools.mcp.auth.settings import AUTO_LOGIN_ENV, OAuthSettings
from owltui.tools.mcp.auth.store import open_store
from owltui.tools.mcp.config import ServerSpec

Show = Callable[[str], None]


def _auto(settings: OAuthSettings, env: Mapping[str, str]) -> bool:
    return settings.auto_login or env.get(AUTO_LOGIN_ENV, "").strip().lower() in ("1", "true", "yes", "on")


async def _listen(settings: OAuthSettings, tokens: ServerTokens) -> Loopback:
    """The loopback on the configured port, else the stored client's (no new registration), else
    any free one."""
    if settings.redirect_port:
        return await Loopback(settings.redirect_port).__aenter__()
    stored = tokens.stored_port()
    if stored:
        try:
            return await Loopback(stored).__aenter__()
        except LoginFailed:
            pass
    return await Loopback().__aenter__()


async def open_auth(
    spec: ServerSpec,
    env: Mapping[str, str],
    stack: AsyncExitStack,
    show: Show,
    on_login_needed: Callable[[str], None],
    may_log_in: bool | None = None,
) -> httpx2.Auth:
    """The connection's auth; a loopback listener (closed with ``stack``) when a login may run."""
    settings = spec.oauth or OAuthSettings()
    backend = open_store(env)
    if settings.grant == "identity_assertion":
        return build_identity_auth(spec.url, settings, backend)
    interactive = _auto(settings, env) if may_log_in is None else may_log_in
    loopback: Loopback | None = None
    if interactive and settings.grant == "authorization_code":
        loopback = await _listen(settings, ServerTokens(backend, spec.url, settings, None))
        stack.push_async_exit(loopback.__aexit__)
    return build_auth(
        spec.name, spec.url, settings, backend, loopback=loopback, show=show, on_login_needed=on_login_needed
    )
