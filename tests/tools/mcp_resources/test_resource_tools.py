"""The model reads MCP resources: ``mcp_list_resources`` / ``mcp_read_resource`` offered when a server
advertises resources (and absent, the first request unchanged, when none does), called by a scripted
model through the real runtime against server-everything over stdio and Streamable HTTP."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.messages import ToolResult
from owltui.agent.model import ModelRequest
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.tools.mcp_resources.helpers import ready, runtime

pytestmark = pytest.mark.anyio
RAW_SERVER = Path(__file__).resolve().parents[1] / "mcp_test_server.py"
DOC = "demo://resource/static/document/architecture.md"


def results(rt: object) -> dict[str, ToolResult]:
    history = rt.agent.history.items()  # type: ignore[attr-defined]
    return {r.call_id: r for r in history if isinstance(r, ToolResult)}


async def test_the_model_lists_and_reads_resources_of_server_everything(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("mcp_list_resources", {}, id="l1")]),
            Step(
                calls=[
                    Call("mcp_read_resource", {"server": "everything", "uri": DOC}, id="r1"),
                    Call(
                        "mcp_read_resource",
                        {"server": "everything", "uri": "demo://resource/dynamic/blob/3"},
                        id="r2",
                    ),
                    Call("mcp_read_resource", {"server": "nope", "uri": DOC}, id="r3"),
                ]
            ),
            Step(text="done"),
        ]
    )
    rt = runtime(tmp_path, model, everything)
    async with rt:
        await ready(rt)
        assert rt.agent.prompt("read the docs")
        await rt.agent.wait_idle()
        names = [t.name for t in rt.agent.config.tools]
        assert "mcp_list_resources" in names and "mcp_read_resource" in names
        got = results(rt)
    listing = got["l1"].content
    assert listing.startswith("everything: ") and DOC in listing
    assert "demo://resource/dynamic/text/{resourceId}" in listing  # the templates too
    assert f'<resource uri="{DOC}" mimeType="text/markdown">' in got["r1"].content
    assert "# Everything Server" in got["r1"].content
    assert not got["r1"].is_error
    blob = got["r2"].content
    assert blob.startswith("[binary resource demo://resource/dynamic/blob/3 (") and "not shown" in blob
    assert got["r3"].is_error and "No MCP server is named 'nope'" in got["r3"].content


async def test_no_resource_tools_when_no_server_advertises_resources(tmp_path: Path) -> None:
    """A tools-only server: the tool list (and so the first request) is what it was before."""
    servers = {"t": {"command": sys.executable, "args": [str(RAW_SERVER), "stdio"]}}
    model = ScriptedModel([Step(text="hi")])
    rt = runtime(tmp_path, model, servers)
    async with rt:
        await ready(rt)
        assert rt.agent.prompt("hi")
        await rt.agent.wait_idle()
        names = [t.name for t in rt.agent.config.tools]
    assert any(n.startswith("mcp__t__") for n in names)
    assert not [n for n in names if n.startswith("mcp_") and not n.startswith("mcp__")]
    sent = [t.name for t in model.requests[0].tools]
    assert "mcp_read_resource" not in sent


async def test_a_resource_link_in_a_tool_result_is_read_with_mcp_read_resource(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    """server-everything's get-resource-links answers links; the model reads the first one's URI."""
    import re

    def step(request: ModelRequest) -> Step:
        done = [m for m in request.messages if isinstance(m, ToolResult)]
        if not done:
            return Step(calls=[Call("mcp__everything__get-resource-links", {"count": 2}, id="g1")])
        if len(done) == 1:
            found = re.search(r"\[resource link: (\S+)", done[0].content)
            assert found is not None, done[0].content
            return Step(
                calls=[Call("mcp_read_resource", {"server": "everything", "uri": found.group(1)}, id="r1")]
            )
        return Step(text="read")

    rt = runtime(tmp_path, ScriptedModel(step), everything)
    async with rt:
        await ready(rt)
        assert rt.agent.prompt("follow the links")
        await rt.agent.wait_idle()
        got = results(rt)
    assert "[resource link: demo://resource/dynamic/blob/1" in got["g1"].content
    assert got["r1"].content.startswith("[binary resource demo://resource/dynamic/blob/1 (")
    assert not got["r1"].is_error
