"""Images beside the session file: content-addressed, written before the line that names them,
the line's size independent of the image's, and a resumed session's next request carrying the
image byte for byte."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from owltui.agent.model import ModelRequest
from owltui.providers.anthropic.model import AnthropicModel
from owltui.session.store.images import image_dir
from owltui.session.store.store import SessionStore
from owltui.tools.files.imageload import image_ref


def png_of(size: int) -> bytes:
    """A valid PNG header followed by ``size`` bytes of noise (what the store and wire see)."""
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (64).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00"
    return head + os.urandom(size)


def _line_sizes(path: Path) -> list[int]:
    return [len(line) for line in path.read_bytes().splitlines()]


def test_line_size_is_independent_of_the_image(tmp_path: Path) -> None:
    sizes = []
    for n, size in enumerate((1_000, 2_000_000)):
        store = SessionStore.create(tmp_path / str(n), tmp_path, "m")
        store.append(UserMessage(text="look", images=(image_ref(png_of(size), "a.png"),)))
        store.close()
        sizes.append(_line_sizes(store.path)[-1])
    assert abs(sizes[0] - sizes[1]) <= 8  # the digits of the size and the ids, nothing more
    assert sizes[1] < 600


def test_images_stored_beside_and_restored_into_the_next_request(tmp_path: Path) -> None:
    data = png_of(50_000)
    ref = image_ref(data, "shot.png")
    call = ToolCall(id="c1", name="read", arguments={"path": "shot.png"})
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.append(UserMessage(text="look", images=(ref,)))
    store.append(AssistantMessage(tool_calls=[call], stop_reason="tool_use"))
    result = ToolResult(call_id="c1", name="read", content="image", images=(ref,))
    assert store.record_result_early(result)
    store.append(result)
    store.close()
    stored = image_dir(store.path) / f"{ref.sha256}.png"
    assert stored.read_bytes() == data
    assert list(image_dir(store.path).iterdir()) == [stored]  # content-addressed: one file
    line = json.loads(store.path.read_bytes().splitlines()[1])
    assert line["item"]["images"][0]["sha256"] == ref.sha256 and "data" not in line["item"]["images"][0]

    loaded = SessionStore.open(store.path)
    items = list(loaded.model_view())
    assert isinstance(items[0], UserMessage) and items[0].images[0].data == data
    assert isinstance(items[2], ToolResult) and items[2].images[0].data == data
    body = json.loads(AnthropicModel("claude-sonnet-4-5", api_key="k").encode_body(ModelRequest("s", items)))
    b64 = base64.b64encode(data).decode()
    assert body["messages"][0]["content"][1]["source"]["data"] == b64
    assert body["messages"][2]["content"][0]["content"][1]["source"]["data"] == b64
    loaded.close()


def test_lines_without_images_stay_as_before(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.append(UserMessage(text="hi"))
    store.close()
    assert "images" not in json.loads(store.path.read_bytes().splitlines()[1])["item"]


def test_a_missing_or_altered_image_file_is_a_placeholder(tmp_path: Path) -> None:
    ref = image_ref(png_of(100), "shot.png")
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.append(UserMessage(text="look", images=(ref,)))
    store.close()
    (image_dir(store.path) / f"{ref.sha256}.png").write_bytes(png_of(100))  # another image
    loaded = SessionStore.open(store.path)
    item = loaded.items()[0]
    assert isinstance(item, UserMessage) and item.images[0].data == b""
    raw = AnthropicModel("claude-sonnet-4-5", api_key="k").encode_body(
        ModelRequest("s", list(loaded.items()))
    )
    assert b"shot.png: its bytes are missing" in raw
    loaded.close()
