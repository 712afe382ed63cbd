"""Resource contents and prompt messages as text and images: text inlined under its URI, binary
named with its size, an image attached for a vision model and named for one without vision, a
resource link saying how to read it."""

from __future__ import annotations

import base64
import io

from mcp_types import (
    BlobResourceContents,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from owltui.tools.mcp.catalog.contents import MAX_TEXT, link_line, render_prompt, render_read


def png() -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), "red").save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_a_read_result_inlines_text_names_binary_and_attaches_images() -> None:
    result = ReadResourceResult(
        contents=[
            TextResourceContents(uri="a://t", mime_type="text/plain", text="hello"),
            BlobResourceContents(
                uri="a://b", mime_type="application/zip", blob=base64.b64encode(b"x" * 3000).decode()
            ),
            BlobResourceContents(uri="a://i.png", mime_type="image/png", blob=png()),
        ]
    )
    seen = render_read(result, take_images=True)
    assert seen.parts[0] == '<resource uri="a://t" mimeType="text/plain">\nhello\n</resource>'
    assert seen.parts[1] == "[binary resource a://b (application/zip, 2.9 KB): not shown]"
    assert seen.parts[2] == "[image a://i.png 3×2, image/png: attached]"
    assert [(i.width, i.height, i.media_type) for i in seen.images] == [(3, 2, "image/png")]
    blind = render_read(result, take_images=False)
    assert blind.images == [] and "the current model does not take images" in blind.parts[2]


def test_long_text_is_cut_with_a_note() -> None:
    text = "x" * (MAX_TEXT + 10)
    seen = render_read(ReadResourceResult(contents=[TextResourceContents(uri="a://t", text=text)]), True)
    assert seen.text.endswith(f"[cut at {MAX_TEXT} of {MAX_TEXT + 10} characters]\n</resource>")


def test_prompt_messages_in_order_with_images_resources_and_links() -> None:
    result = GetPromptResult(
        messages=[
            PromptMessage(role="user", content=TextContent(type="text", text="look")),
            PromptMessage(role="user", content=ImageContent(type="image", data=png(), mime_type="image/png")),
            PromptMessage(
                role="user",
                content=EmbeddedResource(
                    type="resource",
                    resource=TextResourceContents(uri="a://r", mime_type="text/plain", text="body"),
                ),
            ),
            PromptMessage(role="assistant", content=TextContent(type="text", text="noted")),
            PromptMessage(
                role="user",
                content=ResourceLink(type="resource_link", uri="a://l", name="log", description="the log"),
            ),
        ]
    )
    seen = render_prompt(result, take_images=True, server="srv")
    assert seen.parts == [
        "look",
        "[image 3×2, image/png: attached]".replace("image 3", f"image {seen.images[0].sha256[:12]} 3"),
        '<resource uri="a://r" mimeType="text/plain">\nbody\n</resource>',
        "[the prompt's assistant message]",
        "noted",
        link_line("srv", "a://l", "the log"),
    ]
    assert link_line("srv", "a://l", "the log") == (
        '[resource link: a://l (the log); read it with mcp_read_resource {"server": "srv", "uri": "a://l"}]'
    )
    assert len(seen.images) == 1
