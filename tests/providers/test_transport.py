"""The lean HTTP/1.1 transport under httpx: keep-alive, abandoned and stale connections, framing,
TLS, proxies, one body piece per network read."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from owltui.agent.messages import UserMessage
from owltui.agent.model import MessageAssembler, ModelRequest, StreamError
from owltui.providers.http.client import make_client, proxy_configured, routes_lean
from owltui.providers.http.transport import LeanTransport, request_head
from owltui.providers.openai_compat.model import OpenAICompatModel
from tests.providers.helpers import collect, fast_retry, run

REQUEST = ModelRequest(system="s", messages=[UserMessage(text="hi")])


def sse(*texts: str) -> bytes:
    events = [
        b'data: {"choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}\n\n' % t.encode()
        for t in texts
    ]
    events.append(b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    return b"".join(events)


def chunked(*pieces: bytes, end: bool = True) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + (b"0\r\n\r\n" if end else b"")


Respond = Callable[[socket.socket, int], bool]
"""Writes the response to request number N on the socket; False closes the connection."""


class KeepAliveServer:
    """Threaded HTTP/1.1 server on loopback that keeps connections open unless told otherwise."""

    def __init__(self, respond: Respond, wrap: ssl.SSLContext | None = None) -> None:
        self.respond = respond
        self.wrap = wrap
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.answered = 0  # responses written in full (``respond`` returned)
        self.closed = 0  # connections the server closed
        self.requests: list[bytes] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.wrap is not None:
                conn = self.wrap.wrap_socket(conn, server_side=True)
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    part = conn.recv(65536)
                    if not part:
                        return
                    buf += part
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    buf += conn.recv(65536)
                with self.lock:
                    self.requests.append(head + b"\r\n\r\n" + buf[:length])
                    n = len(self.requests)
                buf = buf[length:]
                keep = self.respond(conn, n)
                with self.lock:
                    self.answered += 1
                if not keep:
                    return
        except OSError:
            pass
        finally:
            conn.close()
            with self.lock:
                self.closed += 1

    def close(self) -> None:
        self.sock.close()

    @property
    def url(self) -> str:
        return f"{'https' if self.wrap else 'http'}://127.0.0.1:{self.port}/v1"


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


@pytest.fixture
def served() -> Iterator[Callable[..., KeepAliveServer]]:
    servers: list[KeepAliveServer] = []

    def make(respond: Respond, wrap: ssl.SSLContext | None = None) -> KeepAliveServer:
        servers.append(KeepAliveServer(respond, wrap))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def model(url: str, **kw: object) -> OpenAICompatModel:
    return OpenAICompatModel("m", api_key="k", base_url=url, retry=fast_retry(), **kw)  # type: ignore[arg-type]


async def text(m: OpenAICompatModel) -> str:
    """One call's text (or its error), keeping the model's client open (``collect`` closes it)."""
    asm = MessageAssembler(m.name)
    async for ev in m.stream(REQUEST):
        if isinstance(ev, StreamError):
            return ev.message
        asm.feed(ev)
    return asm.finish().text


def texts(
    url: str, n: int, between: Callable[[OpenAICompatModel, int], Awaitable[None]] | None = None
) -> list[str]:
    """``n`` calls' texts from one model (its client kept open across them, closed at the end);
    ``between(model, k)`` is awaited after the k-th call."""
    m = model(url)

    async def calls() -> list[str]:
        out = []
        for _ in range(n):
            out.append(await text(m))
            if between is not None:
                await between(m, len(out))
        await m.aclose()
        return out

    return run(calls())


def lingering(m: OpenAICompatModel) -> bool:
    """The model's transport still reads, in the background, the end of a response it stopped at."""
    client = m._own_client
    return client is not None and bool(client._transport._lingering)  # type: ignore[attr-defined]


async def until(cond: Callable[[], bool], within: float = 5.0) -> None:
    """Wait until ``cond()`` holds (polling: the server runs in its own threads)."""
    async with asyncio.timeout(within):
        while not cond():  # noqa: ASYNC110 - the server's threads change it
            await asyncio.sleep(0.005)


def test_a_model_keeps_one_connection_across_calls(served: Callable[..., KeepAliveServer]) -> None:
    server = served(lambda conn, n: conn.sendall(HEAD + chunked(sse(f"r{n} ", "ok"))) is None)
    assert texts(server.url, 5) == [f"r{n} ok" for n in range(1, 6)]
    assert server.connections == 1
    assert b"POST /v1/chat/completions HTTP/1.1" in server.requests[0]


def test_a_body_left_unfinished_closes_the_connection_without_waiting(
    served: Callable[..., KeepAliveServer],
) -> None:
    def respond(conn: socket.socket, n: int) -> bool:
        if n == 1:  # the stream ends ([DONE]) but the body never does: no final chunk
            conn.sendall(HEAD + chunked(sse("first"), end=False))
            time.sleep(2)
            return False
        conn.sendall(HEAD + chunked(sse("second")))
        return True

    server = served(respond)
    m = model(server.url)

    async def calls() -> tuple[str, str, float]:
        start = time.perf_counter()
        first = await text(m)
        took = time.perf_counter() - start
        second = await text(m)
        await m.aclose()
        return first, second, took

    first, second, took = run(calls())
    assert (first, second) == ("first", "second")
    assert took < 1.0
    assert server.connections == 2


def test_a_stale_kept_connection_is_replaced_once(served: Callable[..., KeepAliveServer]) -> None:
    # the server closes each connection right after answering, without saying so
    server = served(lambda conn, n: conn.sendall(HEAD + chunked(sse(f"r{n}"))) is not None)

    async def closed(m: OpenAICompatModel, k: int) -> None:  # the kept connection is stale now
        await until(lambda: server.closed >= k)

    assert texts(server.url, 3, closed) == ["r1", "r2", "r3"]
    assert server.connections == 3


def test_body_until_close_and_content_length(served: Callable[..., KeepAliveServer]) -> None:
    def respond(conn: socket.socket, n: int) -> bool:
        if n == 1:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                + sse("until ", "close")
            )
            return False
        body = sse("with length")
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        return True

    server = served(respond)
    assert texts(server.url, 2) == ["until close", "with length"]


def test_one_body_piece_per_network_read(served: Callable[..., KeepAliveServer]) -> None:
    pieces = [b"data: %d\n\n" % i for i in range(200)]
    server = served(lambda conn, n: conn.sendall(HEAD + chunked(*pieces)) is None)

    async def read() -> list[bytes]:
        async with httpx.AsyncClient(transport=LeanTransport()) as client:
            async with client.stream("GET", server.url) as resp:
                await until(lambda: server.answered == 1)  # everything was sent before the first read
                return [chunk async for chunk in resp.aiter_raw()]

    got = run(read())
    assert b"".join(got) == b"".join(pieces)
    assert len(got) < 5


def test_idle_timeout_is_per_read(served: Callable[..., KeepAliveServer]) -> None:
    def respond(conn: socket.socket, n: int) -> bool:
        conn.sendall(HEAD)
        for i in range(4):  # 4 × 0.15 s: longer than the timeout in all, never between two reads
            time.sleep(0.15)
            conn.sendall(chunked(b"data: %d\n\n" % i, end=False))
        conn.sendall(b"0\r\n\r\n")
        return True

    server = served(respond)

    async def read(limit: float) -> bytes:
        async with httpx.AsyncClient(
            transport=LeanTransport(), timeout=httpx.Timeout(5, read=limit)
        ) as client:
            async with client.stream("GET", server.url) as resp:
                return b"".join([chunk async for chunk in resp.aiter_raw()])

    assert run(read(0.4)).count(b"data:") == 4
    with pytest.raises(httpx.ReadTimeout):
        run(read(0.05))


def test_request_head_refuses_line_breaks() -> None:
    ok = httpx.Request("POST", "http://x/v1", headers={"a": "b"}, content=b"{}")
    assert request_head(ok).startswith(b"POST /v1 HTTP/1.1\r\n")
    bad = httpx.Request("POST", "http://x/v1", headers={"a": "b\r\nx-injected: 1"})
    with pytest.raises(httpx.LocalProtocolError):
        request_head(bad)


def test_proxies_are_decided_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert not proxy_configured()
    lean = make_client(httpx.Timeout(5), verify=False)
    assert isinstance(lean._transport, LeanTransport) and not lean._mounts
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert proxy_configured()
    client = make_client(httpx.Timeout(5), verify=False)
    assert routes_lean(client, httpx.URL("https://localhost:8443/v1"))  # exempt: the lean transport
    assert routes_lean(client, httpx.URL("http://example.com/v1"))  # no proxy for http
    assert not routes_lean(client, httpx.URL("https://example.com/v1"))  # httpx's, through the proxy
    run(lean.aclose())
    run(client.aclose())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_tls_verifies_with_the_context_httpx_builds(
    tmp_path: Path, served: Callable[..., KeepAliveServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server = served(lambda conn, n: conn.sendall(HEAD + chunked(sse("secure"))) is None, wrap=ctx)
    out = run(collect(model(server.url), REQUEST))
    assert out.error is not None and "certificate verify failed" in out.error.message  # not trusted
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert texts(server.url, 2) == ["secure", "secure"]


def test_cookies_still_kept_and_sent_back(served: Callable[..., KeepAliveServer]) -> None:
    def respond(conn: socket.socket, n: int) -> bool:
        extra = b"set-cookie: lb=node7; Path=/\r\n" if n == 1 else b""
        conn.sendall(HEAD.replace(b"\r\n\r\n", b"\r\n" + extra + b"\r\n", 1) + chunked(sse(f"r{n}")))
        return True

    server = served(respond)
    assert texts(server.url, 3) == ["r1", "r2", "r3"]
    assert b"cookie: lb=node7" not in server.requests[0].lower()
    assert all(b"cookie: lb=node7" in r.lower() for r in server.requests[1:])


def test_a_late_closing_chunk_still_keeps_the_connection(served: Callable[..., KeepAliveServer]) -> None:
    def respond(conn: socket.socket, n: int) -> bool:
        conn.sendall(HEAD + chunked(sse(f"r{n}"), end=False))  # the stream's end, not the body's
        time.sleep(0.05)
        conn.sendall(b"0\r\n\r\n")
        return True

    server = served(respond)

    async def closing_chunk_read(m: OpenAICompatModel, k: int) -> None:  # it arrives meanwhile
        await until(lambda: server.answered >= k and not lingering(m))

    assert texts(server.url, 3, closing_chunk_read) == ["r1", "r2", "r3"]
    assert server.connections == 1


def test_httpx_own_transport_keeps_its_connection_too(served: Callable[..., KeepAliveServer]) -> None:
    # a client passed in (or httpx's own transport, used when a proxy is set): the closing chunk
    # after the model's last event is read, so httpx's pool keeps the connection
    def respond(conn: socket.socket, n: int) -> bool:
        conn.sendall(HEAD + chunked(sse(f"r{n}"), end=False))
        time.sleep(0.01)
        conn.sendall(b"0\r\n\r\n")
        return True

    server = served(respond)

    async def calls() -> list[str]:
        async with httpx.AsyncClient() as client:
            m = model(server.url, client=client)
            return [await text(m) for _ in range(3)]

    assert run(calls()) == ["r1", "r2", "r3"]
    assert server.connections == 1
