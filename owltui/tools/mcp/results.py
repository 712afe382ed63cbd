"""A ``tools/call`` result as the text the model reads.

Text blocks are kept as they are; structured content is added as JSON unless a text block already
carries the same value (the spec asks servers to send both); embedded text resources are inlined
under their URI; resource links are named. Images, audio and binary resources become a one-line
placeholder with their type and size: OwlTUI's tool results are text (``ToolResult.content`` is a
string in the history, the session file and every provider adapter), so there is nowhere to put the
bytes — passing images through needs multimodal tool results in the agent and the providers first.
"""

from __future__ import annotations

import json
from typing import Any

from owltui.agent.tool import ToolOutput


def _size(b64: str) -> str:
    n = len(b64) * 3 // 4
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def block_text(block: Any) -> str:
    """One content block as text (duck-typed on the SDK's models: ``type`` and its fields)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = _size(getattr(block, "data", ""))
        return (
            f"[{kind} {getattr(block, 'mime_type', '?')}, {size}: not shown; "
            "OwlTUI passes tool results to the model as text]"
        )
    if kind == "resource_link":
        what = getattr(block, "description", None) or getattr(block, "name", "")
        return f"[resource link: {block.uri}{f' ({what})' if what else ''}]"
    if kind == "resource":
        res = block.resource
        text = getattr(res, "text", None)
        if isinstance(text, str):
            return f"[resource {res.uri}]\n{text}"
        mime = getattr(res, "mime_type", None) or "binary"
        return f"[resource {res.uri}: {mime}, {_size(getattr(res, 'blob', ''))}: not shown; binary content]"
    return f"[{kind or 'unknown'} content: not shown]"


def to_output(result: Any, server: str, tool: str) -> ToolOutput:
    """``CallToolResult`` -> ``ToolOutput`` (an error result stays an error)."""
    parts = [block_text(b) for b in (getattr(result, "content", None) or [])]
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
        if not any(_same_json(t, structured) for t in texts):
            parts.append(_json(structured))
    error = bool(getattr(result, "is_error", False))
    text = "\n".join(parts)
    if not text.strip():
        text = "(the tool returned an error without a message)" if error else "(the tool returned no content)"
    return ToolOutput(text, is_error=error, details={"mcp_server": server, "mcp_tool": tool})
