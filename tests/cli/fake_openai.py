"""A loopback OpenAI-compatible Chat Completions server the tests script turn by turn.

Each request pops the next ``Turn``: text and tool calls streamed as SSE, optionally held open
(``hold``: the text is sent, then the stream waits for the event) or answered with an HTTP error.
Request bodies are recorded and announced on ``arrivals`` so tests wait on them, never sleep.
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    hold: threading.Event | None = None  # after the text, wait for this before finishing
    status: int = 200
    error: str = "boom"
    pieces: int = 1  # split the text in this many deltas


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class FakeOpenAI:
    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.requests: list[dict[str, Any]] = []
        self.arrivals: queue.Queue[dict[str, Any]] = queue.Queue()
        self.holds: list[threading.Event] = []
        self._lock = threading.Lock()
        self._calls = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"data": [{"id": "fake-model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                data = json.loads(self.rfile.read(length) or b"{}")
                data["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(data)
                    turn = server.turns.pop(0) if server.turns else Turn(text="(no more turns)")
                server.arrivals.put(data)
                try:
                    server._reply(self, turn)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def add(self, *turns: Turn) -> FakeOpenAI:
        with self._lock:
            self.turns.extend(turns)
            self.holds.extend(t.hold for t in turns if t.hold is not None)
        return self

    def wait_request(self, timeout: float = 30.0) -> dict[str, Any]:
        """The next request to arrive (raises queue.Empty after ``timeout``)."""
        return self.arrivals.get(timeout=timeout)

    def _reply(self, h: BaseHTTPRequestHandler, turn: Turn) -> None:
        if turn.status != 200:
            body = json.dumps({"error": {"message": turn.error}}).encode()
            h.send_response(turn.status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.end_headers()
        w = h.wfile
        w.write(chunk({"role": "assistant", "content": ""}))
        text = turn.text
        n = max(1, turn.pieces)
        size = max(1, -(-len(text) // n)) if text else 1
        for i in range(0, len(text), size):
            w.write(chunk({"content": text[i : i + size]}))
            w.flush()
        if turn.hold is not None:
            turn.hold.wait(60)
        for i, (name, args) in enumerate(turn.calls):
            self._calls += 1
            w.write(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": f"call_{self._calls}",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                        ]
                    }
                )
            )
        w.write(chunk({}, "tool_calls" if turn.calls else "stop"))
        usage = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        }
        w.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
        w.flush()

    def close(self) -> None:
        for ev in self.holds:
            ev.set()
        self.httpd.shutdown()
        self.httpd.server_close()
