"""Images from MCP tool results: an image block and an embedded image resource reach the model as
images — through the real loop into both wire formats' request bodies, byte for byte — and a model
that takes no images gets one line per picture saying why."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.messages import ToolResult
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.tools.mcp_lifecycle.helpers import Refusing, call, entry, running, session, specs
from tests.tools.mcp_lifecycle.lifecycle_server import PIXEL

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1:9"


async def test_both_pictures_are_attached_for_a_vision_model(ws: Path) -> None:
    async with running(specs(ws, {"life": entry()}), ws) as (src, _warnings):
        out = await call(src, "mcp__life__picture", {}, ws)
    assert [i.media_type for i in out.images] == ["image/png", "image/png"]
    assert all(i.data == base64.b64decode(PIXEL) and (i.width, i.height) == (2, 3) for i in out.images)
    assert out.content.startswith("two red pictures\n")
    assert out.content.count("attached below") == 2 and "file:///red.png" in out.content
    assert PIXEL not in out.content


async def test_a_model_without_image_input_gets_a_line_saying_why(ws: Path) -> None:
    async with running(specs(ws, {"life": entry()}), ws) as (src, _warnings):
        out = await call(src, "mcp__life__picture", {}, ws, images=Refusing())
    assert out.images == ()
    lines = out.content.splitlines()
    assert lines[0] == "two red pictures" and len(lines) == 3
    assert all("not shown: this model cannot see images (model text-only)" in line for line in lines[1:])


def _anthropic_images(body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                found += [
                    b for b in block.get("content", []) if isinstance(b, dict) and b.get("type") == "image"
                ]
            elif block.get("type") == "image":
                found.append(block)
    return found


def _openai_images(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


async def test_an_mcp_picture_reaches_both_wire_formats_as_image_content(ws: Path) -> None:
    model = ScriptedModel([Step(calls=[Call("mcp__life__picture", {})]), Step(text="two red pictures")])
    async with running(specs(ws, {"life": entry()}), ws) as (src, _warnings):
        agent = await session(ws, model, src)
        out = await agent.run("show me")
    assert out.reason == "done"
    (result,) = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert len(result.images) == 2
    request = model.requests[1]  # the request after the call: the result with its images
    anthropic = json.loads(
        AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=URL).encode_body(request)
    )
    sources = [b["source"] for b in _anthropic_images(anthropic)]
    assert sources == [{"type": "base64", "media_type": "image/png", "data": PIXEL}] * 2
    openai = json.loads(OpenAICompatModel("gpt-4o", api_key="k", base_url=URL + "/v1").encode_body(request))
    urls = [p["image_url"]["url"] for p in _openai_images(openai)]
    assert urls == ["data:image/png;base64," + PIXEL] * 2
