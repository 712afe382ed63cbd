"""One GET the way ``fetch`` makes it: redirects followed one hop at a time, each hop to another host
checked again, the body read up to a cap, progress while it comes.

Each hop gets a fresh httpx client, so no cookie a server sets travels to the next hop; no
``Authorization`` header is ever set (a URL carrying a user or password is refused before this).
``trust_env`` stays on for what it means in httpx 0.28: the proxy variables (``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) and the CA bundle (``SSL_CERT_FILE``,
``SSL_CERT_DIR``); httpx reads no netrc. Leaving the enclosing scope (the run aborted) closes the
connection at once: the response is never read to its end.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

from owltui.tools.web.markdown import Kind, kind_of, media_type

__all__ = ["FetchFailed", "HopCheck", "Page", "get_page", "human_size"]

MAX_HOPS = 10
TIMEOUT = httpx.Timeout(30.0, connect=10.0)
PROGRESS_EVERY = 0.5  # seconds between progress lines while a body comes
HEADERS = {
    "User-Agent": "OwlTUI-fetch/1 (a coding agent reading a page for its user)",
    "Accept": "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.5",
}

HopCheck = Callable[[str, str], Awaitable[str | None]]  # (from URL, to URL) -> the refusal, or None
Say = Callable[[str], None]


class FetchFailed(Exception):
    """The page could not be fetched; the message is one line for the model."""


@dataclass
class Page:
    url: str  # where the body came from, after the redirects
    status: int
    reason: str
    content_type: str  # the media type, e.g. text/html (empty when none was sent)
    charset: str | None
    kind: Kind
    body: bytes
    length: int | None  # Content-Length, when the server sent one
    truncated: bool  # the cap stopped the reading
    redirects: list[str] = field(default_factory=list)  # the URLs before ``url``


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _origin(url: str) -> tuple[str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    return (parts.hostname or "").lower().rstrip("."), port


def _length(response: httpx.Response) -> int | None:
    try:
        value = int(response.headers.get("content-length", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


async def _read(response: httpx.Response, url: str, max_bytes: int, say: Say) -> tuple[Kind, bytes, bool]:
    """The body up to ``max_bytes`` (decoded from its transfer encoding); a binary body is not read
    past its first chunk."""
    mtype = media_type(response.headers.get("content-type"))
    length = _length(response)
    of = f" of {human_size(length)}" if length is not None else ""
    chunks: list[bytes] = []
    got = 0
    kind: Kind | None = None
    last = 0.0
    async for chunk in response.aiter_bytes():
        if kind is None:
            kind = kind_of(mtype, chunk)
            if kind == "binary":
                return kind, chunk[:0], False
        chunks.append(chunk)
        got += len(chunk)
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY:
            last = now
            say(f"received {human_size(got)}{of}\n")
        if got > max_bytes:
            say(f"stopped at the {human_size(max_bytes)} cap\n")
            return kind, b"".join(chunks)[:max_bytes], True
    return kind if kind is not None else kind_of(mtype, b""), b"".join(chunks), False


def _failure(url: str, exc: Exception) -> FetchFailed:
    host = urlsplit(url).hostname or url
    if isinstance(exc, httpx.TimeoutException):
        return FetchFailed(f"fetching {url} timed out ({type(exc).__name__})")
    if isinstance(exc, httpx.ConnectError):
        return FetchFailed(f"could not connect to {host}: {exc or type(exc).__name__}")
    if isinstance(exc, httpx.ProxyError):
        return FetchFailed(f"the proxy refused {url}: {exc}")
    return FetchFailed(f"fetching {url} failed: {exc or type(exc).__name__}")


async def get_page(url: str, *, check_hop: HopCheck, say: Say, max_bytes: int) -> Page:
    """GET ``url``; a redirect to another host (or port) is followed only when ``check_hop`` returns
    None. FetchFailed with one line when it cannot be fetched."""
    redirects: list[str] = []
    current = url
    for _ in range(MAX_HOPS + 1):
        say(f"GET {current}\n")
        try:
            async with (
                httpx.AsyncClient(timeout=TIMEOUT, trust_env=True, headers=HEADERS) as client,
                client.stream("GET", current) as response,
            ):
                location = response.headers.get("location")
                if response.is_redirect and location:
                    target = urljoin(current, location)
                    if urlsplit(target).scheme.lower() not in ("http", "https"):
                        raise FetchFailed(f"{current} redirects to {target}, which is not http(s)")
                else:
                    kind, body, truncated = await _read(response, current, max_bytes, say)
                    return Page(
                        url=current,
                        status=response.status_code,
                        reason=response.reason_phrase,
                        content_type=media_type(response.headers.get("content-type")),
                        charset=response.charset_encoding,
                        kind=kind,
                        body=body,
                        length=_length(response),
                        truncated=truncated,
                        redirects=redirects,
                    )
        except FetchFailed:
            raise
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise _failure(current, exc) from None
        say(f"redirected to {target}\n")
        if _origin(target) != _origin(current):
            refusal = await check_hop(current, target)
            if refusal is not None:
                raise FetchFailed(f"{current} redirects to {target}, which was not fetched: {refusal}")
        redirects.append(current)
        current = target
    raise FetchFailed(f"{url} redirects more than {MAX_HOPS} times")
