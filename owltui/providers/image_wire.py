"""An attached image in each wire format, reusable for any message that carries one (user
messages, tool results, later MCP tool results): the Messages API's base64 ``image`` block and
Chat Completions' ``image_url`` part with a ``data:`` URL. The base64 text is the stored bytes',
made once per image (the wire cache then keeps the encoded turn)."""

from __future__ import annotations

import base64
import functools
from typing import Any

from owltui.agent.messages import ImageRef

MISSING = "[image {name}: its bytes are missing from the session's image store]"
UNSEEN = "[image {name} not sent: the current model does not accept images]"


@functools.lru_cache(maxsize=16)
def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64(ref: ImageRef) -> str:
    """The base64 text of the image's bytes."""
    return _b64(ref.data)


def placeholder(ref: ImageRef, vision: bool = True) -> str | None:
    """The text sent instead of an image the model cannot take (``vision`` false: the session
    switched to such a model after the image was attached) or whose bytes are gone (a session file
    copied without its image store), or None when the image can be sent."""
    name = ref.name or ref.sha256[:12]
    if not vision:
        return UNSEEN.format(name=name)
    return MISSING.format(name=name) if not ref.data else None


def anthropic_block(ref: ImageRef, vision: bool = True) -> dict[str, Any]:
    """``{"type":"image","source":{"type":"base64",...}}``, or a text block (see ``placeholder``)."""
    text = placeholder(ref, vision)
    if text is not None:
        return {"type": "text", "text": text}
    return {"type": "image", "source": {"type": "base64", "media_type": ref.media_type, "data": b64(ref)}}


def openai_part(ref: ImageRef, vision: bool = True) -> dict[str, Any]:
    """``{"type":"image_url","image_url":{"url":"data:…;base64,…"}}``, or a text part."""
    text = placeholder(ref, vision)
    if text is not None:
        return {"type": "text", "text": text}
    return {"type": "image_url", "image_url": {"url": f"data:{ref.media_type};base64,{b64(ref)}"}}
