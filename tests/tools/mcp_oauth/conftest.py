"""Fixtures for the OAuth tests: the MCP server behind its authorization server (a real process; and
behind an enterprise IdP's, ``enterprise_server``),
a stand-in browser for ``$BROWSER``, and an environment whose data directory is a temporary one
(outside the workspace) with the keyring off."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import urllib.request
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class AuthServer:
    def __init__(self, base: str) -> None:
        self.base = base
        self.url = f"{base}/mcp"

    def admin(self, what: str) -> dict[str, Any]:
        method = "GET" if what == "stats" else "POST"
        with urllib.request.urlopen(urllib.request.Request(f"{self.base}/admin/{what}", method=method)) as r:
            data = json.loads(r.read())
        assert isinstance(data, dict)
        return data


@pytest.fixture
def auth_server() -> Iterator[AuthServer]:
    yield from _serve("oauth_server.py")


@pytest.fixture
def enterprise_server() -> Iterator[AuthServer]:
    """The IdP, authorization server and MCP server of ``enterprise_server.py``."""
    yield from _serve("enterprise_server.py")


def _serve(script: str) -> Iterator[AuthServer]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("PORT "), f"the OAuth test server did not start: {line!r} {proc.poll()}"
        yield AuthServer(f"http://127.0.0.1:{int(line.split()[1])}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture
def browser() -> str:
    """``$BROWSER``: the stand-in that follows the authorization redirect to the loopback."""
    return f"{sys.executable} {HERE / 'browser.py'} %s"


@pytest.fixture
def env(tmp_path: Path, browser: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    data = tmp_path / "xdg-data"
    monkeypatch.setenv("BROWSER", browser)
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # read $BROWSER again
    return {**os.environ, "XDG_DATA_HOME": str(data), "OWLTUI_MCP_KEYRING": "0", "BROWSER": browser}
