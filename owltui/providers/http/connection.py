"""One HTTP/1.1 connection of ``LeanTransport``: an asyncio protocol whose bytes ``httptools`` (llhttp)
parses as they arrive, and the waits of the request's task on it (a response head, the next body
piece, the socket draining), with httpx's exceptions for timeouts and broken connections."""

from __future__ import annotations

import asyncio

import httptools
import httpx

HIGH_WATER = 1 << 20  # body bytes read ahead of the consumer before the socket is paused


class _Expired(Exception):
    pass


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_exception(_Expired())


class Connection(asyncio.Protocol):
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
        self._ended(clean=True)
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc
        self._ended(clean=exc is None)
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
    def _ended(self, *, clean: bool) -> None:
        """The connection ended: cleanly (the server closed it), or broken (a reset, a TLS error)."""
        first = not self.eof
        self.eof = True
        if first and clean and self.head_done and not self.complete and self._until_close():
            self.complete = True  # a body that ends when the connection does, and it did
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
        """Close after what was written is sent (a TLS connection says goodbye first)."""
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        """Close the socket now: a cancelled or failed response, or a connection that is of no more
        use. A TLS goodbye would keep the socket up to 30 s on a path that went dead."""
        if self.transport is not None:
            self.transport.abort()

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
