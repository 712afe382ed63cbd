"""Elicitation over RPC, the real ``owltui --rpc`` process against server-everything and the fake
OpenAI server: the model's tool call makes the server ask; the question is an ``mcp_elicitation``
event, answered by ``mcp_elicitation_answer`` (a wrong answer refused, the question kept open),
and the server's tool result carries the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, cli_env, openai_args
from tests.tools.mcp_resources.helpers import mcp_file

ELICIT = "mcp__everything__trigger-elicitation-request"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request["messages"] if m.get("role") == "tool"]


def test_a_form_is_answered_over_rpc(tmp_path: Path, fake: FakeOpenAI) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = ["--rpc", "--yes", *openai_args(fake.url), "--mcp-config", str(mcp_file(tmp_path))]
    rpc = Proc(argv, cli_env(tmp_path), ws)
    try:
        fake.add(Turn(calls=[(ELICIT, {})]), Turn(text="thanks"))
        rpc.call({"type": "prompt", "text": "ask me", "id": 1})
        asked = rpc.expect(type="mcp_elicitation", timeout=60)
        assert asked["server"] == "everything" and asked["mode"] == "form"
        fields = {f["name"]: f for f in asked["fields"]}
        assert fields["integer"]["default"] == 42 and fields["name"]["required"]
        wrong = rpc.call(
            {
                "type": "mcp_elicitation_answer",
                "id": asked["id"],
                "action": "accept",
                "content": {"integer": 500},
            }
        )
        assert not wrong["ok"] and "required" in wrong["error"]
        too_big = rpc.call(
            {
                "type": "mcp_elicitation_answer",
                "id": asked["id"],
                "action": "accept",
                "content": {"name": "Ada", "integer": 500},
            }
        )
        assert not too_big["ok"] and "at most 100" in too_big["error"]
        ok = rpc.call(
            {
                "type": "mcp_elicitation_answer",
                "id": asked["id"],
                "action": "accept",
                "content": {"name": "Ada"},
            }
        )
        assert ok["ok"], ok
        closed = rpc.expect(type="mcp_elicitation_closed", id=asked["id"])
        assert closed["reason"] == "answered" and closed["action"] == "accept"
        rpc.expect(type="agent_end", reason="done", timeout=60)
        (result,) = tool_results(fake.requests[-1])
        assert "Ada" in result and "42" in result  # the answer, a default filled in
        assert '"action": "accept"' in result or "accept" in json.dumps(result)
        again = rpc.call({"type": "mcp_elicitation_answer", "id": asked["id"], "action": "decline"})
        assert not again["ok"] and "no MCP question" in again["error"]
    finally:
        rpc.kill()
