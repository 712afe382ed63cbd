"""The wire both sides of a bench share: a scripted OpenAI-compatible chat-completions server (its
own process, HTTP/1.1 keep-alive, chunked SSE) and the least Python client playing a tool loop
against it (the floor).

A bench subclasses ``ScriptedHandler`` and implements ``frames(raw)``: the SSE events one
request is answered with, built from ``chunk``, ``tool_call`` and ``answer``. ``serve`` runs it and
writes the port to ``DIR/port``; ``start_server`` starts a bench's own ``--serve`` and waits for it;
``bench_env`` is the children's environment; ``print_mode(url)`` OwlTUI's command line against it
(the model id added per run); ``floor`` runs a chat loop with sync httpx, calling ``run_tool``
for each tool call, until the model answers.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
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


def start_server(script: str, directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``python SCRIPT --serve DIR`` (the bench's ``serve``), once it listens; and its base URL."""
    server = subprocess.Popen([sys.executable, script, "--serve", str(directory)])
    while not (directory / "port").exists():
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{(directory / 'port').read_text()}/v1"


def bench_env(base: Path, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """This environment without API keys (and ``drop``), with .pyc files written, config and data
    under ``base``, a stand-in key for the scripted server."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in ("PYTHONDONTWRITEBYTECODE", *drop)
    }
    env.update(XDG_DATA_HOME=str(base / "data"), XDG_CONFIG_HOME=str(base / "cfg"), OPENAI_API_KEY="x")
    return env


def owltui_cmd() -> list[str]:
    script = Path(sys.executable).with_name("owltui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "owltui.cli"]


def print_mode(url: str) -> list[str]:
    """``owltui -p go`` against the scripted server, every call allowed, no session, rounds enough."""
    return [*owltui_cmd(), "-p", "go", "--provider", "openai", "--base-url", url, "--yes", "--no-session",
            "--max-rounds", "1000"]  # fmt: skip


def arguments() -> argparse.ArgumentParser:
    """The options every wire bench has: its two child roles, the pairs and the two round counts."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", type=Path)
    ap.add_argument("--floor", nargs=3, metavar=("URL", "MODEL", "DIR"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--rounds", type=int, nargs=2, default=(10, 150))
    return ap


def child_role(
    args: argparse.Namespace, serve: Callable[[Path], None], floor: Callable[[str, str, Path], None]
) -> bool:
    """Run as the server (``--serve DIR``) or the floor (``--floor URL MODEL DIR``) when asked to."""
    if args.serve:
        serve(args.serve)
    elif args.floor:
        floor(args.floor[0], args.floor[1], Path(args.floor[2]))
    return bool(args.serve or args.floor)
