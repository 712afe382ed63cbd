"""The shared Node helper: server-everything started over Streamable HTTP answers ``initialize`` at
the URL it yields and is gone after; over stdio, the spec it gives answers ``initialize`` too."""

from __future__ import annotations

import json
import subprocess

import httpx

from tests.tools.mcp_node import everything_http, everything_stdio_spec, node_env, require_node_tools

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def test_everything_over_http_answers_then_stops() -> None:
    require_node_tools()
    with everything_http() as url:
        r = httpx.post(url, json=INIT, headers={"Accept": "application/json, text/event-stream"}, timeout=20)
        assert r.status_code == 200 and '"serverInfo"' in r.text
    try:
        httpx.post(url, json=INIT, timeout=5)
    except httpx.ConnectError:
        return
    raise AssertionError("server-everything still answers after the context closed")


def test_everything_over_stdio_answers_initialize() -> None:
    require_node_tools()
    spec = everything_stdio_spec()
    argv = [str(spec["command"]), *map(str, spec["args"])]  # type: ignore[call-overload]
    with subprocess.Popen(
        argv,
        env=node_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INIT) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        proc.stdin.close()
        proc.wait(timeout=20)
    assert reply["id"] == 1 and "serverInfo" in reply["result"]
