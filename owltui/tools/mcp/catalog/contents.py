"""Resource contents and prompt messages as what a message or a tool result carries: text inlined
(under its URI), binary contents named with their type and size, images as ``ImageRef`` for a model
that takes them (else named)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from owltui.agent.messages import ImageRef

MAX_TEXT = 50 * 1024  # characters of one resource's text inlined; the rest is cut with a note


def link_line(server: str, uri: str, what: str = "") -> str:
    """A resource link as the model reads it: how to read it with ``mcp_read_resource``."""
    about = f" ({what})" if what else ""
    how = f'mcp_read_resource {{"server": "{server}", "uri": "{uri}"}}'
    return f"[resource link: {uri}{about}; read it with {how}]"


def size_of(b64: str) -> str:
    n = len(b64) * 3 // 4
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


@dataclass
class Rendered:
    """Text parts and the images that go beside them."""

    parts: list[str] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(p for p in self.parts if p)


def _image(b64: str, mime: str, name: str, take_images: bool, out: Rendered) -> None:
    from owltui.tools.files.imageload import ImageError, describe, image_ref

    where = f" {name}" if name else ""
    if take_images:
        try:
            ref = image_ref(base64.b64decode(b64, validate=True), name)
        except (ImageError, binascii.Error, ValueError) as exc:
            out.parts.append(f"[image{where} ({mime}, {size_of(b64)}) not attached: {exc}]")
            return
        out.images.append(ref)
        out.parts.append(f"[{describe(ref)}, {ref.media_type}: attached]")
        return
    out.parts.append(f"[image{where} ({mime}, {size_of(b64)}): the current model does not take images]")


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n[cut at {MAX_TEXT} of {len(text)} characters]"


def add_contents(contents: Any, take_images: bool, out: Rendered) -> None:
    """One ``TextResourceContents`` or ``BlobResourceContents``."""
    uri = getattr(contents, "uri", "")
    mime = getattr(contents, "mime_type", None) or "application/octet-stream"
    text = getattr(contents, "text", None)
    if text is not None:
        out.parts.append(f'<resource uri="{uri}" mimeType="{mime}">\n{_cut(text)}\n</resource>')
        return
    blob = getattr(contents, "blob", "") or ""
    if mime.startswith("image/"):
        _image(blob, mime, uri, take_images, out)
        return
    out.parts.append(f"[binary resource {uri} ({mime}, {size_of(blob)}): not shown]")


def render_read(result: Any, take_images: bool) -> Rendered:
    """A ``ReadResourceResult``."""
    out = Rendered()
    for contents in result.contents:
        add_contents(contents, take_images, out)
    if not out.parts:
        out.parts.append("(the resource is empty)")
    return out


def render_block(block: Any, take_images: bool, out: Rendered, server: str = "") -> None:
    """One content block of a prompt message (text, image, audio, embedded resource, link)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        out.parts.append(block.text)
    elif kind == "image":
        _image(block.data, block.mime_type, "", take_images, out)
    elif kind == "resource":
        add_contents(block.resource, take_images, out)
    elif kind == "resource_link":
        what = str(getattr(block, "description", None) or getattr(block, "name", "") or "")
        out.parts.append(link_line(server, block.uri, what))
    elif kind == "audio":
        out.parts.append(f"[audio ({block.mime_type}, {size_of(block.data)}): not shown]")
    else:
        out.parts.append(f"[{kind or 'unknown'} content: not shown]")


def render_prompt(result: Any, take_images: bool, server: str = "") -> Rendered:
    """A ``GetPromptResult``: its messages in order; an assistant message is labelled as one."""
    out = Rendered()
    for message in result.messages:
        if message.role == "assistant":
            out.parts.append("[the prompt's assistant message]")
        render_block(message.content, take_images, out, server)
    return out
