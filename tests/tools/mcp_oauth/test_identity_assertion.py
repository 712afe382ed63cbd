"""Enterprise-managed login (``grant = "identity_assertion"``) against a real IdP + authorization
server + MCP server process: the IdP's ID token exchanged for an ID-JAG, the ID-JAG for an access
token, the authorization server found in the protected-resource metadata (or configured), the tools
then working; a revoked access token replaced by a fresh exchange, no user involved; a refused ID
token one clear line without a token in it; ``/mcp login`` exchanging without a browser; the same
server with the default grant fails."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from owltui.tools.mcp.auth.login import login
from owltui.tools.mcp.auth.settings import parse_oauth
from tests.tools.mcp_oauth import enterprise_server as es
from tests.tools.mcp_oauth.conftest import AuthServer
from tests.tools.mcp_oauth.test_login_flow import connected, echo, spec_for, token_file

pytestmark = pytest.mark.anyio


def enterprise(server: AuthServer, id_token_file: Path, **more: str) -> dict[str, str]:
    return {
        "grant": "identity_assertion",
        "idp_token_endpoint": f"{server.base}/idp/token",
        "idp_client_id": es.IDP_CLIENT,
        "idp_id_token_file": str(id_token_file),
        "client_id": es.CLIENT_ID,
        "client_secret": es.CLIENT_SECRET,
        **more,
    }


async def test_the_id_token_is_exchanged_and_the_tools_work_then_a_revoked_token_is_replaced(
    enterprise_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    id_token = tmp_path / "id_token"
    id_token.write_text(es.ID_TOKEN + "\n")
    spec = spec_for(enterprise_server.url, ws, env, **enterprise(enterprise_server, id_token))

    async with connected(spec, ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "connected", (warnings, enterprise_server.admin("stats"))
        assert await echo(src, ws) == "echo: hi"
    assert warnings == []
    stats = enterprise_server.admin("stats")
    assert (stats["exchange"], stats["jwt_bearer"], stats["refused"]) == (1, 1, [])
    stored = token_file(env).read_text()
    assert json.loads(stored)["servers"][enterprise_server.url]["tokens"]["access_token"].startswith("at-")
    assert es.ID_TOKEN not in stored and es.CLIENT_SECRET not in stored and "jag-" not in stored

    # the stored token is reused: no exchange at all
    async with connected(spec, ws, env) as (src, warnings):
        assert await echo(src, ws) == "echo: hi"
    assert enterprise_server.admin("stats")["exchange"] == 1

    # revoked: a fresh exchange, silently (the ID token file is read again)
    enterprise_server.admin("revoke")
    async with connected(spec, ws, env) as (src, warnings):
        assert await echo(src, ws) == "echo: hi"
    assert warnings == []
    stats = enterprise_server.admin("stats")
    assert (stats["exchange"], stats["jwt_bearer"]) == (2, 2)


async def test_a_configured_issuer_is_used_as_is(
    enterprise_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    id_token = tmp_path / "id_token"
    id_token.write_text(es.ID_TOKEN)
    wrong = enterprise(enterprise_server, id_token, issuer="http://127.0.0.1:9/elsewhere")
    async with connected(spec_for(enterprise_server.url, ws, env, **wrong), ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "failed"
    (warning,) = warnings
    assert warning.startswith("MCP server 'hosted' failed to start:") and es.ID_TOKEN not in warning
    assert enterprise_server.admin("stats")["exchange"] == 0  # nothing is sent before the issuer answers
    oauth = enterprise(enterprise_server, id_token, issuer=enterprise_server.base)
    async with connected(spec_for(enterprise_server.url, ws, env, **oauth), ws, env) as (src, warnings):
        assert await echo(src, ws) == "echo: hi"
    assert warnings == []
    assert enterprise_server.admin("stats")["exchange"] == 1


async def test_a_refused_id_token_is_one_clear_line_without_the_token(
    enterprise_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    id_token = tmp_path / "id_token"
    id_token.write_text("stale-id-token-not-for-logs")
    spec = spec_for(enterprise_server.url, ws, env, **enterprise(enterprise_server, id_token))
    async with connected(spec, ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "failed"
    (warning,) = warnings
    assert "\n" not in warning
    assert "the identity provider's token exchange" in warning, warning
    assert "refused: HTTP 400 invalid_grant (the ID token is expired)" in warning, warning
    assert "stale-id-token" not in warning and es.CLIENT_SECRET not in warning


async def test_without_the_grant_the_same_server_needs_a_browser_login(
    enterprise_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with connected(spec_for(enterprise_server.url, ws, env), ws, env) as (src, warnings):
        assert src.status()[0]["state"] == "failed"
    assert warnings == ["MCP server 'hosted' needs login: run /mcp login hosted"]
    assert enterprise_server.admin("stats")["exchange"] == 0


def test_the_grant_names_what_it_lacks() -> None:
    with pytest.raises(ValueError) as raised:
        parse_oauth({"grant": "identity_assertion", "client_id": "c"})
    assert str(raised.value) == (
        'oauth: grant "identity_assertion" needs client_secret, idp_token_endpoint,'
        " idp_client_id, idp_id_token (or idp_id_token_file)"
    )
    ok = parse_oauth(
        {
            "grant": "identity_assertion",
            "client_id": "c",
            "client_secret": "s",
            "idp_token_endpoint": "https://idp.example.com/token",
            "idp_client_id": "i",
            "idp_id_token": "t",
        }
    )
    assert ok.id_token() == "t" and ok.issuer is None


async def test_mcp_login_runs_the_exchange_without_a_browser(
    enterprise_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    id_token = tmp_path / "id_token"
    id_token.write_text(es.ID_TOKEN)
    spec = spec_for(enterprise_server.url, ws, env, **enterprise(enterprise_server, id_token))
    shown: list[str] = []
    with anyio.fail_after(60):
        assert await login(spec, env, shown.append) == "Logged in to MCP server 'hosted'."
        assert await login(spec, env, shown.append) == "Logged in to MCP server 'hosted'."
    assert shown == []  # no browser, no URL
    assert enterprise_server.admin("stats")["exchange"] == 2  # a login drops the stored token first
