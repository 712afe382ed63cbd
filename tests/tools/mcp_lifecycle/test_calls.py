"""Calls against a real stdio server: the per-call timeout (cancelled on the server, restarted by
progress, 60 s by default), structured content sent once (and only when the text lacks it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from owltui.tools.mcp.config import DEFAULT_TOOL_TIMEOUT, McpSettings
from owltui.tools.mcp.results import to_output
from owltui.tools.mcp.source import McpSource
from tests.tools.conftest import until
from tests.tools.mcp_lifecycle.helpers import call, entry, running, specs

pytestmark = pytest.mark.anyio


async def test_a_silent_call_ends_at_its_limit_and_is_cancelled_on_the_server(
    ws: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    env = {**os.environ, "MCP_TEST_MARKER": str(marker)}
    servers = specs(ws, {"life": entry(tool_timeout=0.5, env={"MCP_TEST_MARKER": str(marker)})}, env)
    async with running(servers, ws) as (src, warnings):
        out = await call(src, "mcp__life__hang", {}, ws)
        assert out.is_error
        assert "MCP server 'life'" in out.content and "hang" in out.content and "0.5 s" in out.content
        assert "cancelled on the server" in out.content
        await until(marker.exists, within=5, what="the server seeing notifications/cancelled")
        assert marker.read_text() == "cancelled\n"
        again = await call(src, "mcp__life__dual", {}, ws)  # the connection is fine afterwards
        assert not again.is_error
    assert warnings == []


async def test_progress_restarts_the_clock_so_a_long_reporting_call_completes(ws: Path) -> None:
    servers = specs(ws, {"life": entry(tool_timeout_sec=0.6)})  # Codex's key
    progress: list[str] = []
    async with running(servers, ws) as (src, _warnings):
        assert src.servers[0].tool_timeout == 0.6
        out = await call(src, "mcp__life__ticking", {"seconds": 2.0, "every": 0.2}, ws, progress=progress)
    assert not out.is_error and out.content == "ticked"  # 2 s, over three times the limit
    assert len(progress) >= 9


async def test_the_default_limit_is_60_seconds_and_the_config_sets_it(ws: Path) -> None:
    assert DEFAULT_TOOL_TIMEOUT == 60.0 and McpSettings().tool_timeout == 60.0
    assert McpSettings.model_validate({"tool_timeout": 5}).tool_timeout == 5.0
    servers = specs(ws, {"a": entry(), "b": entry(tool_timeout=7)})
    default = McpSource(servers, workspace=ws)
    assert [s.tool_timeout for s in default.servers] == [60.0, 7.0]
    chosen = McpSource(servers, workspace=ws, tool_timeout=12)
    assert [s.tool_timeout for s in chosen.servers] == [12.0, 7.0]


@pytest.mark.parametrize("mode", ["json", "file"])
async def test_structured_content_the_text_already_carries_is_sent_once(ws: Path, mode: str) -> None:
    async with running(specs(ws, {"life": entry()}), ws) as (src, _warnings):
        out = await call(src, "mcp__life__dual", {"mode": mode}, ws)
    from tests.tools.mcp_lifecycle.lifecycle_server import PAYLOAD

    body = json.dumps(PAYLOAD, indent=4) if mode == "json" else "\n".join(PAYLOAD["lines"])  # type: ignore[arg-type]
    assert out.content == body  # the payload once: no JSON copy appended


class _Text:
    type = "text"

    def __init__(self, text: str) -> None:
        self.text = text


class _Result:
    def __init__(self, texts: list[str], structured: object) -> None:
        self.content = [_Text(t) for t in texts]
        self.structured_content = structured
        self.is_error = False


def test_structured_content_the_text_lacks_is_added() -> None:
    carried = to_output(_Result(['{"a": 1,\n "b": [true, "x"]}'], {"b": [True, "x"], "a": 1}), "s", "t")
    assert carried.content == '{"a": 1,\n "b": [true, "x"]}'
    split = to_output(_Result(['{"a": ', "1}"], {"a": 1}), "s", "t")
    assert split.content == '{"a": \n1}'
    more = to_output(_Result(["the weather is fine"], {"temperature": 21.5, "sky": "clear"}), "s", "t")
    assert more.content.startswith("the weather is fine\n") and '"temperature": 21.5' in more.content
    only = to_output(_Result([], {"answer": 42}), "s", "t")
    assert json.loads(only.content) == {"answer": 42}
    quoted = to_output(_Result(['he said "hi"\nbye'], {"said": 'he said "hi"\nbye'}), "s", "t")
    assert quoted.content == 'he said "hi"\nbye'
