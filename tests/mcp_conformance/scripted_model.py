"""A loopback OpenAI-compatible model that calls every MCP tool it is offered, once.

The first request whose tool list holds ``mcp__*`` tools is answered with one call per such tool,
arguments made up from each tool's JSON schema; every later request gets a short final text.
Replies are streamed with the same chunks as ``tests.cli.fake_openai``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.cli.fake_openai import chunk

FINAL = "conformance run done"


def sample(schema: dict[str, Any]) -> Any:
    """A value valid for a simple JSON schema: its default, first enum member, or a typed filler."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind in ("number", "integer"):
        return 2
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return arguments(schema)
    return "test"


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool's input schema: every required property (all, when none is required)."""
    props: dict[str, Any] = schema.get("properties") or {}
    wanted = schema.get("required") or list(props)
    return {name: sample(props.get(name) or {}) for name in wanted}


class ToolCallingModel:
    """The model server; ``call_tools=False`` answers every request with text only."""

    def __init__(self, call_tools: bool = True) -> None:
        self.call_tools = call_tools
        self.requests: list[dict[str, Any]] = []
        self.called: list[str] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                model._send(self, "application/json", json.dumps({"data": [{"id": "fake-model"}]}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                data = json.loads(self.rfile.read(length) or b"{}")
                try:
                    model._answer(self, data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def _plan(self, data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            self.requests.append(data)
            if self.called or not self.call_tools:
                return []
            calls = []
            for tool in data.get("tools") or []:
                fn = tool.get("function") or {}
                name = fn.get("name", "")
                if name.startswith("mcp__"):
                    calls.append((name, arguments(fn.get("parameters") or {})))
            self.called = [name for name, _ in calls]
            return calls

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, kind: str, body: bytes) -> None:
        h.send_response(200)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _answer(self, h: BaseHTTPRequestHandler, data: dict[str, Any]) -> None:
        calls = self._plan(data)
        parts = [chunk({"role": "assistant", "content": ""})]
        if not calls:
            parts.append(chunk({"content": FINAL}))
        for i, (name, args) in enumerate(calls):
            call = {"index": i, "id": f"call_{i}", "type": "function"}
            call["function"] = {"name": name, "arguments": json.dumps(args)}
            parts.append(chunk({"tool_calls": [call]}))
        parts.append(chunk({}, "tool_calls" if calls else "stop"))
        parts.append(b"data: [DONE]\n\n")
        self._send(h, "text/event-stream", b"".join(parts))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
