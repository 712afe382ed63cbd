"""Against the reference server-everything: over stdio no notice at start although it sends
tools/list_changed then, and its task-only tool not offered; over stdio and Streamable HTTP its
image tool's picture attached as an image."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from owltui.agent.tool import ToolOutput
from owltui.tools.mcp.config import ServerSpec
from tests.tools.mcp_lifecycle.helpers import call, running, specs
from tests.tools.mcp_node import everything_http, everything_stdio_spec, node_env, require_node_tools

pytestmark = pytest.mark.anyio


def everything(ws: Path) -> list[ServerSpec]:
    require_node_tools()
    return specs(ws, {"everything": everything_stdio_spec()}, node_env())


async def test_start_up_says_nothing_and_task_only_tools_are_hidden(ws: Path) -> None:
    async with running(everything(ws), ws) as (src, warnings):
        (server,) = src.servers
        names = [t.name for t in src.tools()]
        listing = src.describe()
        out = await call(src, "mcp__everything__echo", {"message": "hi"}, ws)  # a round trip after it
    assert warnings == []  # it announced a list change at start: the same list, so silent
    assert not server.list_changed
    assert "mcp__everything__echo" in names and not out.is_error
    assert "mcp__everything__simulate-research-query" not in names
    assert "simulate-research-query" in server.hidden and "simulate-research-query" in listing


async def test_its_image_tool_result_carries_the_picture(ws: Path) -> None:
    async with running(everything(ws), ws) as (src, _warnings):
        out = await call(src, "mcp__everything__get-tiny-image", {}, ws)
    assert_picture(out)


async def test_its_image_tool_result_over_http_carries_the_picture(ws: Path) -> None:
    with everything_http() as url:
        async with running(specs(ws, {"everything": {"type": "http", "url": url}}), ws) as (src, warnings):
            out = await call(src, "mcp__everything__get-tiny-image", {}, ws)
    assert warnings == []
    assert_picture(out)


def assert_picture(out: ToolOutput) -> None:
    assert not out.is_error
    (image,) = out.images
    assert image.media_type == "image/png" and image.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert "attached below" in out.content and base64.b64encode(image.data).decode() not in out.content
