"""``read`` of an image file: the image goes with the result for a model that accepts images, a
clear error for one that does not, and a ``.png`` holding text is read as text."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from owltui.agent.cancel import CancelToken
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolError
from owltui.tools.files.imageload import refusal
from owltui.tools.files.tools import ReadParams, ReadTool

pytestmark = pytest.mark.anyio


class Vision:
    def __init__(self, model: str | None) -> None:
        self.model = model  # None: the model accepts images

    def image_refusal(self) -> str | None:
        return None if self.model is None else refusal(self.model)


def ctx(ws: Path, model: str | None = None) -> ToolContext:
    return ToolContext(workspace=ws, cancel=CancelToken(), services=Services(images=Vision(model)))


def jpeg(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (0, 90, 0)).save(out, "JPEG")
    return out.getvalue()


async def test_read_attaches_an_image(tmp_path: Path) -> None:
    data = jpeg((120, 80))
    (tmp_path / "shot.jpg").write_bytes(data)
    out = await ReadTool().run(ReadParams.model_validate({"path": "shot.jpg"}), ctx(tmp_path))
    assert not out.is_error
    assert out.content.startswith("image shot.jpg 120×80, image/jpeg")
    (ref,) = out.images
    assert ref.data == data and ref.media_type == "image/jpeg" and (ref.width, ref.height) == (120, 80)


async def test_format_by_bytes_not_name(tmp_path: Path) -> None:
    (tmp_path / "photo.txt").write_bytes(jpeg((10, 10)))
    out = await ReadTool().run(ReadParams.model_validate({"path": "photo.txt"}), ctx(tmp_path))
    assert out.images and out.images[0].media_type == "image/jpeg"
    (tmp_path / "notes.png").write_text("not an image\n")
    text = await ReadTool().run(ReadParams.model_validate({"path": "notes.png"}), ctx(tmp_path))
    assert not text.images and "not an image" in text.content


async def test_model_without_vision_gets_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "shot.jpg").write_bytes(jpeg((12, 12)))
    with pytest.raises(
        ToolError, match=r"^this model cannot see images \(model demo:owl\); .*shot.jpg is an image"
    ):
        await ReadTool().run(ReadParams.model_validate({"path": "shot.jpg"}), ctx(tmp_path, "demo:owl"))


async def test_downscaled_on_read(tmp_path: Path) -> None:
    (tmp_path / "big.jpg").write_bytes(jpeg((4000, 1000)))
    out = await ReadTool().run(ReadParams.model_validate({"path": "big.jpg"}), ctx(tmp_path))
    assert (out.images[0].width, out.images[0].height) == (2048, 512)
    assert "image big.jpg 4000×1000 (downscaled to 2048×512)" in out.content


def test_runtime_service_follows_the_current_model() -> None:
    from owltui.providers.anthropic.model import AnthropicModel
    from owltui.providers.demo import DemoModel
    from owltui.session.runtime.vision import ModelImages

    current: list[object] = [AnthropicModel("claude-sonnet-4-5", api_key="k")]
    service = ModelImages(lambda: current[0])  # type: ignore[arg-type, return-value]
    assert service.image_refusal() is None
    current[0] = DemoModel()
    why = service.image_refusal()
    assert why is not None and why.startswith("this model cannot see images (model demo")


async def test_read_image_reaches_the_next_request_through_the_loop(tmp_path: Path) -> None:
    from owltui.agent.messages import ToolResult
    from owltui.testing.host import LocalRuntime
    from owltui.testing.scripted import Call, ScriptedModel, Step

    data = jpeg((16, 16))
    (tmp_path / "shot.jpg").write_bytes(data)
    model = ScriptedModel([Step(calls=[Call("read", {"path": "shot.jpg"})]), Step(text="green")])
    rt = LocalRuntime(model, tools=[ReadTool()], workspace=tmp_path)
    async with rt:
        rt.agent.prompt("look at shot.jpg")
        await rt.agent.wait_idle()
    result = model.views[1][-1]
    assert isinstance(result, ToolResult) and result.images[0].data == data
