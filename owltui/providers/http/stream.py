"""The HTTP streaming model both providers share: one POST, SSE decoding, retries, idle timeout.

Subclasses build the request body and a stream parser; this class owns the httpx client, the retry
loop (only before any content arrived, and never for what cannot heal: a certificate not trusted,
a proxy setting to fix), the idle timeout (httpx's read timeout: a stream that sends
nothing for ``idle_timeout`` seconds is an error), cost, and turning every failure into one
``StreamError`` line instead of an exception. Cancelling the consumer closes the HTTP stream at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Protocol

import anyio
import httpx

from owltui.agent.messages import Usage
from owltui.agent.model import ModelRequest, RetryNotice, StreamDone, StreamError, StreamEvent
from owltui.providers.catalog import ModelInfo, lookup
from owltui.providers.http.client import make_client, routes_lean
from owltui.providers.http.errors import (
    ProviderError,
    certificate_problem,
    http_error_message,
    is_error_body,
    is_retryable_status,
    non_stream_message,
)
from owltui.providers.http.retry import RetryPolicy
from owltui.providers.http.sse import SSEDecoder
from owltui.text.wirejson import encode

PEEK_LIMIT = 4096  # bytes read to decide whether a 200 body is an event stream
ERROR_BODY_LIMIT = 65536  # bytes of a non-stream body read for its message


class StreamParser(Protocol):
    """Turns decoded SSE events of one response into stream events.

    ``terminal`` is set to a ``StreamDone`` or ``StreamError`` when the response is over;
    ``has_content`` once text, thinking or a tool call was produced.
    """

    terminal: StreamDone | StreamError | None
    has_content: bool

    def feed(self, event: str, data: str) -> list[StreamEvent]: ...

    def end(self) -> list[StreamEvent]:
        """End of the byte stream; sets ``terminal`` (done if the response was complete, else error)."""
        ...

    def flush(self) -> list[StreamEvent]:
        """Text or thinking held back to be joined (``feed`` joins the deltas of one network read);
        a parser delivers it before any later event and when it sets ``terminal``."""
        ...


class HTTPModel:
    """Base of the HTTP providers. ``name`` is ``provider:model``."""

    provider: ClassVar[str] = "http"
    api_key_env: ClassVar[str | None] = None
    input_includes_cache: ClassVar[bool] = True  # Usage.input_tokens counts cached tokens too

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str,
        client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        idle_timeout: float = 120.0,
        connect_timeout: float = 15.0,
        max_output_tokens: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
        info: ModelInfo | None = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.idle_timeout = idle_timeout
        self.timeout = httpx.Timeout(connect=connect_timeout, read=idle_timeout, write=60.0, pool=60.0)
        self.max_output_tokens = max_output_tokens
        self.extra_headers = dict(extra_headers or {})
        self.info = info or lookup(self.provider, model)
        self._client = client
        self._own_client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._url: tuple[str, httpx.URL] | None = None
        self._lingers = False  # the transport ends abandoned responses itself (LeanTransport)

    @property
    def name(self) -> str:
        return sys.intern(f"{self.provider}:{self.model}")  # one string for every message that names it

    # -- to override ---------------------------------------------------------------------------
    def url(self) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def new_parser(self) -> StreamParser:
        raise NotImplementedError

    # -- machinery -----------------------------------------------------------------------------
    def encode_body(self, request: ModelRequest) -> bytes:
        """The exact request bytes (compact JSON, key order as built), from the total encoder: a lone
        surrogate (a non-UTF-8 file name in a tool result) becomes U+FFFD, NaN becomes null.

        ``encode(build_body(request))``, built from a provider's cached pieces (``_encode_cached``:
        tools and system prompt once, each history turn once). Should the cache ever fail, it starts
        over (``_reset_wire``) and this request is encoded whole."""
        try:
            return self._encode_cached(request)
        except Exception:
            self._reset_wire()
            return encode(self.build_body(request))

    def _encode_cached(self, request: ModelRequest) -> bytes:
        return encode(self.build_body(request))

    def _reset_wire(self) -> None:
        """Forget the cached pieces (the provider's wire cache)."""

    def _http(self) -> httpx.AsyncClient:
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        if self._own_client is None or self._client_loop is not loop or self._own_client.is_closed:
            # plain http (a local server): skip loading the CA bundle, ~45 ms of start-up
            self._own_client = make_client(self.timeout, verify=not self.base_url.startswith("http://"))
            self._client_loop = loop
            self._lingers = routes_lean(self._own_client, self._parsed(self.url()))
        return self._own_client

    async def aclose(self) -> None:
        """Close the client this model created (a client passed in is the caller's)."""
        if self._own_client is not None:
            client, self._own_client = self._own_client, None
            await client.aclose()

    def _parsed(self, url: str) -> httpx.URL:
        """``url`` parsed once (httpx parses a string on every request)."""
        cached = self._url
        if cached is None or cached[0] != url:
            cached = self._url = (url, httpx.URL(url))
        return cached[1]

    def _with_cost(self, done: StreamDone) -> StreamDone:
        """The usage with its cost, given only the counts that are not zero: every assistant message
        of a history holds it, and pydantic's set of the fields given grows from 216 to 728 bytes at
        five names."""
        usage = done.usage
        cost = self.info.cost(usage, input_includes_cache=self.input_includes_cache)
        counts = {name: value for name, value in usage.__dict__.items() if value and name != "cost"}
        if cost:
            counts["cost"] = cost
        done.usage = Usage(**counts)
        return done

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one model call, retrying failures that happen before any content."""
        p = self.provider
        payload = self.encode_body(request)
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            **self.headers(),
            **self.extra_headers,
        }
        url = self.url()
        attempt = 0
        while True:
            attempt += 1
            retry_headers: Mapping[str, str] | None = None
            parser: StreamParser | None = None
            failure: str
            try:
                async with self._http().stream(
                    "POST", self._parsed(url), content=payload, headers=headers, timeout=self.timeout
                ) as resp:
                    status = resp.status_code
                    if status >= 300:
                        body = await resp.aread()
                        failure = http_error_message(p, status, body, self.api_key_env)
                        if not is_retryable_status(status):
                            yield StreamError(message=failure)
                            return
                        retry_headers = resp.headers
                    else:
                        chunks = resp.aiter_bytes()
                        head = await _peek(chunks)
                        if is_error_body(resp.headers.get("content-type", ""), head):
                            body = head + await _read_up_to(chunks, ERROR_BODY_LIMIT - len(head))
                            yield StreamError(
                                message=non_stream_message(p, resp.headers.get("content-type", ""), body, url)
                            )
                            return
                        parser = self.new_parser()
                        decoder = SSEDecoder()
                        feed = parser.feed
                        flush = parser.flush
                        async for chunk in _chain(head, chunks):
                            for name, data in decoder.feed(chunk):
                                for ev in feed(name, data):
                                    yield ev
                                if parser.terminal is not None:
                                    break
                            for ev in flush():  # the text of one network read: one delta
                                yield ev
                            if parser.terminal is not None:
                                break
                        else:
                            for name, data in decoder.close():
                                if parser.terminal is None:
                                    for ev in feed(name, data):
                                        yield ev
                            if parser.terminal is None:
                                for ev in parser.end():
                                    yield ev
                        term = parser.terminal
                        if isinstance(term, StreamDone):
                            if not self._lingers:
                                await _drain(chunks)  # so httpx's own pool keeps the connection
                            yield self._with_cost(term)
                            return
                        assert term is not None
                        if not term.retryable or parser.has_content:
                            yield term
                            return
                        failure = term.message
            except httpx.ReadTimeout:
                yield StreamError(
                    message=f"{p}: the server sent nothing for {self.idle_timeout:g} s; "
                    "giving up on this response"
                )
                return
            except httpx.TransportError as exc:
                reason = _describe(exc)
                if parser is not None and parser.has_content:
                    yield StreamError(message=f"{p}: the connection failed mid-response ({reason})")
                    return
                if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
                    yield StreamError(message=f"{p}: cannot reach {url} ({reason})")
                    return
                certificate = certificate_problem(exc)
                if certificate is not None:  # another attempt meets the same certificate
                    yield StreamError(message=f"{p}: cannot reach {url}: {certificate}")
                    return
                failure = f"{p}: cannot reach {url} ({reason})"
            except ProviderError as exc:  # a proxy or CA setting to fix: its message says which
                yield StreamError(message=f"{p}: cannot reach {url}: {exc}")
                return
            except httpx.HTTPError as exc:  # InvalidURL and friends: not worth a retry
                yield StreamError(message=f"{p}: request failed ({_describe(exc)})")
                return
            except Exception as exc:  # a bug or a surprise: one line for the user, never a traceback
                yield StreamError(message=f"{p}: unexpected error while streaming ({_describe(exc)})")
                return
            if attempt >= self.retry.max_attempts:
                yield StreamError(message=f"{failure} (gave up after {attempt} attempts)")
                return
            delay = self.retry.delay(attempt, retry_headers)
            yield RetryNotice(attempt=attempt, delay_s=round(delay, 3), reason=failure)
            await self.retry.sleep(delay)


async def _peek(chunks: AsyncIterator[bytes]) -> bytes:
    """The first bytes of a body: enough to tell an event stream from an error body (a first
    ``{``/``[``/``<`` or a first whole line), at most ``PEEK_LIMIT`` bytes, or the whole body."""
    head = b""
    while len(head) < PEEK_LIMIT and _undecided(head):
        try:
            head += await chunks.__anext__()
        except StopAsyncIteration:
            break
    return head


def _undecided(head: bytes) -> bool:
    start = head.lstrip()
    if b"\xef\xbb\xbf".startswith(start):  # nothing, or a byte order mark still arriving
        return True
    start = start.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not start:
        return True
    # "{", "[" or "<" decide at once; otherwise wait for the first whole line ("data:" or not)
    return start[:1] not in (b"{", b"[", b"<") and b"\n" not in start and b"\r" not in start


async def _drain(chunks: AsyncIterator[bytes], limit_s: float = 0.05, max_bytes: int = 65536) -> None:
    """Read what is left of a response whose model stream is over (the closing chunk), briefly: a
    response read to its end goes back to httpx's pool; one cut short closes its connection."""
    with anyio.move_on_after(limit_s):
        size = 0
        async for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                break


async def _read_up_to(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    out = b""
    while len(out) < limit:
        try:
            out += await chunks.__anext__()
        except StopAsyncIteration:
            break
    return out[:limit]


async def _chain(head: bytes, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for chunk in chunks:
        yield chunk


def _describe(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
