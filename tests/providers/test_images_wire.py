"""Images in both wire formats: the base64 of the file's bytes (or of the downscaled ones) in the
request body byte for byte, tool-result images, the placeholder for a model without image input,
and each image's bytes encoded once per turn."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image

from owltui.agent.messages import AssistantMessage, ImageRef, Item, ToolCall, ToolResult, UserMessage
from owltui.agent.model import ModelRequest
from owltui.providers import image_wire
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.tools.files.imageload import MAX_EDGE, image_ref

URL = "http://127.0.0.1:9"


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


def anthropic(model: str = "claude-sonnet-4-5") -> AnthropicModel:
    return AnthropicModel(model, api_key="k", base_url=URL)


def openai(model: str = "gpt-4o") -> OpenAICompatModel:
    return OpenAICompatModel(model, api_key="k", base_url=URL + "/v1")


def body(model: AnthropicModel | OpenAICompatModel, items: list[Item]) -> dict[str, Any]:
    request = ModelRequest(system="s", messages=items)
    raw = model.encode_body(request)
    assert raw == model.encode_body(request)  # the cached second round is the same bytes
    value: dict[str, Any] = json.loads(raw)
    assert value == json.loads(json.dumps(model.build_body(request)))  # cached pieces == whole
    return value


def test_user_image_reaches_anthropic_byte_exact() -> None:
    data = png(40, 30)
    ref = image_ref(data, "shot.png")
    sent = body(anthropic(), [UserMessage(text="what is this?", images=(ref,))])
    blocks = sent["messages"][0]["content"]
    assert blocks[0] == {"type": "text", "text": "what is this?"}
    assert blocks[1]["type"] == "image"
    assert blocks[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(data).decode(),
    }


def test_user_image_reaches_openai_byte_exact() -> None:
    data = png(40, 30)
    ref = image_ref(data, "shot.png")
    sent = body(openai(), [UserMessage(text="what is this?", images=(ref,))])
    user = sent["messages"][1]
    assert user["role"] == "user"
    assert user["content"] == [
        {"type": "text", "text": "what is this?"},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()},
        },
    ]


def _tool_history(ref: ImageRef) -> list[Item]:
    call = ToolCall(id="c1", name="read", arguments={"path": "shot.png"})
    return [
        UserMessage(text="look at shot.png"),
        AssistantMessage(tool_calls=[call], stop_reason="tool_use"),
        ToolResult(call_id="c1", name="read", content="image shot.png 40×30", images=(ref,)),
    ]


def test_tool_result_image_anthropic_is_a_block_list() -> None:
    data = png(40, 30)
    sent = body(anthropic(), _tool_history(image_ref(data, "shot.png")))
    result = sent["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][0] == {"type": "text", "text": "image shot.png 40×30"}
    assert result["content"][1]["source"]["data"] == base64.b64encode(data).decode()


def test_tool_result_image_openai_goes_in_a_user_message_after_the_results() -> None:
    data = png(40, 30)
    sent = body(openai(), _tool_history(image_ref(data, "shot.png")))
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    tool, user = sent["messages"][3], sent["messages"][4]
    assert isinstance(tool["content"], str) and "user message after the tool results" in tool["content"]
    assert user["content"][0]["text"] == "[images of the read call c1]"
    assert (
        user["content"][1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(data).decode()
    )


def test_downscaled_image_is_pillows_output() -> None:
    data = png(3000, 1000)
    ref = image_ref(data, "wide.png")
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        fitted = img.copy()
    fitted.thumbnail((MAX_EDGE, MAX_EDGE), Image.Resampling.LANCZOS)
    expected = io.BytesIO()
    fitted.save(expected, "PNG", optimize=True)
    assert (ref.width, ref.height) == (MAX_EDGE, 683)
    assert ref.original == (3000, 1000)
    assert ref.data == expected.getvalue()
    sent = body(anthropic(), [UserMessage(text="x", images=(ref,))])
    assert (
        sent["messages"][0]["content"][1]["source"]["data"] == base64.b64encode(expected.getvalue()).decode()
    )


@pytest.mark.parametrize("make", [anthropic, openai])
def test_model_without_vision_gets_a_placeholder_not_the_image(make: Any) -> None:
    ref = image_ref(png(40, 30), "shot.png")
    raw = make("some-local-model").encode_body(
        ModelRequest(system="s", messages=[UserMessage(text="x", images=(ref,))])
    )
    assert b"base64" not in raw
    assert b"[image shot.png not sent: the current model does not accept images]" in raw


def test_missing_bytes_become_a_placeholder() -> None:
    ref = image_ref(png(4, 4), "gone.png").model_copy(update={"data": b""})
    raw = anthropic().encode_body(ModelRequest(system="s", messages=[UserMessage(text="x", images=(ref,))]))
    assert b"gone.png: its bytes are missing" in raw


def test_each_image_is_encoded_once_across_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = image_wire.b64

    def counting(ref: ImageRef) -> str:
        calls.append(1)
        return real(ref)

    monkeypatch.setattr(image_wire, "b64", counting)
    model = anthropic()
    items: list[Item] = [UserMessage(text="x", images=(image_ref(png(8, 8), "a.png"),))]
    model.encode_body(ModelRequest(system="s", messages=items))
    for i in range(4):  # the image's turn closes, then later rounds only add items
        items.append(AssistantMessage(text=f"r{i}"))
        items.append(UserMessage(text=f"u{i}"))
        model.encode_body(ModelRequest(system="s", messages=items))
    assert len(calls) <= 2  # once as the open tail, once as the closed turn; never per round
