"""A lean HTTP/1.1 transport under httpx: an asyncio protocol, ``httptools`` (llhttp) for responses.

httpx stays the client API (requests, responses, timeouts, errors, content decoding); this replaces
only what sits under it, httpcore's connection pool, whose per-request cost (anyio locks and
events, stream objects, h11's pure-Python parsing: ~90 µs for a five-chunk answer and ~6 µs per
chunk of a stream, against ~2 µs and ~0.1 µs with llhttp) is most of a model call's client CPU on
a fast server (``bench/http_transports.py`` has the side-by-side figures). What it does:

- one connection per request in flight, idle ones kept per origin (scheme, host, port) and reused
  while the server keeps them open (``should_keep_alive``); a response its reader left before the
  end (the model's last event came, the closing chunk not yet) ends in the background (at most
  ``LINGER_S``) and its connection is kept; on cancellation or failure the socket is aborted at
  once (no TLS goodbye, which waits for a peer that may never answer);
- a body without length or chunking ends when the server closes the connection; a reset or TLS
  failure before that is a broken response, not its end;
- a reused connection that the server had closed meanwhile is replaced once, transparently;
- TLS with the context httpx would build (certifi, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), made on
  the first https connection, not at start-up;
- timeouts from the request: connect, write (waiting for the socket to drain) and read, per network
  read (the stream's idle timeout), raised as httpx's exceptions;
- the body arrives one piece per network read (llhttp's chunks from that read, joined), so the SSE
  decoder and the providers see one piece per read, and nothing is copied per chunk.

Responses are parsed by llhttp only; the request head is written from httpx's already-validated
request (method, target and headers are checked for characters that could split the message).
Proxies stay httpx's business: requests a proxy variable covers go through httpx's own transport,
mounted per request by ``make_client`` (``NO_PROXY`` hosts stay here), as do methods other than GET
and POST.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx

from owltui.providers.http.connection import Connection
from owltui.providers.http.errors import NetworkSetupError

CA_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR")  # what httpx's TLS context reads, in this order
MAX_IDLE = 4  # idle connections kept per origin
LINGER_S = 2.0  # how long a response left before its end may take to end in the background
LINGER_BYTES = 1 << 16  # and how much more of it is read (and dropped) meanwhile
# RFC 9110 token characters, field-value characters (no controls but HTAB), request-target bytes
_TOKEN = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_VALUE = bytes([9, *range(32, 127), *range(128, 256)])
_TARGET = bytes(range(33, 256)).replace(b"\x7f", b"")


def _only(data: bytes, allowed: bytes) -> bool:
    """Whether every byte of ``data`` is in ``allowed`` (deleting them leaves nothing)."""
    return not data.translate(None, allowed)


def request_head(request: httpx.Request) -> bytes:
    """The request line and headers, refusing anything that could end a line early."""
    method = request.method.encode("ascii")
    target = request.url.raw_path
    if not method or not target or not _only(method, _TOKEN) or not _only(target, _TARGET):
        raise httpx.LocalProtocolError(f"invalid request line: {method!r} {target!r}")
    lines = [method, b" ", target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        if not name or not _only(name, _TOKEN) or not _only(value, _VALUE):
            raise httpx.LocalProtocolError(f"invalid header {name!r}")
        lines += [name, b": ", value, b"\r\n"]
    lines.append(b"\r\n")
    return b"".join(lines)


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 for httpx on asyncio (see the module docstring)."""

    def __init__(self, *, verify: bool = True, trust_env: bool = True, max_idle: int = MAX_IDLE) -> None:
        self._verify = verify
        self._trust_env = trust_env
        self._ssl: ssl.SSLContext | None = None
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._max_idle = max_idle
        self._closed = False
        self._other: httpx.AsyncHTTPTransport | None = None
        self._lingering: set[asyncio.Task[None]] = set()

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            try:
                self._ssl = httpx.create_ssl_context(verify=self._verify, trust_env=self._trust_env)
            except (OSError, ssl.SSLError) as exc:  # SSL_CERT_FILE or SSL_CERT_DIR is not loadable
                named = [f"{var}={os.environ[var]}" for var in CA_VARS if os.environ.get(var)]
                where = " or ".join(named) or "certifi's CA bundle"
                raise NetworkSetupError(f"cannot load the CA certificates of {where} ({exc})") from exc
        return self._ssl

    async def _connect(self, key: tuple[str, str, int], limit: float | None) -> Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        kwargs: dict[str, Any] = {}
        if scheme == "https":
            kwargs = {"ssl": self._ssl_context(), "server_hostname": host}
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: Connection(loop, key), host, port, **kwargs), limit
            )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"could not connect to {host}:{port} within {limit:g} s") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return conn

    def _take_idle(self, key: tuple[str, str, int]) -> Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                conn.reused = True
                return conn
            conn.abort()
        return None

    def release(self, conn: Connection) -> None:
        """A response read to its end: keep the connection for the next request if it may be."""
        if conn.finish() and not self._closed:
            idle = self._idle.setdefault(conn.key, [])
            if len(idle) < self._max_idle:
                idle.append(conn)
                return
        conn.close()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise httpx.UnsupportedProtocol("the transport is closed")
        url = request.url
        scheme = url.scheme
        if scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}")
        if request.method not in ("POST", "GET"):  # HEAD, CONNECT…: httpx's own transport
            if self._other is None:
                self._other = httpx.AsyncHTTPTransport(verify=self._verify, trust_env=self._trust_env)
            return await self._other.handle_async_request(request)
        key = (scheme, url.host, url.port or (443 if scheme == "https" else 80))
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        data = request_head(request) + body
        while True:
            conn = self._take_idle(key) or await self._connect(key, timeouts.get("connect"))
            try:
                return await self._exchange(conn, data, timeouts)
            except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
                if not conn.reused or conn.head_done or conn.body:
                    raise
                # a kept-alive connection the server had closed: once more, on another

    async def _exchange(
        self, conn: Connection, data: bytes, timeouts: dict[str, float | None]
    ) -> httpx.Response:
        read_timeout = timeouts.get("read")
        try:
            conn.start()
            await conn.write(data, timeouts.get("write"))
            while not conn.head_done:
                conn.check()
                await conn.wait(read_timeout)
        except BaseException:
            conn.parser = None
            conn.abort()
            raise
        return httpx.Response(
            conn.status,
            headers=conn.headers,
            stream=_Body(self, conn, read_timeout),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": conn.reason},
        )

    def linger(self, conn: Connection) -> None:
        """A response its reader stopped reading before its end (a model stream ends with its last
        event; the closing chunk may come in a later packet): let it end in the background, then
        keep the connection, so the next request needs no new connection (and TLS handshake)."""
        task = asyncio.get_running_loop().create_task(self._finish(conn))
        self._lingering.add(task)
        task.add_done_callback(self._lingering.discard)

    async def _finish(self, conn: Connection) -> None:
        deadline = conn.loop.time() + LINGER_S
        read = 0
        try:
            while not conn.complete:
                conn.check()
                left = deadline - conn.loop.time()
                if left <= 0 or read > LINGER_BYTES:
                    raise TimeoutError
                await conn.wait(left)
                read += len(conn.take())
        except (Exception, asyncio.CancelledError):
            conn.parser = None
            conn.abort()
            return
        conn.take()
        self.release(conn)

    async def aclose(self) -> None:
        self._closed = True
        for task in list(self._lingering):
            task.cancel()
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()
        if self._other is not None:
            await self._other.aclose()


class _Body(httpx.AsyncByteStream):
    """A response body, one piece per network read; the connection goes back to the pool at the end."""

    def __init__(self, owner: LeanTransport, conn: Connection, read_timeout: float | None) -> None:
        self.owner = owner
        self.conn: Connection | None = conn
        self.read_timeout = read_timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self.conn
        if conn is None:
            return
        try:
            while True:
                if conn.body:
                    yield conn.take()
                    continue
                if conn.complete:
                    self.conn = None
                    self.owner.release(conn)
                    return
                conn.check()
                await conn.wait(self.read_timeout)
        except BaseException:
            if self.conn is not None:
                self.conn = None
                conn.parser = None
                conn.abort()
            raise

    async def aclose(self) -> None:
        conn = self.conn
        if conn is None:
            return
        self.conn = None
        # a model stream ends with its last event, the closing chunk usually in the same read: what
        # already arrived may complete the response, and then the connection is kept at once
        if conn.complete and conn.error is None:
            conn.take()
            self.owner.release(conn)
            return
        task = asyncio.current_task()
        if (
            conn.error is None
            and conn.head_done
            and not conn.eof
            and not self.owner._closed
            and task is not None
            and not task.cancelling()
        ):
            self.owner.linger(conn)  # not cancelled: the rest may still come, in the background
            return
        conn.parser = None
        conn.abort()  # cancelled or broken: the socket goes at once
