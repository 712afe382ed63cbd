"""A lean HTTP/1.1 transport under httpx: an asyncio protocol, ``httptools`` (llhttp) for responses.

httpx stays the client API (requests, responses, timeouts, errors, content decoding); this replaces
only what sits under it, httpcore's connection pool, whose per-request cost (anyio locks and
events, stream objects, h11's pure-Python parsing: ~90 µs for a five-chunk answer and ~6 µs per
chunk of a stream, against ~2 µs and ~0.1 µs with llhttp) is most of a model call's client CPU on
a fast server (``bench/http_transports.py`` has the side-by-side figures). What it does:

- one connection per request in flight, idle ones kept per origin (scheme, host, port) and reused
  while the server keeps them open (``should_keep_alive``); a response its reader left before the
  end (the model's last event came, the closing chunk not yet) ends in the background (at most
  ``LINGER_S``) and its connection is kept; on cancellation (abort) the connection closes at once;
- a reused connection that the server had closed meanwhile is replaced once, transparently;
- TLS with the context httpx would build (certifi, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), made on
  the first https connection, not at start-up;
- timeouts from the request: connect, write (waiting for the socket to drain) and read, per network
  read (the stream's idle timeout), raised as httpx's exceptions;
- the body arrives one piece per network read (llhttp's chunks from that read, joined), so the SSE
  decoder and the providers see one piece per read, and nothing is copied per chunk.

Responses are parsed by llhttp only; the request head is written from httpx's already-validated
request (method, target and headers are checked for characters that could split the message).
Proxies stay httpx's business: a model that may go through a proxy (any proxy variable set) uses
httpx's default transport (``make_client``), as do methods other than GET and POST.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httptools
import httpx

HIGH_WATER = 1 << 20  # body bytes read ahead of the consumer before the socket is paused
MAX_IDLE = 4  # idle connections kept per origin
LINGER_S = 2.0  # how long a response left before its end may take to end in the background
LINGER_BYTES = 1 << 16  # and how much more of it is read (and dropped) meanwhile
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")
# RFC 9110 token characters, field-value characters (no controls but HTAB), request-target bytes
_TOKEN = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_VALUE = bytes([9, *range(32, 127), *range(128, 256)])
_TARGET = bytes(range(33, 256)).replace(b"\x7f", b"")


def _only(data: bytes, allowed: bytes) -> bool:
    """Whether every byte of ``data`` is in ``allowed`` (deleting them leaves nothing)."""
    return not data.translate(None, allowed)


def proxy_configured(env: Any = None) -> bool:
    """Whether any proxy variable is set (httpx then decides, with NO_PROXY, where it applies)."""
    env = os.environ if env is None else env
    return any(env.get(name) or env.get(name.upper()) for name in PROXY_VARS)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, minus the work for responses that set no cookie: httpx builds a urllib
    request and response for every response to let the jar look for ``Set-Cookie`` (~60 µs)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


def make_client(timeout: httpx.Timeout, *, verify: bool) -> httpx.AsyncClient:
    """The client a model uses: the lean transport, or httpx's own when a proxy may apply."""
    if proxy_configured():
        client = httpx.AsyncClient(timeout=timeout, verify=verify)
    else:
        client = httpx.AsyncClient(timeout=timeout, transport=LeanTransport(verify=verify))
    jar = getattr(client, "_cookies", None)  # httpx has no public way to give the client its jar class
    if type(jar) is httpx.Cookies:
        client._cookies = _Cookies(jar.jar)
    return client


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


class _Expired(Exception):
    pass


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_exception(_Expired())


class _Connection(asyncio.Protocol):
    """One socket: llhttp parses what arrives as it arrives; the request's task waits on ``waiter``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, key: tuple[str, str, int]) -> None:
        self.loop = loop
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.parser: httptools.HttpResponseParser | None = None  # None while idle
        self.reused = False
        self.eof = False
        self.lost: Exception | None = None
        self.error: str | None = None  # a protocol error: the connection is not reused
        self.waiter: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None
        self.writing_paused = False
        self.reading_paused = False
        self._begin()

    def _begin(self) -> None:
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = False
        self.complete = False
        self.keep_alive = False
        self.body: list[bytes] = []
        self.size = 0

    # -- asyncio callbacks -------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        if parser is None or self.complete or self.error is not None:
            self.error = self.error or "the server sent data outside a response"
            self._wake()
            return
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.error = "the server switched protocols"
        except httptools.HttpParserError as exc:
            self.error = f"invalid response from the server ({exc})"
        if self.size > HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._ended()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc
        self._ended()
        self.writing_paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    # -- llhttp callbacks --------------------------------------------------------------------
    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        assert self.parser is not None
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # informational: the real response follows
            self.reason = b""
            self.headers = []
            return
        self.status = status
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        self.body.append(body)
        self.size += len(body)

    def on_message_complete(self) -> None:
        if not self.head_done:
            return  # the end of an informational response
        assert self.parser is not None
        self.complete = True
        self.keep_alive = self.parser.should_keep_alive()

    # -- for the transport -------------------------------------------------------------------
    def _ended(self) -> None:
        self.eof = True
        if self.head_done and not self.complete and self._until_close():
            self.complete = True  # a body that ends when the connection does
        self._wake()

    def _until_close(self) -> bool:
        """A body without length or chunking: it ends with the connection (RFC 9112, 6.3)."""
        for name, value in self.headers:
            lower = name.lower()
            if lower == b"content-length" or (lower == b"transfer-encoding" and b"chunked" in value.lower()):
                return False
        return self.status not in (204, 304)

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def usable(self) -> bool:
        transport = self.transport
        return not self.eof and self.error is None and transport is not None and not transport.is_closing()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def start(self) -> None:
        self._begin()
        self.parser = httptools.HttpResponseParser(self)

    def finish(self) -> bool:
        """The response was read to its end; True when the connection may carry another."""
        ok = self.complete and self.keep_alive and self.usable()
        self.parser = None
        return ok

    async def wait(self, limit: float | None) -> None:
        """Until something arrives (or the connection ends), at most ``limit`` seconds."""
        fut = self.loop.create_future()
        self.waiter = fut
        handle = self.loop.call_later(limit, _expire, fut) if limit is not None else None
        try:
            await fut
        except _Expired:
            raise httpx.ReadTimeout(f"nothing received for {limit:g} s") from None
        finally:
            self.waiter = None
            if handle is not None:
                handle.cancel()

    def check(self) -> None:
        """Raise for a protocol error, or for a connection that ended before the response did."""
        if self.error is not None:
            raise httpx.RemoteProtocolError(self.error)
        if self.eof and not self.complete:
            if self.lost is not None:
                raise httpx.ReadError(str(self.lost) or type(self.lost).__name__)
            if not self.head_done:
                raise httpx.RemoteProtocolError("the server closed the connection without a response")
            raise httpx.RemoteProtocolError("the server closed the connection before the response ended")

    def take(self) -> bytes:
        body = self.body
        if not body:
            return b""
        data = body[0] if len(body) == 1 else b"".join(body)
        body.clear()
        self.size = 0
        if self.reading_paused and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return data

    async def write(self, data: bytes, limit: float | None) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            raise httpx.WriteError("the connection is closed")
        transport.write(data)
        if self.writing_paused:
            fut = self.drained = self.loop.create_future()
            try:
                await asyncio.wait_for(fut, limit)
            except TimeoutError:
                raise httpx.WriteTimeout(f"could not send the request within {limit:g} s") from None
            finally:
                self.drained = None
            if self.lost is not None or transport.is_closing():
                raise httpx.WriteError(str(self.lost or "the connection was closed"))


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 for httpx on asyncio (see the module docstring)."""

    def __init__(self, *, verify: bool = True, trust_env: bool = True, max_idle: int = MAX_IDLE) -> None:
        self._verify = verify
        self._trust_env = trust_env
        self._ssl: ssl.SSLContext | None = None
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._max_idle = max_idle
        self._closed = False
        self._other: httpx.AsyncHTTPTransport | None = None
        self._lingering: set[asyncio.Task[None]] = set()

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(verify=self._verify, trust_env=self._trust_env)
        return self._ssl

    async def _connect(self, key: tuple[str, str, int], limit: float | None) -> _Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        kwargs: dict[str, Any] = {}
        if scheme == "https":
            kwargs = {"ssl": self._ssl_context(), "server_hostname": host}
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: _Connection(loop, key), host, port, **kwargs), limit
            )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"could not connect to {host}:{port} within {limit:g} s") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return conn

    def _take_idle(self, key: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                conn.reused = True
                return conn
            conn.close()
        return None

    def release(self, conn: _Connection) -> None:
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
        self, conn: _Connection, data: bytes, timeouts: dict[str, float | None]
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
            conn.close()
            raise
        return httpx.Response(
            conn.status,
            headers=conn.headers,
            stream=_Body(self, conn, read_timeout),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": conn.reason},
        )

    def linger(self, conn: _Connection) -> None:
        """A response its reader stopped reading before its end (a model stream ends with its last
        event; the closing chunk may come in a later packet): let it end in the background, then
        keep the connection, so the next request needs no new connection (and TLS handshake)."""
        task = asyncio.get_running_loop().create_task(self._finish(conn))
        self._lingering.add(task)
        task.add_done_callback(self._lingering.discard)

    async def _finish(self, conn: _Connection) -> None:
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
            conn.close()
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

    def __init__(self, owner: LeanTransport, conn: _Connection, read_timeout: float | None) -> None:
        self.owner = owner
        self.conn: _Connection | None = conn
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
                conn.close()
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
        conn.close()  # cancelled (abort): the connection goes at once
