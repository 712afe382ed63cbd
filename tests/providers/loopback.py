"""A loopback HTTP/1.1 server for provider tests: serves recorded bytes exactly as told.

Each reply sets the status, headers, body and how the body goes out: in pieces (whole, per line,
every N bytes, explicit sizes), with a pause between pieces, cut off mid-stream (no final chunk), or
stalled (silent until the client hangs up). Requests are recorded (path, headers, body), and
``client_closed`` is set when the client closes a stalled connection, so tests wait on events, not sleeps.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Chunking = str | int | list[int] | None


def split(body: bytes, chunking: Chunking, seed: int = 7) -> list[bytes]:
    """Pieces of ``body``: None/"whole", "lines", "bytes", an int size, "random" or a list of sizes."""
    if chunking is None or chunking == "whole":
        return [body] if body else []
    if chunking == "lines":
        return [ln for ln in body.splitlines(keepends=True)]  # test helper only; bytes lines
    if chunking == "bytes":
        chunking = 1
    if chunking == "random":
        rng = random.Random(seed)
        out, i = [], 0
        while i < len(body):
            n = rng.randint(1, 40)
            out.append(body[i : i + n])
            i += n
        return out
    if isinstance(chunking, int):
        return [body[i : i + chunking] for i in range(0, len(body), chunking)]
    if isinstance(chunking, str):
        raise ValueError(f"unknown chunking {chunking!r}")
    out, i = [], 0
    for size in chunking:
        out.append(body[i : i + size])
        i += size
    if i < len(body):
        out.append(body[i:])
    return out


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunking: Chunking = None
    delay: float = 0.0  # pause between pieces (pacing, not synchronisation)
    cut_after: int | None = None  # drop the connection after this many body bytes
    stall_after: int | None = None  # go silent after this many body bytes until the client hangs up
    stream: bool | None = None  # chunked transfer encoding; default: status 200


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class LoopbackServer:
    """Threaded server on 127.0.0.1; one request per connection (``Connection: close``)."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.replies: list[Reply] = []
        self.default = Reply(status=500, body=b'{"error":{"message":"no reply queued"}}')
        self.requests: list[Recorded] = []
        self.client_closed = threading.Event()
        self.stalled = threading.Event()
        self.on_request: Callable[[Recorded], None] | None = None
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._closing = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def queue(self, *replies: Reply) -> LoopbackServer:
        with self._lock:
            self.replies.extend(replies)
        return self

    def reset(self) -> None:
        with self._lock:
            self.replies.clear()
            self.requests.clear()
        self.client_closed.clear()
        self.stalled.clear()

    def close(self) -> None:
        self._closing = True
        self._sock.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closing:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> Recorded | None:
        data = b""
        while b"\r\n\r\n" not in data:
            part = conn.recv(65536)
            if not part:
                return None
            data += part
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            part = conn.recv(65536)
            if not part:
                break
            body += part
        return Recorded(method, path, headers, body)

    def _serve(self, conn: socket.socket) -> None:
        try:
            req = self._read_request(conn)
            if req is None:
                return
            with self._lock:
                self.requests.append(req)
                reply = self.replies.pop(0) if self.replies else self.default
            if self.on_request is not None:
                self.on_request(req)
            self._respond(conn, reply)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass
            with self._lock:
                if conn in self._conns:
                    self._conns.remove(conn)

    def _respond(self, conn: socket.socket, r: Reply) -> None:
        stream = r.status == 200 if r.stream is None else r.stream
        headers = {
            "content-type": "text/event-stream" if stream else "application/json",
            **r.headers,
            "connection": "close",
        }
        if stream:
            headers["transfer-encoding"] = "chunked"
        else:
            headers["content-length"] = str(len(r.body))
        head = f"HTTP/1.1 {r.status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        conn.sendall(head.encode("latin-1"))
        if not stream:
            conn.sendall(r.body)
            return
        limit = min(x for x in (r.cut_after, r.stall_after, len(r.body)) if x is not None)
        pieces = split(r.body[:limit], r.chunking)
        for i, piece in enumerate(pieces):
            if i and r.delay:
                time.sleep(r.delay)
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        if r.cut_after is not None and r.cut_after <= limit:
            conn.shutdown(socket.SHUT_RDWR)
            return
        if r.stall_after is not None:
            self.stalled.set()
            conn.settimeout(60)
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            self.client_closed.set()
            return
        conn.sendall(b"0\r\n\r\n")
        # wait for the client to finish with the connection so closing is observable too
        conn.settimeout(5)
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass
        self.client_closed.set()
