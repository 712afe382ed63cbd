"""An MCP server behind a small OAuth authorization server, one process, for the login tests.

    python oauth_server.py     # prints "PORT n"; everything on http://127.0.0.1:n

``/mcp``: the test MCP server (``mcp_test_server``), every request needing a live access token
(401 with a ``WWW-Authenticate`` naming the protected-resource metadata otherwise). The
authorization server: RFC 9728 and RFC 8414 metadata, dynamic registration, ``/authorize`` (checks
PKCE S256 and the resource indicator, redirects at once: the consent is the test's), ``/token``
(authorization code with the verifier checked, refresh). ``/admin/expire`` invalidates the access
tokens (refresh tokens still work), ``/admin/revoke`` every token, ``/admin/stats`` counts requests
(and the scope the last authorization request asked for).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.tools.mcp_test_server import make_server

BASE = ""
CLIENTS: dict[str, dict[str, Any]] = {}
CODES: dict[str, dict[str, Any]] = {}
ACCESS: set[str] = set()
REFRESH: set[str] = set()
STATS: dict[str, Any] = {"register": 0, "authorize": 0, "code": 0, "refresh": 0, "refused_refresh": 0}


def prm(_r: Request) -> Response:
    return JSONResponse(
        {"resource": f"{BASE}/mcp", "authorization_servers": [BASE], "scopes_supported": ["tools"]}
    )


def asm(_r: Request) -> Response:
    return JSONResponse(
        {
            "issuer": BASE,
            "authorization_endpoint": f"{BASE}/authorize",
            "token_endpoint": f"{BASE}/token",
            "registration_endpoint": f"{BASE}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        }
    )


async def register(r: Request) -> Response:
    body = await r.json()
    STATS["register"] += 1
    client_id = f"client-{secrets.token_hex(4)}"
    CLIENTS[client_id] = body
    return JSONResponse(
        {**body, "client_id": client_id, "token_endpoint_auth_method": "none"}, status_code=201
    )


def authorize(r: Request) -> Response:
    q = r.query_params
    STATS["authorize"] += 1
    STATS["scope"] = q.get("scope")
    client = CLIENTS.get(q.get("client_id", ""))
    if client is None or q.get("redirect_uri") not in client.get("redirect_uris", []):
        return JSONResponse({"error": "invalid_client"}, status_code=400)
    if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
        return JSONResponse({"error": "invalid_request", "error_description": "PKCE S256 required"}, 400)
    if q.get("resource") != f"{BASE}/mcp":
        return JSONResponse({"error": "invalid_target"}, status_code=400)
    code = secrets.token_urlsafe(16)
    CODES[code] = {
        "challenge": q["code_challenge"],
        "client_id": q["client_id"],
        "redirect": q["redirect_uri"],
    }
    return RedirectResponse(
        f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q.get('state', '')})}", 302
    )


def _issue() -> dict[str, Any]:
    access, refresh = f"at-{secrets.token_hex(16)}", f"rt-{secrets.token_hex(16)}"
    ACCESS.add(access)
    REFRESH.add(refresh)
    return {"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh}


async def token(r: Request) -> Response:
    form = await r.form()
    grant = form.get("grant_type")
    if grant == "authorization_code":
        found = CODES.pop(str(form.get("code")), None)
        verifier = str(form.get("code_verifier", ""))
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if found is None or digest != found["challenge"] or form.get("redirect_uri") != found["redirect"]:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        STATS["code"] += 1
        return JSONResponse(_issue())
    if grant == "refresh_token":
        old = str(form.get("refresh_token"))
        if old not in REFRESH:
            STATS["refused_refresh"] += 1
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        REFRESH.discard(old)
        STATS["refresh"] += 1
        return JSONResponse(_issue())
    return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)


def expire(_r: Request) -> Response:
    ACCESS.clear()
    return JSONResponse({"ok": True})


def revoke(_r: Request) -> Response:
    ACCESS.clear()
    REFRESH.clear()
    return JSONResponse({"ok": True})


def stats(_r: Request) -> Response:
    return Response(json.dumps(STATS), media_type="application/json")


AUTH = Starlette(
    routes=[
        Route("/.well-known/oauth-protected-resource/mcp", prm),
        Route("/.well-known/oauth-protected-resource", prm),
        Route("/.well-known/oauth-authorization-server", asm),
        Route("/register", register, methods=["POST"]),
        Route("/authorize", authorize),
        Route("/token", token, methods=["POST"]),
        Route("/admin/expire", expire, methods=["POST"]),
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
