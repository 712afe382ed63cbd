"""The OAuth round trip against a local authorization server (a real process): a server answering
401 without a login fails with the one line naming ``/mcp login``; ``login`` runs discovery,
dynamic registration, the authorization code with PKCE and the resource indicator through the
loopback and a stand-in browser; the tools then work; an expired access token is refreshed without
the browser; a revoked login fails with the line again; ``logout`` deletes it. The token file is
0600, outside the workspace, and holds what the server issued."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext
from owltui.tools.mcp.auth.login import login, logout
from owltui.tools.mcp.config import ServerSpec, parse_server
from owltui.tools.mcp.source import McpSource
from tests.tools.mcp_oauth.conftest import AuthServer

pytestmark = pytest.mark.anyio


def spec_for(url: str, ws: Path, env: dict[str, str], **oauth: Any) -> ServerSpec:
    notices: list[str] = []
    raw: dict[str, Any] = {"type": "http", "url": url}
    if oauth:
        raw["oauth"] = oauth
    spec = parse_server("hosted", raw, "test", ws, env, notices)
    assert spec is not None and notices == []
    return spec


@asynccontextmanager
async def connected(
    spec: ServerSpec, ws: Path, env: dict[str, str]
) -> AsyncIterator[tuple[McpSource, list[str]]]:
    warnings: list[str] = []
    src = McpSource([spec], workspace=ws, env=env, warn=warnings.append)
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        try:
            assert await src.wait_ready(30)
            yield src, warnings
        finally:
            with anyio.fail_after(10):
                await src.aclose()
            tg.cancel_scope.cancel()


def token_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "owltui" / "mcp-oauth.json"


async def echo(src: McpSource, ws: Path) -> str:
    (tool,) = [t for t in src.tools() if t.name == "mcp__hosted__echo"]
    out = await tool.run(
        tool.params.model_validate({"text": "hi"}), ToolContext(workspace=ws, cancel=CancelToken())
    )
    return str(out.content)


def expire_stored(env: dict[str, str], url: str) -> None:
    """What time does to the stored access token (its absolute expiry passes)."""
    path = token_file(env)
    data = json.loads(path.read_text())
    data["servers"][url]["expires_at"] = 1.0
    path.write_text(json.dumps(data))


async def test_login_round_trip_refresh_revoke_and_logout(
    auth_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = spec_for(auth_server.url, ws, env)

    # no login yet: one clear line, nothing registered, no browser
    async with connected(spec, ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "failed"
    assert warnings == ["MCP server 'hosted' needs login: run /mcp login hosted"]
    assert auth_server.admin("stats")["register"] == 0

    shown: list[str] = []
    with anyio.fail_after(60):
        said = await login(spec, env, shown.append)
    assert said == "Logged in to MCP server 'hosted'."
    (line,) = shown
    assert line.startswith("MCP server 'hosted': log in at http://127.0.0.1:")
    assert "code_challenge_method=S256" in line and "resource=" in line
    stats = auth_server.admin("stats")
    assert stats["register"] == 1 and stats["authorize"] == 1 and stats["code"] == 1

    path = token_file(env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0
    assert not path.resolve().is_relative_to(ws.resolve())
    entry = json.loads(path.read_text())["servers"][auth_server.url]
    assert entry["tokens"]["access_token"].startswith("at-")

    async with connected(spec, ws, env) as (src, warnings):
        assert await echo(src, ws) == "echo: hi"
    assert warnings == []

    # the access token expired (the server forgot it, the stored expiry passed): refreshed, no browser
    auth_server.admin("expire")
    expire_stored(env, auth_server.url)
    async with connected(spec, ws, env) as (src, warnings):
        assert await echo(src, ws) == "echo: hi"
    stats = auth_server.admin("stats")
    assert stats["refresh"] == 1 and stats["authorize"] == 1, stats
    assert warnings == []

    # revoked: the refresh is refused, a fresh login is asked for, clearly
    auth_server.admin("revoke")
    expire_stored(env, auth_server.url)
    async with connected(spec, ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "failed"
    assert warnings == [
        "MCP server 'hosted' needs login again (its stored login was rejected): run /mcp login hosted"
    ]
    assert auth_server.admin("stats")["refused_refresh"] == 1

    # a second login reuses the registered client (same loopback port), and logout forgets it all
    with anyio.fail_after(60):
        assert await login(spec, env, shown.append) == "Logged in to MCP server 'hosted'."
    assert auth_server.admin("stats")["register"] == 1
    assert logout(spec, env).startswith("Logged out of MCP server 'hosted'")
    assert auth_server.url not in json.loads(path.read_text())["servers"]
    assert logout(spec, env) == "MCP server 'hosted' has no stored login."
    assert os.environ.get("OWLTUI_MCP_AUTO_LOGIN") is None


async def test_mcp_login_in_a_running_session_connects_the_server_again(
    auth_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    from owltui.tools.mcp.auth.commands import NoSuchServer, http_spec, login_and_reconnect

    ws = tmp_path / "ws"
    ws.mkdir()
    spec = spec_for(auth_server.url, ws, env)
    async with connected(spec, ws, env) as (src, warnings):
        assert src.status()[0] == {
            "name": "hosted",
            "state": "failed",
            "tools": [],
            "error": "needs login: run /mcp login hosted",
        }
        with pytest.raises(NoSuchServer, match="there is no MCP server 'other' \\(HTTP servers: hosted\\)"):
            http_spec(src, "other")
        with anyio.fail_after(60):
            said = await login_and_reconnect(src, http_spec(src, "hosted"))
        assert said == "Logged in to MCP server 'hosted'. Connecting it again."
        assert await src.wait_ready(30)
        assert src.status()[0]["state"] == "connected"
        assert await echo(src, ws) == "echo: hi"
    assert warnings[0] == "MCP server 'hosted' needs login: run /mcp login hosted"
    assert warnings[1].startswith("MCP server 'hosted': log in at http://127.0.0.1:")
    assert warnings[2].startswith("MCP server 'hosted' connected: its ")  # started late: it says so
    assert len(warnings) == 3, warnings


async def test_a_static_authorization_header_or_oauth_false_means_no_oauth(
    auth_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    notices: list[str] = []
    off = parse_server("off", {"url": auth_server.url, "oauth": False}, "test", ws, env, notices)
    bad = parse_server("bad", {"url": auth_server.url, "oauth": {"scopes": 3}}, "test", ws, env, notices)
    assert off is not None and off.oauth is not None and not off.oauth.enabled
    assert bad is None and notices == [
        "MCP server 'bad' (test) is not used: oauth.scopes: Input should be a valid list"
    ]
    async with connected(off, ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "failed"
    (warning,) = warnings
    assert warning.startswith("MCP server 'off' failed to start:") and "HTTP 401" in warning


async def test_configured_scopes_replace_the_advertised_ones(
    auth_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    shown: list[str] = []
    with anyio.fail_after(60):
        assert (
            await login(spec_for(auth_server.url, ws, env), env, shown.append)
            == "Logged in to MCP server 'hosted'."
        )
    assert auth_server.admin("stats")["scope"] == "tools"  # what the server advertises
    scoped = spec_for(auth_server.url, ws, env, scopes="tools admin:read")
    with anyio.fail_after(60):
        assert await login(scoped, env, shown.append) == "Logged in to MCP server 'hosted'."
    assert auth_server.admin("stats")["scope"] == "tools admin:read"
