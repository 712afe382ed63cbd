"""An enterprise IdP, an MCP authorization server and an MCP server behind it, one process, for the
``identity_assertion`` tests.

    python enterprise_server.py     # prints "PORT n"; everything on http://127.0.0.1:n

``/idp/token``: the IdP's RFC 8693 token exchange (every parameter checked; the ID token must be
``ID_TOKEN``, the client ``IDP_CLIENT``; the ID-JAG it issues is bound to the audience and resource
asked for). The authorization server (issuer: the base URL): RFC 8414 metadata, ``/token`` with the
RFC 7523 jwt-bearer grant only, ``client_secret_basic`` only, the ID-JAG's audience and resource
checked. ``/mcp``: the test MCP server, a live access token needed (401 naming the RFC 9728
metadata otherwise). ``/admin/revoke`` forgets the access tokens, ``/admin/stats`` counts.
"""

from __future__ import annotations

import base64
import json
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.tools.mcp_test_server import make_server

ID_TOKEN = "eyJ-the-idp-id-token-not-for-logs"
IDP_CLIENT = "owltui-at-idp"
CLIENT_ID, CLIENT_SECRET = "owltui-mcp", "mcp-secret-not-for-logs"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
BASE = ""
JAGS: dict[str, dict[str, str]] = {}
ACCESS: set[str] = set()
STATS: dict[str, Any] = {"exchange": 0, "jwt_bearer": 0, "refused": []}


def _refuse(why: str, status: int = 400, error: str = "invalid_request") -> Response:
    STATS["refused"].append(why)
    return JSONResponse({"error": error, "error_description": why}, status_code=status)


def prm(_r: Request) -> Response:
    return JSONResponse({"resource": f"{BASE}/mcp", "authorization_servers": [BASE]})


def asm(_r: Request) -> Response:
    return JSONResponse(
        {
            "issuer": BASE,
            "authorization_endpoint": f"{BASE}/authorize",  # required by the SDK's model, never used
            "token_endpoint": f"{BASE}/token",
            "grant_types_supported": [JWT_BEARER],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "response_types_supported": ["code"],
        }
    )


async def idp_token(r: Request) -> Response:
    form = await r.form()
    want = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "client_id": IDP_CLIENT,
        "resource": f"{BASE}/mcp",
    }
    wrong = [k for k, v in want.items() if form.get(k) != v]
    if form.get("audience") not in (BASE, f"{BASE}/"):
        wrong.append("audience")
    if wrong:
        return _refuse(f"wrong {', '.join(wrong)}")
    if form.get("subject_token") != ID_TOKEN:
        return _refuse("the ID token is expired", error="invalid_grant")
    STATS["exchange"] += 1
    jag = f"jag-{secrets.token_hex(8)}"
    JAGS[jag] = {"aud": str(form["audience"]), "resource": str(form["resource"])}
    return JSONResponse(
        {"access_token": jag, "issued_token_type": want["requested_token_type"], "token_type": "N_A"}
    )


async def token(r: Request) -> Response:
    form = await r.form()
    basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    if r.headers.get("authorization") != f"Basic {basic}":
        return _refuse("client_secret_basic needed", 401, "invalid_client")
    if form.get("grant_type") != JWT_BEARER:
        return _refuse("jwt-bearer only", error="unsupported_grant_type")
    claims = JAGS.pop(str(form.get("assertion")), None)
    if claims is None or claims["resource"] != f"{BASE}/mcp" or form.get("resource") != f"{BASE}/mcp":
        return _refuse("unknown ID-JAG or wrong resource", error="invalid_grant")
    STATS["jwt_bearer"] += 1
    access = f"at-{secrets.token_hex(16)}"
    ACCESS.add(access)
    return JSONResponse({"access_token": access, "token_type": "Bearer", "expires_in": 3600})


def revoke(_r: Request) -> Response:
    ACCESS.clear()
    return JSONResponse({"ok": True})


def stats(_r: Request) -> Response:
    return Response(json.dumps(STATS), media_type="application/json")


AUTH = Starlette(
    routes=[
        Route("/.well-known/oauth-protected-resource/mcp", prm),
        Route("/.well-known/oauth-authorization-server", asm),
        Route("/idp/token", idp_token, methods=["POST"]),
        Route("/token", token, methods=["POST"]),
        Route("/admin/revoke", revoke, methods=["POST"]),
        Route("/admin/stats", stats),
    ]
)
MCP = make_server().streamable_http_app()


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await MCP(scope, receive, send)
        return
    if scope["type"] == "http" and scope["path"].startswith("/mcp"):
        auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
        if not (auth.startswith("Bearer ") and auth[7:] in ACCESS):
            challenge = f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", challenge.encode()), (b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await MCP(scope, receive, send)
        return
    await AUTH(scope, receive, send)


def main() -> None:
    global BASE
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    BASE = f"http://127.0.0.1:{sock.getsockname()[1]}"
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


if __name__ == "__main__":
    main()
