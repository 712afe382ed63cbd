"""``McpCatalog``: the resources, resource templates and prompts of each connected MCP server, and
the ``mcp_list_resources`` / ``mcp_read_resource`` tools as a tool source.

Once a server connects, its lists are gathered (every page) in the background, so mention
completion and the prompt commands read them without waiting. The two tools join the session's
fixed tool list only when a connected server advertised resources (a session without one sends
the same first request as before). ``catalog_of(source)`` is the one catalog of an ``McpSource``.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from owltui.agent.tool import Tool
from owltui.tools.mcp.catalog.live import live, offers
from owltui.tools.mcp.server import McpServer
from owltui.tools.mcp.source import McpSource

log = logging.getLogger(__name__)
LIST_WITHIN = 30.0  # one server's lists gathered within this, else what came so far


@dataclass
class Listed:
    """What one server offers beside tools."""

    resources: list[Any] = field(default_factory=list)  # mcp_types.Resource
    templates: list[Any] = field(default_factory=list)  # mcp_types.ResourceTemplate
    prompts: list[Any] = field(default_factory=list)  # mcp_types.Prompt


class McpCatalog:
    """The resources and prompts of an ``McpSource``'s servers; a ``ToolSource`` named
    ``mcp_catalog``."""

    name = "mcp_catalog"

    def __init__(self, source: McpSource) -> None:
        self.source = source
        self.listed: dict[str, Listed] = {}  # by server key
        self.gathered = anyio.Event()  # every server's lists gathered (or given up on)
        self._offered: list[Tool] | None = None
        self._started = False
        self._tg: anyio.abc.TaskGroup | None = None
        self._asked: set[str] = set()  # servers whose lists are being or were gathered
        self._closing = anyio.Event()

    # ---- the ToolSource protocol ---------------------------------------------------------------
    def tools(self) -> Sequence[Tool]:
        """The resource tools once a connected server advertised resources (then for the rest of
        the session: a server that stops keeps them, as its tools stay); empty until the MCP
        source's list is fixed. The runtime asks when it fixes the session's tool list."""
        if self._offered is None and self.source.ready and self.source.frozen and self.servers("resources"):
            from owltui.tools.mcp.catalog.tools import ListResources, ReadResource  # pydantic: when used

            self._offered = [ListResources(self), ReadResource(self)]
        return self._offered or []

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                async with anyio.create_task_group() as first:  # the servers configured at start
                    for server in self.source.servers:
                        self._asked.add(server.spec.key)
                        first.start_soon(self._gather, server)
                self.gathered.set()
                await self._closing.wait()  # servers approved later are gathered here (``listing``)
        finally:
            self._tg = None
            self.gathered.set()

    async def aclose(self) -> None:
        self._closing.set()

    # ---- what it offers ------------------------------------------------------------------------
    def servers(self, capability: str = "resources") -> list[McpServer]:
        """The connected servers that advertised ``capability`` (``resources`` or ``prompts``)."""
        return [s for s in self.source.servers if offers(s, capability)]

    def listing(self, server: McpServer) -> Listed | None:
        """What ``server`` listed (None before it did); a server added after the start (``/mcp
        approve``) is gathered from the first call (on the event loop's thread)."""
        key = server.spec.key
        if key not in self._asked and self._tg is not None:
            self._asked.add(key)
            self._tg.start_soon(self._gather, server)
        return self.listed.get(key)

    def server(self, name: str) -> McpServer | None:
        """The server named ``name`` (its configured name or its key in tool names)."""
        for server in self.source.servers:
            if name in (server.name, server.spec.key):
                return server
        return None

    async def _gather(self, server: McpServer) -> None:
        from owltui.tools.mcp.catalog.tools import all_pages

        await server.settled.wait()
        if not server.is_connected():
            return
        listed = self.listed.setdefault(server.spec.key, Listed())
        with anyio.move_on_after(LIST_WITHIN):
            try:
                if offers(server, "resources"):
                    listed.resources = await all_pages(live(server).list_resources, "resources")
                    listed.templates = await all_pages(
                        live(server).list_resource_templates, "resource_templates"
                    )
                if offers(server, "prompts"):
                    listed.prompts = await all_pages(live(server).list_prompts, "prompts")
            except Exception as exc:  # a server without a list it advertised: nothing offered
                log.debug("MCP server %s: listing resources or prompts failed: %s", server.name, exc)


_CATALOGS: weakref.WeakKeyDictionary[McpSource, McpCatalog] = weakref.WeakKeyDictionary()


def catalog_of(source: McpSource) -> McpCatalog:
    """The catalog of ``source`` (made at the first call; the runtime adds it to its sources)."""
    found = _CATALOGS.get(source)
    if found is None:
        found = _CATALOGS[source] = McpCatalog(source)
    return found
