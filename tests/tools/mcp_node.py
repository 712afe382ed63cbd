"""Locating the Node MCP tools the tests run (node 22, the reference server-everything, the
official conformance suite) and starting server-everything over stdio or Streamable HTTP.

The tools live in one npm prefix: ``$OWLTUI_NODE_TOOLS`` (default ``~/.cache/owltui-ci/node-tools``,
installed by ``.ci/node-tools``). Without them the tests that need them skip with the reason, unless
``OWLTUI_REQUIRE_NODE_TOOLS=1`` (CI), where a missing install fails the test instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DEFAULT_DIR = Path.home() / ".cache" / "owltui-ci" / "node-tools"
INSTALL_HINT = "run .ci/node-tools/install (or set OWLTUI_NODE_TOOLS to a prefix holding node_modules/.bin)"


def node_tools_dir() -> Path:
    """The npm prefix holding ``node_modules/.bin/{node,mcp-server-everything,conformance}``."""
    raw = os.environ.get("OWLTUI_NODE_TOOLS", "").strip()
    return Path(raw).expanduser() if raw else DEFAULT_DIR


def _bin(name: str) -> Path:
    return node_tools_dir() / "node_modules" / ".bin" / name


def node_bin() -> Path:
    """The pinned node executable (node 22 from the ``node`` npm package)."""
    return _bin("node")


def conformance_bin() -> Path:
    """The ``conformance`` CLI of @modelcontextprotocol/conformance."""
    return _bin("conformance")


def everything_bin() -> Path:
    """The ``mcp-server-everything`` entry script."""
    return _bin("mcp-server-everything")


def required() -> bool:
    """True when missing node tools must fail rather than skip (CI sets this)."""
    return os.environ.get("OWLTUI_REQUIRE_NODE_TOOLS", "").strip() == "1"


def missing_tools() -> list[str]:
    """The names of the expected executables that are not installed."""
    return [p.name for p in (node_bin(), everything_bin(), conformance_bin()) if not os.access(p, os.X_OK)]


def require_node_tools() -> None:
    """Skip the calling test when the node tools are absent (fail when they are required)."""
    missing = missing_tools()
    if not missing:
        return
    reason = f"node MCP tools missing in {node_tools_dir()}: {', '.join(missing)}; {INSTALL_HINT}"
    if required():
        pytest.fail(f"OWLTUI_REQUIRE_NODE_TOOLS=1 but {reason}")
    pytest.skip(reason)


def node_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment with the pinned node first on PATH (the ``.bin`` scripts use ``env node``)."""
    env = dict(os.environ)
    env["PATH"] = f"{node_bin().parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra or {})
    return env


def everything_command(*mode: str) -> list[str]:
    """argv starting server-everything over stdio, run by the pinned node (no PATH lookup)."""
    return [str(node_bin()), str(everything_bin().resolve()), *(mode or ("stdio",))]


def everything_stdio_spec() -> dict[str, object]:
    """An ``mcpServers`` entry for server-everything over stdio."""
    cmd = everything_command("stdio")
    return {"command": cmd[0], "args": cmd[1:]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


READY = "listening on port"
IN_USE = "already in use"


def _start_http(port: int, timeout: float) -> tuple[subprocess.Popen[str], list[str]] | None:
    """server-everything on ``port`` once it says it listens; None when the port was taken."""
    proc = subprocess.Popen(
        everything_command("streamableHttp"),
        env=node_env({"PORT": str(port)}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()
    verdict: list[bool] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if not ready.is_set() and (READY in line or IN_USE in line):
                verdict.append(READY in line)
                ready.set()
        if not ready.is_set():
            verdict.append(False)
            ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(timeout) or not verdict[0]:
        _stop(proc)
        if any(IN_USE in line for line in lines):
            return None
        raise RuntimeError(f"server-everything did not start on port {port}: {''.join(lines)[-2000:]}")
    return proc, lines


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def everything_http(timeout: float = 30.0) -> Iterator[str]:
    """server-everything over Streamable HTTP on a free loopback port; yields its ``/mcp`` URL.

    Readiness is the server's own "listening" line; a port taken between probing and binding is
    retried on a fresh one."""
    require_node_tools()
    for _ in range(5):
        port = free_port()
        started = _start_http(port, timeout)
        if started is None:
            continue
        proc, _lines = started
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            _stop(proc)
        return
    raise RuntimeError("no free port for server-everything after 5 tries")


@pytest.fixture
def everything_url() -> Iterator[str]:
    """Fixture form of :func:`everything_http` (import it into a test module or conftest)."""
    with everything_http() as url:
        yield url
