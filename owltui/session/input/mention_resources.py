"""``@server:uri`` mentions of a message (``owltui.tools.mcp.catalog.mentions``) in the command
layer's send path: the resources are read (awaited: off the handler), their blocks appended to the
message the file mentions already expanded, their images beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from owltui.agent.messages import ImageRef, Lane, UserMessage

if TYPE_CHECKING:
    from owltui.agent.agent import Agent
    from owltui.session.input.mentions import Expansion
    from owltui.tools.mcp.catalog.index import McpCatalog
    from owltui.tools.mcp.catalog.mentions import ResourceMention
    from owltui.tools.mcp.source import McpSource


def resource_mentions(source: McpSource | None, text: str) -> tuple[McpCatalog, list[ResourceMention]] | None:
    """The catalog and the ``@server:uri`` mentions of ``text``; None when there are none."""
    if source is None or "@" not in text:
        return None
    from owltui.tools.mcp.catalog.index import catalog_of
    from owltui.tools.mcp.catalog.mentions import find_resource_mentions, server_names

    catalog = catalog_of(source)
    found = find_resource_mentions(text, server_names(catalog))
    return (catalog, found) if found else None


def resource_candidates(source: McpSource | None) -> list[str]:
    """``server:uri`` of every listed resource of the connected servers (mention completion)."""
    if source is None:
        return []
    from owltui.tools.mcp.catalog.index import catalog_of

    catalog = catalog_of(source)
    out: list[str] = []
    for server in catalog.servers("resources"):
        listed = catalog.listed.get(server.spec.key)  # a worker thread: no gathering from here
        out += [f"{server.name}:{r.uri}" for r in (listed.resources if listed is not None else [])]
    return out


def drop_path_notes(expansion: Expansion, mentions: list[ResourceMention]) -> None:
    """The file mentions' "no such file" notes for what are resource mentions."""
    shown = tuple(f"@{m.shown}" for m in mentions)
    expansion.notes = [n for n in expansion.notes if not n.startswith(shown)]


async def with_resources(
    agent: Agent, expansion: Expansion, catalog: McpCatalog, mentions: list[ResourceMention]
) -> tuple[str, tuple[ImageRef, ...], str, bool]:
    """The message's text with the resources attached, its images, the line for the user, and
    whether a mention could not be attached."""
    from owltui.tools.mcp.catalog.mentions import read_mentions

    images = agent.config.services.images
    take = images is not None and images.image_refusal() is None
    got = await read_mentions(catalog, mentions, take)
    text = expansion.text
    if got.blocks:
        text = text.rstrip() + "\n\n" + "\n\n".join(got.blocks)
    attached = [*expansion.attached, *got.attached]
    parts = ["attached " + ", ".join(attached)] if attached else []
    parts += [f"@{a.mention}: {a.error}" for a in expansion.attachments if a.error is not None]
    parts += [*expansion.notes, *got.notes]
    failed = bool(got.notes or expansion.notes or any(a.error for a in expansion.attachments))
    return text, (*expansion.images, *got.images), "; ".join(parts), failed


def message(text: str, images: tuple[ImageRef, ...], lane: Lane = "user") -> str | UserMessage:
    """What to send: the text, or a message for ``lane`` with the images."""
    return UserMessage(text=text, lane=lane, images=images) if images else text
