"""Images in ACP prompts: an ``image`` block reaches a model that sees images byte for byte (the
Chat Completions data URL of the block's own bytes, through a real HTTP model against a local
server), and a model that does not gets the text with a note naming the refusal, never a silent
drop; ``initialize`` advertises ``promptCapabilities.image``."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import acp
import pytest
from PIL import Image

from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.testing.scripted import ScriptedModel, Step
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.modes.acp.harness import connected

pytestmark = pytest.mark.anyio


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 200, 30)).save(out, "PNG")
    return out.getvalue()


async def test_an_image_block_reaches_a_model_that_sees_images(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    data = png()
    fake = FakeOpenAI().add(Turn(text="a green rectangle"))
    try:
        model = OpenAICompatModel("gpt-4.1", api_key="k", base_url=fake.url)
        async with connected(tmp_path, lambda _ws: model) as (conn, client):
            init = await conn.initialize(protocol_version=1)
            assert init.agent_capabilities is not None
            assert init.agent_capabilities.prompt_capabilities.image is True
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            blocks = [
                acp.text_block("what is this?"),
                acp.image_block(base64.b64encode(data).decode(), "image/png"),
            ]
            answer = await conn.prompt(session_id=sid, prompt=blocks)
            assert answer.stop_reason == "end_turn"
    finally:
        fake.close()
    user = fake.requests[0]["messages"][-1]
    urls = [p["image_url"]["url"] for p in user["content"] if p.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + base64.b64encode(data).decode()]
    assert any(p.get("type") == "text" and "what is this?" in p["text"] for p in user["content"])


async def test_a_model_without_vision_gets_the_text_and_the_user_the_refusal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = ScriptedModel([Step(text="I read your words")])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        blocks = [acp.text_block("look"), acp.image_block(base64.b64encode(png()).decode(), "image/png")]
        answer = await conn.prompt(session_id=sid, prompt=blocks)
        assert answer.stop_reason == "end_turn"
    said = client.text(sid)
    assert "image" in said and "images" in said.lower() and "not" in said, said  # the refusal, shown
    [sent] = [m for m in model.requests[0].messages if m.role == "user"]
    assert sent.text.startswith("look") and not sent.images
    assert "iVBOR" not in json.dumps(sent.model_dump(mode="json"))


async def test_an_image_block_that_is_no_image_is_a_note(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = ScriptedModel([Step(text="ok")])
    async with connected(tmp_path, lambda _ws: model) as (conn, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        blocks = [
            acp.text_block("see"),
            acp.image_block(base64.b64encode(b"plain text").decode(), "image/png"),
        ]
        assert (await conn.prompt(session_id=sid, prompt=blocks)).stop_reason == "end_turn"
    assert "not a PNG, JPEG, GIF or WebP image" in client.text(sid)
