"""The loopback redirect: a listener on 127.0.0.1 (a configured or any free port) that receives the
authorization server's redirect (``/callback?code=...&state=...``), answers the browser with a
short page, and hands the code to the flow. Connections are read one at a time, each within
``READ_WITHIN`` seconds (a browser's idle pre-connection does not block the redirect).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream
from anyio.streams.stapled import MultiListener

from owltui.tools.mcp.auth.errors import LoginFailed

PATH = "/callback"
READ_WITHIN = 10.0
MAX_REQUEST = 16_384
DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>OwlTUI</title>"
    "<p>{}</p><p>You can close this tab and return to OwlTUI.</p>"
)


class Callback:
    """What the redirect carried."""

    def __init__(self, code: str | None, state: str | None, iss: str | None, error: str | None) -> None:
        self.code = code
        self.state = state
        self.iss = iss
        self.error = error


class Loopback:
    """``async with Loopback(port) as lb``: listening; ``lb.redirect_uri``; ``await lb.receive()``."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or 0
        self._listener: SocketListener | None = None

    async def __aenter__(self) -> Loopback:
        try:
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        except OSError as exc:
            raise LoginFailed(
                f"cannot listen on 127.0.0.1:{self.port} for the login redirect ({exc})"
            ) from None
        one: Any = listener.listeners[0] if isinstance(listener, MultiListener) else listener
        assert isinstance(one, SocketListener)
        self._listener = one
        self.port = int(one.extra(SocketAttribute.local_port))
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.aclose()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    async def receive(self) -> Callback:
        """Until a request for ``/callback`` arrives (other paths get a 404)."""
        assert self._listener is not None, "not listening"
        while True:
            stream = await self._listener.accept()
            async with stream:
                found = await self._serve(stream)
            if found is not None:
                return found

    async def _serve(self, stream: SocketStream) -> Callback | None:
        head = b""
        with anyio.move_on_after(READ_WITHIN):
            while b"\r\n\r\n" not in head and len(head) < MAX_REQUEST:
                try:
                    chunk = await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
                head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        target = urlsplit(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
        if target is None or target.path != PATH:
            await _answer(stream, 404, "Not found.")
            return None
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        error = query.get("error")
        if error:
            why = query.get("error_description", "")
            await _answer(stream, 400, "The login was refused.")
            return Callback(None, query.get("state"), query.get("iss"), f"{error}{': ' + why if why else ''}")
        await _answer(stream, 200, "Logged in.")
        return Callback(query.get("code"), query.get("state"), query.get("iss"), None)


async def _answer(stream: SocketStream, status: int, text: str) -> None:
    body = DONE_PAGE.format(text).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
    )
    try:
        await stream.send(head.encode() + body)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
