"""The OAuth test server (``oauth_server``) dressed as a 2025-03-26 server, for the legacy-issuer tests.

    python legacy_server.py MODE     # prints "PORT n"; everything on http://127.0.0.1:n

No protected-resource metadata (404, and no ``resource_metadata`` in the 401 challenge); the
authorization-server metadata at the root well-known, its endpoints under ``/oauth``, its issuer
by ``MODE``: ``path`` the same origin + ``/oauth``, ``other`` another origin (``127.0.0.2``).
``MODE`` ``prm``: protected-resource metadata naming ``origin/oauth``, whose metadata is at the
path-aware well-known (RFC 8414). ``/admin/stats`` adds ``root_metadata`` (requests to the root
well-known).
"""

from __future__ import annotations

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
from tests.tools.mcp_oauth import oauth_server as base

MODE = sys.argv[1] if len(sys.argv) > 1 else "path"
base.STATS["root_metadata"] = 0


def _issuer() -> str:
    return base.BASE.replace("127.0.0.1", "127.0.0.2") + "/oauth" if MODE == "other" else base.BASE + "/oauth"


def metadata(root: bool) -> Any:
    def serve(_r: Request) -> Response:
        if root:
            base.STATS["root_metadata"] += 1
            if MODE == "prm":
                return JSONResponse({"error": "not_found"}, status_code=404)
        at = base.BASE + "/oauth"
        return JSONResponse(
            {
                "issuer": _issuer(),
                "authorization_endpoint": f"{at}/authorize",
                "token_endpoint": f"{at}/token",
                "registration_endpoint": f"{at}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }
        )

    return serve


def prm(_r: Request) -> Response:
    if MODE != "prm":
        return JSONResponse({"error": "not_found"}, status_code=404)
    return JSONResponse({"resource": f"{base.BASE}/mcp", "authorization_servers": [f"{base.BASE}/oauth"]})


AUTH = Starlette(
    routes=[
        Route("/.well-known/oauth-protected-resource/mcp", prm),
        Route("/.well-known/oauth-protected-resource", prm),
        Route("/.well-known/oauth-authorization-server", metadata(root=True)),
        Route("/.well-known/oauth-authorization-server/oauth", metadata(root=False)),
        Route("/oauth/register", base.register, methods=["POST"]),
        Route("/oauth/authorize", base.authorize),
        Route("/oauth/token", base.token, methods=["POST"]),
        Route("/admin/stats", base.stats),
    ]
)


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await base.MCP(scope, receive, send)
        return
    if scope["type"] == "http" and scope["path"].startswith("/mcp"):
        auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
        if not (auth.startswith("Bearer ") and auth[7:] in base.ACCESS):
            await send(
                {"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]}
            )
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await base.MCP(scope, receive, send)
        return
    await AUTH(scope, receive, send)


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    base.BASE = f"http://127.0.0.1:{sock.getsockname()[1]}"
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


if __name__ == "__main__":
    main()
