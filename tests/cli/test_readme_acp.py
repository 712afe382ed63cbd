"""The README's ACP section, as a user follows it: Zed's ``agent_servers`` entry (its command and
args, with the env it names minus the placeholder key) started by the official ACP SDK's client as
an editor starts it, answering a prompt in a session of the directory the editor opened."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp import spawn_agent_process

from tests.cli.test_readme_extensions import blocks, section
from tests.modes.acp.harness import Recorder, env_for

pytestmark = pytest.mark.anyio


async def test_the_zed_entry_starts_an_agent_that_answers(tmp_path: Path) -> None:
    (entry,) = blocks(section("Editors (ACP)"), "json")
    server = json.loads(entry)["agent_servers"]["OwlTUI"]
    assert server["command"] == "owltui" and server["args"] == ["--acp"]
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("# the project\n")
    env = {**os.environ, **env_for(tmp_path)}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)  # the README's key is a placeholder: without one, the demo model
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # owltui on PATH
    command = shutil.which(server["command"], path=env["PATH"])
    assert command is not None
    client = Recorder(choose=lambda _call, _options: "allow")
    async with spawn_agent_process(cast(Any, client), command, *server["args"], env=env, cwd=ws) as (
        conn,
        _p,
    ):
        init = await conn.initialize(protocol_version=1)
        assert init.protocol_version == 1 and init.agent_info is not None
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("list the files")])
        assert answer.stop_reason == "end_turn"
        assert any(u.kind == "read" for u in client.of("tool_call", sid))
        said = "".join(u.content.text for u in client.of("agent_message_chunk", sid))
        assert "README.md" in said
