"""The providers on real network paths: TLS with a private CA made here, SOCKS5 and CONNECT proxies
chosen per request (``NO_PROXY`` exempt hosts stay on the lean transport), resets inside a body that
ends with the connection, a cancelled TLS stream whose peer went silent, and HTML error pages."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme

from owltui.agent.messages import UserMessage
from owltui.agent.model import ModelRequest, StreamError, TextDelta
from owltui.providers.http.client import routes_lean
from owltui.providers.openai_compat.model import OpenAICompatModel
from tests.providers.helpers import collect, fast_retry, run
from tests.providers.networks.servers import AuthProxy, Server, Socks5Proxy, read_request, reset

REQUEST = ModelRequest(system="s", messages=[UserMessage(text="hi")])
ENV = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ssl_cert_file", "ssl_cert_dir")


def event(text: str) -> bytes:
    return (
        b'data: {"choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}\n\n' % text.encode()
    )


END = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
UNTIL_CLOSE = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"  # no length, no chunking
CHUNKED = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def answer(text: str) -> Server:
    """A server answering every request with ``text`` as an event stream, then closing."""

    def serve(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(UNTIL_CLOSE + event(text) + END)

    return Server(serve)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.fixture
def ca(tmp_path: Path) -> Iterator[tuple[trustme.CA, Path]]:
    authority = trustme.CA()
    pem = tmp_path / "private-ca.pem"
    authority.cert_pem.write_to_path(str(pem))
    yield authority, pem


def model(url: str, attempts: int = 4) -> OpenAICompatModel:
    return OpenAICompatModel("m", api_key="k", base_url=url, retry=fast_retry(max_attempts=attempts))


def tls_server(authority: trustme.CA, *names: str) -> Server:
    ctx = ssl_server_context(authority, *names)

    def serve(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(UNTIL_CLOSE + event("secure") + END)

    return Server(serve, tls=ctx)


def ssl_server_context(authority: trustme.CA, *names: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert(*names).configure_cert(ctx)
    return ctx


# -- certificates ---------------------------------------------------------------------------------


def test_a_private_ca_is_trusted_through_ssl_cert_file(
    ca: tuple[trustme.CA, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    authority, pem = ca
    server = tls_server(authority, "127.0.0.1")
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    out = run(collect(model(server.url("https")), REQUEST))
    assert out.error is None and out.message.text == "secure"


def test_an_untrusted_certificate_fails_once_and_says_what_to_set(ca: tuple[trustme.CA, Path]) -> None:
    authority, _ = ca
    server = tls_server(authority, "127.0.0.1")
    out = run(collect(model(server.url("https")), REQUEST))
    assert out.error is not None and not out.retries  # retrying meets the same certificate
    assert server.connections == 1
    message = out.error.message
    assert "certificate verify failed" in message and "SSL_CERT_FILE" in message and "certifi" in message


def test_a_certificate_for_another_name_fails_once(
    ca: tuple[trustme.CA, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    authority, pem = ca
    server = tls_server(authority, "other.example")
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))  # trusted, but issued to another name
    out = run(collect(model(server.url("https")), REQUEST))
    assert out.error is not None and not out.retries and server.connections == 1
    assert "another host" in out.error.message and "127.0.0.1" in out.error.message


def test_an_unloadable_ssl_cert_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    out = run(collect(model("https://127.0.0.1:9/v1"), REQUEST))
    assert out.error is not None and not out.retries
    assert f"SSL_CERT_FILE={missing}" in out.error.message


# -- bodies that end with the connection ------------------------------------------------------------


def test_a_reset_inside_an_until_close_body_is_a_broken_response() -> None:
    first_text_seen = threading.Event()

    def serve(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(UNTIL_CLOSE + event("partial") + b'data: {"choices":[{"ind')
        first_text_seen.wait(10)
        reset(sock)

    server = Server(serve)

    async def call() -> list[object]:
        m = model(server.url())
        seen: list[object] = []
        async for ev in m.stream(REQUEST):
            seen.append(ev)
            if isinstance(ev, TextDelta):
                first_text_seen.set()
        await m.aclose()
        return seen

    events = run(call())
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and "connection failed mid-response" in errors[0].message, errors
    assert "could not understand" not in errors[0].message


def test_a_reset_before_any_content_of_an_until_close_body_is_retried() -> None:
    def serve(sock: socket.socket) -> None:
        read_request(sock)
        if server.connections == 1:
            sock.sendall(UNTIL_CLOSE + b'data: {"choi')
            reset(sock)
        else:
            sock.sendall(UNTIL_CLOSE + event("again") + END)

    server = Server(serve)
    out = run(collect(model(server.url()), REQUEST))
    assert out.error is None and out.message.text == "again" and len(out.retries) == 1


def test_a_clean_close_still_ends_an_until_close_body() -> None:
    server = answer("whole")
    out = run(collect(model(server.url()), REQUEST))
    assert out.error is None and out.message.text == "whole"


# -- aborting -------------------------------------------------------------------------------------------


def test_a_cancelled_tls_stream_on_a_dead_path_closes_its_socket_at_once(
    ca: tuple[trustme.CA, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    authority, pem = ca
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    hung_up = threading.Event()

    def serve(sock: socket.socket) -> None:
        raw = socket.socket(fileno=os.dup(sock.fileno()))  # the same TCP socket, under the TLS layer
        read_request(sock)
        sock.sendall(CHUNKED + b"%x\r\n%s\r\n" % (len(event("first")), event("first")))
        raw.settimeout(20)
        try:  # the path goes dead: read what comes (a TLS goodbye, say) and never answer
            while raw.recv(65536):
                pass
            hung_up.set()  # the client's socket closed
        except OSError:
            pass
        finally:
            raw.close()

    server = Server(serve, tls=ssl_server_context(authority, "127.0.0.1"))

    async def cancel_after_first_text() -> bool:
        m = model(server.url("https"))
        got_text = asyncio.Event()

        async def consume() -> None:
            async for ev in m.stream(REQUEST):
                if isinstance(ev, TextDelta):
                    got_text.set()

        task = asyncio.create_task(consume())
        await got_text.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        closed = await asyncio.to_thread(hung_up.wait, 10)  # a guard: the old TLS goodbye took 30 s
        await m.aclose()
        return closed

    assert run(cancel_after_first_text())


# -- proxies ----------------------------------------------------------------------------------------------


def test_a_socks5_proxy_variable_works(monkeypatch: pytest.MonkeyPatch) -> None:
    backend, socks = answer("via socks"), Socks5Proxy()
    monkeypatch.setenv("ALL_PROXY", f"socks5h://127.0.0.1:{socks.port}")
    out = run(collect(model(backend.url(host="localhost")), REQUEST))
    assert out.error is None and out.message.text == "via socks"
    assert socks.targets == [("localhost", backend.port)]


def test_a_no_proxy_host_keeps_the_lean_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    backend, socks = answer("direct"), Socks5Proxy()
    monkeypatch.setenv("ALL_PROXY", f"socks5://127.0.0.1:{socks.port}")
    monkeypatch.setenv("NO_PROXY", "example.org,127.0.0.1")
    m = model(backend.url())

    async def call() -> tuple[bool, object]:
        out = await collect(m, REQUEST)
        client = m._http()
        lean = routes_lean(client, httpx.URL(backend.url())), routes_lean(client, httpx.URL("http://x.io"))
        await m.aclose()
        return lean == (True, False), out

    lean, out = run(call())
    assert lean and out.error is None and out.message.text == "direct"  # type: ignore[attr-defined]
    assert socks.targets == []


def test_socks_without_socksio_fails_in_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "socksio", None)  # as if httpx[socks] were not installed
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    monkeypatch.setenv("NO_PROXY", "localhost")
    out = run(collect(model("http://127.0.0.1:9/v1"), REQUEST))
    assert out.error is not None and not out.retries
    assert "ALL_PROXY=socks5://127.0.0.1:1080" in out.error.message and "socksio" in out.error.message
    assert "\n" not in out.error.message
    backend = answer("still direct")  # an exempt host is not touched by the unusable proxy
    out = run(collect(model(backend.url(host="localhost")), REQUEST))
    assert out.error is None and out.message.text == "still direct"


@pytest.mark.parametrize("value", ["ftp://proxy.corp:21", "http://[::1:8080", "socks4://u:secret@h:1080"])
def test_a_bad_proxy_url_names_its_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HTTPS_PROXY", value)
    out = run(collect(model("https://api.example.com/v1"), REQUEST))
    assert out.error is not None and not out.retries
    assert "HTTPS_PROXY=" in out.error.message and "secret" not in out.error.message


def test_a_connect_proxy_asking_for_credentials_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = AuthProxy()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
    out = run(collect(model("https://api.example.com/v1"), REQUEST))
    assert out.error is not None and not out.retries and len(proxy.requests) == 1
    assert proxy.requests[0].startswith(b"CONNECT api.example.com:443 ")
    assert "407" in out.error.message and "HTTPS_PROXY" in out.error.message
    assert "user:password@" in out.error.message


def test_a_plain_http_proxy_asking_for_credentials_says_where_they_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = AuthProxy()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    out = run(collect(model("http://api.example.com/v1"), REQUEST))
    assert out.error is not None and not out.retries and len(proxy.requests) == 1
    assert "HTTP 407" in out.error.message and "user:password@" in out.error.message


# -- error pages ----------------------------------------------------------------------------------------

NGINX_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
    b"</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n"
)


@pytest.mark.parametrize(
    ("status", "title"), [(502, "502 Bad Gateway"), (413, "413 Request Entity Too Large")]
)
def test_an_html_error_page_shows_its_title(status: int, title: str) -> None:
    page = NGINX_502.replace(b"502 Bad Gateway", title.encode())

    def serve(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(
            b"HTTP/1.1 %d X\r\ncontent-type: text/html\r\ncontent-length: %d\r\n\r\n%s"
            % (status, len(page), page)
        )

    server = Server(serve)
    out = run(collect(model(server.url(), attempts=2), REQUEST))
    assert out.error is not None and "<" not in out.error.message
    assert f"{title} (HTTP {status})" in out.error.message
