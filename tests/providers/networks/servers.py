"""Real network peers for provider tests, each on loopback in its own threads: an HTTP(S) server
whose handler writes raw bytes, a SOCKS5 proxy, an HTTP CONNECT proxy that wants credentials, and a
private CA (trustme) for TLS. They count what they see, so tests assert on it, not on timings."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from collections.abc import Callable

Handler = Callable[[socket.socket], None]
"""Serves one accepted connection (already TLS-wrapped if the server has a context)."""


def read_request(sock: socket.socket) -> bytes:
    """One HTTP request (head and a Content-Length body) off ``sock``."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        part = sock.recv(65536)
        if not part:
            return buf
        buf += part
    head, _, body = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        part = sock.recv(65536)
        if not part:
            break
        body += part
    return head + b"\r\n\r\n" + body


def reset(sock: socket.socket) -> None:
    """Close ``sock`` with a TCP reset (linger on, zero seconds), as a dying relay does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Server:
    """Accepts on 127.0.0.1 and runs ``handler`` per connection in a thread; counts connections."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self.failures: list[BaseException] = []  # TLS handshakes refused by the client, and such
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
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.handler(conn)
        except OSError as exc:
            with self.lock:
                self.failures.append(exc)
        finally:
            conn.close()

    def url(self, scheme: str = "http", host: str = "127.0.0.1") -> str:
        return f"{scheme}://{host}:{self.port}/v1"

    def close(self) -> None:
        self.sock.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        part = sock.recv(n - len(data))
        if not part:
            raise ConnectionError("the client went away mid-handshake")
        data += part
    return data


class Socks5Proxy:
    """A SOCKS5 proxy (no authentication, CONNECT, IPv4 or a host name) that records the targets."""

    def __init__(self) -> None:
        self.targets: list[tuple[str, int]] = []
        self.server = Server(self._serve)
        self.port = self.server.port

    def _serve(self, client: socket.socket) -> None:
        _, count = _exact(client, 2)
        _exact(client, count)  # the methods offered; "no authentication" it is
        client.sendall(b"\x05\x00")
        _, command, _, kind = _exact(client, 4)
        if kind == 1:
            host = socket.inet_ntoa(_exact(client, 4))
        elif kind == 3:
            host = _exact(client, _exact(client, 1)[0]).decode("idna")
        else:
            client.sendall(b"\x05\x08\x00\x01" + bytes(6))  # address type not supported
            return
        (port,) = struct.unpack("!H", _exact(client, 2))
        self.targets.append((host, port))
        if command != 1:
            client.sendall(b"\x05\x07\x00\x01" + bytes(6))
            return
        upstream = socket.create_connection((host, port))
        client.sendall(b"\x05\x00\x00\x01" + bytes(6))
        back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
        back.start()
        _pipe(client, upstream)
        back.join()
        upstream.close()

    def close(self) -> None:
        self.server.close()


class AuthProxy:
    """An HTTP proxy that answers every request, CONNECT included, with 407 and records it."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.server = Server(self._serve)
        self.port = self.server.port

    def _serve(self, client: socket.socket) -> None:
        self.requests.append(read_request(client))
        client.sendall(
            b'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="corp"\r\n'
            b"content-length: 0\r\nconnection: close\r\n\r\n"
        )

    def close(self) -> None:
        self.server.close()
