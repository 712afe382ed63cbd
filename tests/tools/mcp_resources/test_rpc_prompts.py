"""MCP prompts over RPC, the real ``owltui --rpc`` process against server-everything and the fake
OpenAI server: ``get_commands`` lists them, and a ``prompt`` whose text is ``/mcp__SERVER__PROMPT
args`` sends the prompt's messages as the user's turn."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, cli_env, openai_args
from tests.cli.test_rpc_rewind_queue import _users
from tests.tools.mcp_resources.helpers import mcp_file


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


def test_a_prompt_command_over_rpc(tmp_path: Path, fake: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = mcp_file(tmp_path)
    rpc = Proc(["--rpc", *openai_args(fake.url), "--mcp-config", str(config)], cli_env(tmp_path), ws)
    try:
        fake.add(Turn(text="hello"), Turn(text="sunny"))
        rpc.call({"type": "prompt", "text": "hi", "id": 1})  # the first request waits for the servers
        rpc.expect(type="agent_end", reason="done")
        deadline = time.monotonic() + 30
        while True:  # the prompt list arrives just after the server connects: each call a round trip
            listed = {c["name"]: c for c in rpc.call({"type": "get_commands", "id": 2})["commands"]}
            if "mcp__everything__args-prompt" in listed or time.monotonic() > deadline:
                break
        entry = listed["mcp__everything__args-prompt"]
        assert entry["source"] == "mcp" and entry["argument_hint"] == "CITY [STATE]"
        assert entry["description"].startswith("A prompt with two arguments")
        missing = rpc.call({"type": "prompt", "text": "/mcp__everything__args-prompt", "id": 3})
        assert not missing["ok"] and "usage: /mcp__everything__args-prompt CITY [STATE]" in missing["error"]
        assert rpc.call({"type": "prompt", "text": '/mcp__everything__args-prompt "San Jose" CA', "id": 4})[
            "ok"
        ]
        rpc.expect(type="agent_end", reason="done")
        fake.wait_request()
        second = fake.requests[-1]
        assert _users(second)[-1] == "What's weather in San Jose, CA?"
    finally:
        rpc.kill()
