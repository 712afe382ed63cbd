"""The wire both sides of a bench share: a scripted OpenAI-compatible chat-completions server (its
own process, HTTP/1.1 keep-alive, chunked SSE) and the least Python client playing a tool loop
against it (the floor).

A bench subclasses ``ScriptedHandler`` and implements ``frames(raw)``: the SSE events one
request is answered with, built from ``chunk``, ``tool_call`` and ``answer``. ``serve`` runs it and
writes the port to ``DIR/port``; ``floor`` runs a chat loop with sync httpx, calling ``run_tool``
for each tool call, until the model answers.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def chunk(delta: dict[str, Any], finish: str | None = None, usage: bool = False) -> bytes:
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage or finish is not None:
        body["usage"] = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> list[bytes]:
    """One streamed tool call: its name, then its arguments, then ``finish_reason: tool_calls``."""
    call = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    args = {"index": 0, "function": {"arguments": json.dumps(arguments)}}
    return [chunk({"role": "assistant", "content": ""}), chunk({"tool_calls": [call]}),
            chunk({"tool_calls": [args]}), chunk({}, "tool_calls")]  # fmt: skip


def answer(*pieces: str) -> list[bytes]:
    """A streamed answer of ``pieces`` text deltas."""
    return [chunk({"role": "assistant", "content": ""}), *(chunk({"content": p}) for p in pieces),
            chunk({}, "stop")]  # fmt: skip


def tool_results(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in data.get("messages", []) if m.get("role") == "tool"]


class ScriptedHandler(BaseHTTPRequestHandler):
    """Keep-alive, no Nagle, quiet; GET answers a model list; POST answers ``frames(raw)``
    (the request body as sent)."""

    protocol_version = "HTTP/1.1"
    model_id = "bench-10"

    def log_message(self, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:
            pass

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": self.model_id}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        out = [*self.frames(raw), b"data: [DONE]\n\n"]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in out) + b"0\r\n\r\n")
        self.wfile.flush()

    def frames(self, raw: bytes) -> list[bytes]:
        raise NotImplementedError


def serve(handler: type[ScriptedHandler], directory: Path) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    (directory / "port").write_text(str(httpd.server_address[1]))
    httpd.serve_forever()


def floor(
    url: str, model: str, shape: dict[str, Any], run_tool: Callable[[str, dict[str, Any]], str]
) -> None:
    """The least client: sync httpx, ``shape``'s system prompt and tools (the same bytes of context
    as OwlTUI's first request), SSE lines parsed with ``json.loads``, messages appended."""
    import httpx

    messages: list[dict[str, Any]] = [m for m in shape["messages"] if m["role"] == "system"]
    messages.append({"role": "user", "content": "go"})
    with httpx.Client(timeout=60) as client:
        while True:
            body = {"model": model, "messages": messages, "tools": shape.get("tools", []), "stream": True}
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            with client.stream("POST", url + "/chat/completions", json=body) as resp:
                for line in resp.iter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    delta = json.loads(line[6:])["choices"][0]["delta"]
                    if delta.get("content"):
                        text.append(delta["content"])
                    for tc in delta.get("tool_calls") or ():
                        slot = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
                        slot["id"] = tc.get("id") or slot["id"]
                        fn = tc.get("function") or {}
                        slot["name"] = fn.get("name") or slot["name"]
                        slot["arguments"] += fn.get("arguments") or ""
            if not calls:
                sys.stdout.write("".join(text) + "\n")
                return
            wire = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls.values()
            ]
            messages.append({"role": "assistant", "content": "".join(text) or None, "tool_calls": wire})
            for c in calls.values():
                content = run_tool(c["name"], json.loads(c["arguments"]))
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
