"""A ``tools/call`` result as what the model gets: text, and images for a model that takes them.

Text blocks are kept as they are. Structured content is added as JSON only when the text does not
already carry it: not when a text block (or the text blocks together) is the same JSON in any
formatting, nor when every value in it (each string, number and boolean) already appears in the text
— a server that sends a file both as text and as ``{"content": text}`` costs the file once. Image
blocks and embedded image resources are attached as images (``ToolOutput.images``, downscaled as
``read`` does) with one line naming each; for a model that takes no images each is one line saying
why. Embedded text resources are inlined under their URI; resource links are named with how to read
them; audio and other binary contents are one line with their type and size.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from owltui.agent.messages import ImageRef
from owltui.agent.tool import ToolOutput


def _bytes(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


def _size(b64: str) -> str:
    return _bytes(len(b64) * 3 // 4)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def _leaves(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _leaves(item, out)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out)
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, str):
        if value:
            out.append(value)
    elif isinstance(value, int | float):
        out.append(f"{value:g}" if isinstance(value, float) and value.is_integer() else str(value))


def carried(texts: list[str], structured: Any) -> bool:
    """Whether the text blocks already carry ``structured`` (see the module's docstring)."""
    if not texts:
        return False
    joined = "\n".join(texts)
    if any(_same_json(t, structured) for t in texts) or _same_json("".join(texts), structured):
        return True
    leaves: list[str] = []
    _leaves(structured, leaves)
    if not leaves:
        return bool(joined.strip())  # an empty object or list adds nothing to text
    escaped = json.dumps(joined, ensure_ascii=False)  # the values as they would sit in JSON text
    return all(leaf in joined or json.dumps(leaf, ensure_ascii=False)[1:-1] in escaped for leaf in leaves)


def _image(b64: str, mime: str, name: str, refusal: str | None, images: list[ImageRef]) -> str:
    from owltui.tools.files.imageload import ImageError, describe, image_ref

    where = f" {name}" if name else ""
    if refusal is not None:
        return f"[image{where} ({mime}, {_size(b64)}) not shown: {refusal}]"
    try:
        ref = image_ref(base64.b64decode(b64, validate=True), name or "the image")
    except (ImageError, binascii.Error, ValueError) as exc:
        return f"[image{where} ({mime}, {_size(b64)}) not attached: {exc}]"
    if not name:
        ref = ref.model_copy(update={"name": ""})  # named by its digest, as a pasted image is
    images.append(ref)
    return f"[{describe(ref)}, {ref.media_type}, {_bytes(ref.size)}: attached below]"


def block_text(
    block: Any, server: str = "", refusal: str | None = None, images: list[ImageRef] | None = None
) -> str:
    """One content block as text (duck-typed on the SDK's models: ``type`` and its fields); an
    image goes to ``images`` (when given and ``refusal`` is None) and is named in the text."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "image" and images is not None:
        return _image(
            str(getattr(block, "data", "")), str(getattr(block, "mime_type", "?")), "", refusal, images
        )
    if kind in ("image", "audio"):
        return f"[{kind} {getattr(block, 'mime_type', '?')}, {_size(getattr(block, 'data', ''))}: not shown]"
    if kind == "resource_link":
        from owltui.tools.mcp.catalog.contents import link_line

        what = getattr(block, "description", None) or getattr(block, "name", "") or ""
        return link_line(server, str(block.uri), str(what))
    if kind == "resource":
        res = block.resource
        text = getattr(res, "text", None)
        if isinstance(text, str):
            return f"[resource {res.uri}]\n{text}"
        mime = getattr(res, "mime_type", None) or "binary"
        blob = str(getattr(res, "blob", "") or "")
        if mime.startswith("image/") and images is not None:
            return _image(blob, mime, str(res.uri), refusal, images)
        return f"[resource {res.uri}: {mime}, {_size(blob)}: not shown; binary content]"
    return f"[{kind or 'unknown'} content: not shown]"


def has_images(result: Any) -> bool:
    """Whether the result holds an image block or an embedded image resource (decoded off the loop)."""
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "image":
            return True
        if kind == "resource" and str(getattr(block.resource, "mime_type", "") or "").startswith("image/"):
            return True
    return False


def to_output(result: Any, server: str, tool: str, refusal: str | None = None) -> ToolOutput:
    """``CallToolResult`` -> ``ToolOutput`` (an error result stays an error). ``refusal``: why the
    current model takes no images (None: it does, and images are attached)."""
    images: list[ImageRef] = []
    content = getattr(result, "content", None) or []
    parts = [block_text(b, server, refusal, images) for b in content]
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        texts = [str(b.text) for b in content if getattr(b, "type", None) == "text"]
        if not carried(texts, structured):
            parts.append(_json(structured))
    error = bool(getattr(result, "is_error", False))
    text = "\n".join(parts)
    if not text.strip():
        text = "(the tool returned an error without a message)" if error else "(the tool returned no content)"
    details: dict[str, Any] = {"mcp_server": server, "mcp_tool": tool}
    return ToolOutput(text, is_error=error, details=details, images=tuple(images))
