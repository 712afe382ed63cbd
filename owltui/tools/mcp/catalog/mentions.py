"""``@server:uri`` mentions: a resource of a connected MCP server named in a message, read and
attached to it like a file mention (``<resource uri=…>`` blocks after the text, images beside it).

A mention is ``@`` at the start of the text or after whitespace, a server's name (as configured, or
its key in tool names), ``:`` and a URI up to the next whitespace (punctuation that ends a sentence
is not part of it). Not inside inline code or a fenced block. A name that is no server offering
resources is left alone (``@bob:42`` stays text; a file named so is still a file mention).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from owltui.agent.messages import ImageRef
from owltui.tools.mcp.catalog.contents import Rendered, render_read

if TYPE_CHECKING:
    from owltui.tools.mcp.catalog.index import McpCatalog

MAX_RESOURCE_MENTIONS = 10
TRAILING = ".,;:!?)]}>'\""
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_.-]+):(\S+)")


@dataclass(frozen=True)
class ResourceMention:
    server: str  # as typed
    uri: str

    @property
    def shown(self) -> str:
        return f"{self.server}:{self.uri}"


@dataclass
class ResourceAttachments:
    """What the mentions attached: blocks for the message, images, and a note per failure."""

    blocks: list[str] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)
    attached: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find_resource_mentions(text: str, servers: set[str]) -> list[ResourceMention]:
    """The ``@server:uri`` mentions of ``text`` whose server is in ``servers``, each once, in order."""
    code = [m.span() for m in _CODE.finditer(text)]
    out: list[ResourceMention] = []
    for match in _MENTION.finditer(text):
        if any(a <= match.start() < b for a, b in code) or match.group(1) not in servers:
            continue
        uri = match.group(2).rstrip(TRAILING) or match.group(2)
        found = ResourceMention(match.group(1), uri)
        if found not in out:
            out.append(found)
    return out


def server_names(catalog: McpCatalog) -> set[str]:
    """The names a mention may use: each connected resource server's name and key."""
    return {n for s in catalog.servers("resources") for n in (s.name, s.spec.key)}


async def read_mentions(
    catalog: McpCatalog, mentions: list[ResourceMention], take_images: bool
) -> ResourceAttachments:
    """Read each mentioned resource (a failure is a note, the message still goes)."""
    from owltui.agent.tool import ToolError
    from owltui.tools.mcp.catalog.live import live
    from owltui.tools.mcp.catalog.tools import mcp_call

    out = ResourceAttachments()
    for count, mention in enumerate(mentions):
        if count >= MAX_RESOURCE_MENTIONS:
            out.notes.append(f"only the first {MAX_RESOURCE_MENTIONS} resource mentions are attached")
            break
        server = catalog.server(mention.server)
        if server is None:
            continue
        try:
            result = await mcp_call(server, "resources/read", live(server).read_resource(mention.uri))
        except ToolError as exc:
            out.notes.append(f"@{mention.shown}: {exc}")
            continue
        rendered: Rendered = render_read(result, take_images)
        out.blocks.append(rendered.text)
        out.images.extend(rendered.images)
        out.attached.append(f"@{mention.shown}")
    return out
