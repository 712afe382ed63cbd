"""``/mcp login NAME`` and ``/mcp logout NAME`` through the command table: the slash words bound
as the table declares them, the login run as the reply's background work (a host that runs
nothing in the background hands it back as ``then``), the server connected again, a missing or
wrong name one clear sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.session.commands.spec import CommandError, Context
from owltui.session.commands.table import COMMANDS
from tests.tools.mcp_oauth.conftest import AuthServer
from tests.tools.mcp_oauth.test_login_flow import connected, echo, spec_for

pytestmark = pytest.mark.anyio


class Host:
    def __init__(self, mcp: Any) -> None:
        self.mcp = mcp

    def spawn(self, fn: Any, name: str = "") -> bool:
        return False  # the reply's ``then`` runs it


def run_slash(host: Host, words: str) -> Any:
    (command,) = [c for c in COMMANDS if c.slash == "mcp"]
    ctx = Context(host=host, front=None)  # type: ignore[arg-type]
    return command.run(ctx, command.bind(command.words(words)))


async def test_slash_mcp_login_and_logout(
    auth_server: AuthServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = spec_for(auth_server.url, ws, env)
    async with connected(spec, ws, env) as (src, warnings):
        host = Host(src)
        with pytest.raises(CommandError, match="usage: /mcp login NAME"):
            run_slash(host, "login")
        with pytest.raises(CommandError, match="there is no MCP server 'nope' \\(HTTP servers: hosted\\)"):
            run_slash(host, "login nope")
        reply = run_slash(host, "login hosted")
        assert reply.text == "Logging in to MCP server 'hosted': open the URL shown next."
        assert reply.then is not None
        with anyio.fail_after(60):
            done = await reply.then
        assert done.ok and done.text == "Logged in to MCP server 'hosted'. Connecting it again."
        assert await src.wait_ready(30)
        assert await echo(src, ws) == "echo: hi"
        out = run_slash(host, "logout hosted")
        assert out.text.startswith("Logged out of MCP server 'hosted': its tokens were deleted from ")
        assert run_slash(host, "logout hosted").text == "MCP server 'hosted' has no stored login."
    said = warnings.index("Logged in to MCP server 'hosted'. Connecting it again.")
    assert warnings[said + 1].startswith("MCP server 'hosted' connected: its ")
