"""The 2025-03-26 path (no protected-resource metadata) against ``legacy_server`` (a real process):
root-well-known metadata whose issuer is the MCP server's own origin + ``/oauth`` is accepted and the
login completes (the tools then work, the metadata fetched once); an issuer on another origin is
refused before any registration; with protected-resource metadata the flow is the SDK's own (the
root well-known is never asked). With the widening off (``_expected_issuer`` the SDK's), the
same-origin server is refused: the test shows what the feature fixes."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from owltui.tools.mcp.auth.legacy import LegacyIssuer, same_origin
from owltui.tools.mcp.auth.login import login
from tests.tools.mcp_oauth.conftest import HERE, AuthServer
from tests.tools.mcp_oauth.test_login_flow import connected, echo, spec_for

pytestmark = pytest.mark.anyio


@pytest.fixture
def legacy(request: pytest.FixtureRequest) -> Iterator[AuthServer]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "legacy_server.py"), request.param],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("PORT "), f"the legacy test server did not start: {line!r} {proc.poll()}"
        yield AuthServer(f"http://127.0.0.1:{int(line.split()[1])}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_same_origin_is_scheme_host_and_port() -> None:
    assert same_origin("http://localhost:8080/oauth", "http://LOCALHOST:8080/mcp")
    assert same_origin("https://a.example/oauth", "https://a.example:443/mcp")
    assert not same_origin("http://localhost:8081/oauth", "http://localhost:8080/mcp")
    assert not same_origin("https://localhost:8080/oauth", "http://localhost:8080/mcp")
    assert not same_origin("http://evil.example:8080/oauth", "http://localhost:8080/mcp")


@pytest.mark.parametrize("legacy", ["path"], indirect=True)
async def test_a_same_origin_path_issuer_is_accepted_on_the_legacy_path(
    legacy: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = spec_for(legacy.url, ws, env)
    with anyio.fail_after(60):
        said = await login(spec, env, lambda _line: None)
    assert said == "Logged in to MCP server 'hosted'.", said
    stats = legacy.admin("stats")
    assert stats["register"] == 1 and stats["code"] == 1 and stats["root_metadata"] == 1, stats
    async with connected(spec, ws, env) as (src, warnings):
        assert await echo(src, ws) == "echo: hi"
    assert warnings == []


@pytest.mark.parametrize("legacy", ["path"], indirect=True)
async def test_without_the_widening_the_same_server_is_refused(
    legacy: AuthServer, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        LegacyIssuer, "_expected_issuer", lambda self: super(LegacyIssuer, self)._expected_issuer()
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    with anyio.fail_after(60):
        said = await login(spec_for(legacy.url, ws, env), env, lambda _line: None)
    assert said.startswith("Login to MCP server 'hosted' failed:"), said
    assert f"issuer mismatch: {legacy.base}/oauth != {legacy.base}" in said, said
    assert legacy.admin("stats")["register"] == 0


@pytest.mark.parametrize("legacy", ["other"], indirect=True)
async def test_an_issuer_on_another_origin_is_refused(
    legacy: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with anyio.fail_after(60):
        said = await login(spec_for(legacy.url, ws, env), env, lambda _line: None)
    other = legacy.base.replace("127.0.0.1", "127.0.0.2")
    assert said.startswith("Login to MCP server 'hosted' failed:"), said
    assert f"issuer mismatch: {other}/oauth != {legacy.base}" in said, said
    stats = legacy.admin("stats")
    assert stats["register"] == 0 and stats["authorize"] == 0, stats


@pytest.mark.parametrize("legacy", ["prm"], indirect=True)
async def test_with_resource_metadata_the_flow_is_unchanged(
    legacy: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = spec_for(legacy.url, ws, env)
    with anyio.fail_after(60):
        said = await login(spec, env, lambda _line: None)
    assert said == "Logged in to MCP server 'hosted'.", said
    stats = legacy.admin("stats")
    assert stats["register"] == 1 and stats["code"] == 1 and stats["root_metadata"] == 0, stats
