"""The real ``owltui --acp`` process with the demo model, driven by the SDK's ``spawn_agent_process``:
a read, an approved write with its diff, a streamed answer."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp import spawn_agent_process

from tests.modes.acp.harness import Recorder, env_for

pytestmark = pytest.mark.anyio
OWLTUI = str(Path(sys.executable).parent / "owltui")


async def test_demo_model_in_the_real_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Hello from the readme\n")
    env = {**os.environ, **env_for(tmp_path)}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    client = Recorder(choose=lambda _call, _options: "allow")
    async with spawn_agent_process(
        cast(Any, client), OWLTUI, "--acp", "--provider", "demo", env=env, cwd=ws
    ) as (
        conn,
        _proc,
    ):
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        read = await conn.prompt(session_id=sid, prompt=[acp.text_block("read README.md")])
        assert read.stop_reason == "end_turn"
        kinds = [u.kind for u in client.of("tool_call", sid)]
        assert "read" in kinds and len(client.of("agent_message_chunk", sid)) > 1  # streamed
        wrote = await conn.prompt(
            session_id=sid, prompt=[acp.text_block("create notes.txt saying hello owl")]
        )
        assert wrote.stop_reason == "end_turn"
        assert client.asked, "the write was not asked about"
        call, options = client.asked[-1]
        assert call.content and call.content[0].type == "diff"
        assert {o.kind for o in options} >= {"allow_once", "reject_once"}
    assert "hello owl" in (ws / "notes.txt").read_text()
