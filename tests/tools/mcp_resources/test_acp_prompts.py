"""ACP: the prompts of the client's MCP server (server-everything) join ``available_commands_update``
once the server has listed them, with their descriptions and argument hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.testing.scripted import ScriptedModel
from tests.modes.acp.harness import connected
from tests.tools.mcp_resources.helpers import everything_argv

pytestmark = pytest.mark.anyio


async def test_prompts_join_the_available_commands(tmp_path: Path) -> None:
    from acp.schema import McpServerStdio

    argv = everything_argv()
    ws = tmp_path / "ws"
    ws.mkdir()
    server = McpServerStdio(name="everything", command=argv[0], args=argv[1:], env=[])
    async with connected(tmp_path, lambda _ws: ScriptedModel([])) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id

        def prompts() -> dict[str, object]:
            return {
                c.name: c
                for update in client.of("available_commands_update", sid)
                for c in update.available_commands
                if c.name.startswith("mcp__")
            }

        await client.wait_for(lambda: "mcp__everything__args-prompt" in prompts())
        listed = prompts()
    args_prompt = listed["mcp__everything__args-prompt"]
    assert args_prompt.description.startswith("A prompt with two arguments")  # type: ignore[attr-defined]
    assert args_prompt.input.root.hint == "CITY [STATE]"  # type: ignore[attr-defined]
