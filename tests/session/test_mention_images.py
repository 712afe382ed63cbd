"""``@shot.png`` and a pasted image path attach the image; a model without image input gets the
refusal in the message and in the user's summary; a ``.png`` holding text is attached as text."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from owltui.agent.messages import UserMessage
from owltui.session.input.mention_images import pasted_paths
from owltui.session.input.mentions import expand_mentions
from owltui.tools.files.imageload import refusal


class Vision:
    def __init__(self, model: str | None) -> None:
        self.model = model

    def image_refusal(self) -> str | None:
        return None if self.model is None else refusal(self.model)


def gif(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (5, 5, 5)).save(out, "GIF")
    return out.getvalue()


def test_mention_attaches_the_image(tmp_path: Path) -> None:
    data = gif((30, 20))
    (tmp_path / "shot.gif").write_bytes(data)
    out = expand_mentions("what is in @shot.gif?", tmp_path, images=Vision(None))
    (ref,) = out.images
    assert ref.data == data and ref.media_type == "image/gif"
    assert '<file path="shot.gif">\n(image shot.gif 30×20: attached as an image)\n</file>' in out.text
    msg = out.message("steer")
    assert isinstance(msg, UserMessage) and msg.images == (ref,) and msg.lane == "steer"
    assert out.summary() == "attached shot.gif"


def test_model_without_vision_is_refused_not_dropped(tmp_path: Path) -> None:
    (tmp_path / "shot.gif").write_bytes(gif((3, 3)))
    out = expand_mentions("@shot.gif", tmp_path, images=Vision("openai:some-model"))
    assert out.images == ()
    assert out.message() == out.text
    assert "(not attached: this model cannot see images (model openai:some-model);" in out.text
    assert "@shot.gif: this model cannot see images (model openai:some-model)" in out.summary()


def test_png_holding_text_is_attached_as_text(tmp_path: Path) -> None:
    (tmp_path / "notes.png").write_text("hello\n")
    out = expand_mentions("@notes.png", tmp_path, images=Vision(None))
    assert out.images == ()
    assert "hello" in out.text


def test_pasted_path_alone_on_a_line_or_quoted(tmp_path: Path) -> None:
    spaced = tmp_path / "my shot.gif"
    spaced.write_bytes(gif((4, 4)))
    plain = tmp_path / "a.gif"
    plain.write_bytes(gif((4, 4)))
    text = f"look at these\n'{spaced}'\n  {plain}  \nand {plain} in a sentence stays text"
    assert [p for _, p in pasted_paths(text)] == [spaced, plain]
    escaped = str(spaced).replace(" ", "\\ ")
    assert [p for _, p in pasted_paths(escaped)] == [spaced]
    assert pasted_paths(f"see {plain}") == []
    out = expand_mentions(f"what is this?\n{plain}", tmp_path, images=Vision(None))
    assert len(out.images) == 1 and out.images[0].name == "a.gif"


def test_a_caller_that_sends_text_only_refuses_images(tmp_path: Path) -> None:
    (tmp_path / "shot.gif").write_bytes(gif((3, 3)))
    out = expand_mentions("@shot.gif", tmp_path)  # as ACP's prompt text does
    assert out.images == ()
    assert "@shot.gif: this front end sends text only" in out.summary()


@pytest.mark.anyio
async def test_prompt_with_an_image_reaches_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from owltui.session.commands.layer import Commands
    from owltui.testing.host import LocalRuntime
    from owltui.testing.scripted import ScriptedModel, Step

    monkeypatch.chdir(tmp_path)
    data = gif((8, 6))
    (tmp_path / "shot.gif").write_bytes(data)
    model = ScriptedModel([Step(text="a dark square")])
    rt = LocalRuntime(model)
    c = Commands(rt, _Front())
    async with rt:
        reply = c.send("what is @shot.gif?")
        assert reply.ok and reply.data == {"attached": ["shot.gif"]}
        await rt.agent.wait_idle()
    (sent,) = model.views[0]
    assert isinstance(sent, UserMessage) and sent.images[0].data == data


class _Front:
    label = "a test"
    capabilities: frozenset[str] = frozenset()
    abort_key = "Esc"
    keys_help = "Keys: none"
    themes = None

    def quit(self) -> None:
        pass
