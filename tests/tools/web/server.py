"""A loopback HTTP server for the ``fetch`` tests, reachable under two host names (``127.0.0.1`` and
``localhost``): pages, text, JSON, a binary, a huge page, redirects that set a cookie, an echo of
the request's headers, and a slow page that tells when the client has gone."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE = b"""<!doctype html><html><head><title>Owl page</title><script>steal()</script>
<style>p { color: red }</style></head><body><h1>Owls</h1>
<p>Owls are <b>birds</b>. See <a href="/more">more</a>.</p><ul><li>barn</li><li>snowy</li></ul>
</body></html>"""
HUGE_PARAGRAPHS = 4000  # ~ 300 KB of Markdown: a large result
BINARY = bytes(range(256)) * 64  # 16 KB


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (the tests abort and stop reading on purpose) is no error."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Web:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.slow_started = threading.Event()
        self.slow_closed = threading.Event()
        self.release = threading.Event()
        web = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def send(self, body: bytes, ctype: str, status: int = 200, **headers: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                web.requests.append(
                    {"path": url.path, "host": self.headers.get("Host", ""), "headers": dict(self.headers)}
                )
                try:
                    web.route(self, url.path, query)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, h: Any, path: str, query: dict[str, str]) -> None:
        if path == "/page":
            h.send(PAGE, "text/html; charset=utf-8")
        elif path == "/text":
            h.send("plain café\n".encode(), "text/plain; charset=utf-8")
        elif path == "/json":
            h.send(b'{"owl": [1, 2]}', "application/json")
        elif path == "/bin":
            h.send(BINARY, "application/octet-stream")
        elif path == "/missing":
            h.send(b"<html><body><p>No owl here</p></body></html>", "text/html", status=404)
        elif path == "/huge":
            body = "".join(
                f"<p>paragraph {i} of the huge page about owls and their habits</p>\n"
                for i in range(HUGE_PARAGRAPHS)
            )
            h.send(f"<html><body>{body}</body></html>".encode(), "text/html")
        elif path == "/endless":  # more than the cap
            h.send(b"x" * (6 * 1024 * 1024), "text/plain")
        elif path == "/redirect":
            h.send(
                b"",
                "text/plain",
                status=302,
                Location=query["to"],
                Set_Cookie="session=hop1secret; Path=/",
            )
        elif path == "/echo":
            h.send(json.dumps(dict(h.headers)).encode(), "application/json")
        elif path == "/slow":
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", "1000000")
            h.end_headers()
            self.slow_started.set()  # before the first part: a client that has it sees this set
            h.wfile.write(b"first part of a slow page\n")
            h.wfile.flush()
            h.connection.settimeout(30)
            try:  # the client sends nothing more: the read ends when it closes the connection
                got = h.rfile.read(1)
            except TimeoutError:
                got = b"(still open)"
            except OSError:
                got = b""
            if got == b"":
                self.slow_closed.set()
        else:
            h.send(b"not found", "text/plain", status=404)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
