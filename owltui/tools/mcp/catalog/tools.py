"""The model's resource tools: ``mcp_list_resources`` (resources and templates of one server or
all) and ``mcp_read_resource`` (one URI: text inlined, binary named, images attached for a model
that takes them). Both read only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import Field

from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.tools.base import Params
from owltui.tools.mcp.catalog.contents import render_read
from owltui.tools.mcp.catalog.live import live, offers

if TYPE_CHECKING:
    from owltui.tools.mcp.server import McpServer

MAX_LISTED = 200  # resources listed per server in one answer
MAX_PAGES = 100


class McpCatalog(Protocol):
    """What the tools read of ``index.McpCatalog``."""

    def servers(self, capability: str = "resources") -> list[McpServer]: ...
    def server(self, name: str) -> McpServer | None: ...


async def all_pages(fetch: Callable[..., Awaitable[Any]], attr: str) -> list[Any]:
    """Every page of a paginated list (``attr``: the result's list field)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor=cursor)
        items.extend(getattr(page, attr))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


class ListParams(Params):
    server: str = Field("", description="server name; all when omitted")


class ReadParams(Params):
    server: str = Field(description="server name")
    uri: str = Field(description="resource URI")


def _describe(item: Any, uri: str) -> str:
    mime = f" ({item.mime_type})" if item.mime_type else ""
    about = item.description or item.title or ""
    return f"- {uri}{mime} {item.name}{': ' + about if about and about != item.name else ''}"


async def mcp_call(server: McpServer, what: str, coro: Any) -> Any:
    from mcp.shared.exceptions import MCPError

    try:
        return await coro
    except ToolError:
        raise
    except MCPError as exc:
        raise ToolError(
            f"The MCP server '{server.name}' answered {what} with an error: {exc.message}"
        ) from None
    except Exception as exc:
        from owltui.tools.mcp.client import describe_error

        raise ToolError(
            f"The MCP server '{server.name}' failed on {what}: {describe_error(exc, server.spec)}"
        ) from None


def _server(catalog: McpCatalog, name: str) -> McpServer:
    server = catalog.server(name)
    offering = ", ".join(s.name for s in catalog.servers()) or "none"
    if server is None:
        raise ToolError(f"No MCP server is named '{name}'; servers with resources: {offering}.")
    if not offers(server, "resources"):
        raise ToolError(
            f"The MCP server '{server.name}' offers no resources; servers with resources: {offering}."
        )
    return server


class ListResources:
    name: ClassVar[str] = "mcp_list_resources"
    description: ClassVar[str] = "List resources (and URI templates) of connected MCP servers."
    params: ClassVar[type[Params]] = ListParams
    read_only: ClassVar[bool] = True

    def __init__(self, catalog: McpCatalog) -> None:
        self.catalog = catalog

    async def run(self, args: ListParams, ctx: ToolContext) -> ToolOutput:
        servers = [_server(self.catalog, args.server)] if args.server else self.catalog.servers()
        blocks: list[str] = []
        for server in servers:
            found = await mcp_call(
                server, "resources/list", all_pages(live(server).list_resources, "resources")
            )
            templates = await mcp_call(
                server,
                "resources/templates/list",
                all_pages(live(server).list_resource_templates, "resource_templates"),
            )
            lines = [f"{server.name}: {len(found)} resources"]
            lines += [_describe(r, r.uri) for r in found[:MAX_LISTED]]
            if len(found) > MAX_LISTED:
                lines.append(f"({len(found) - MAX_LISTED} more not listed)")
            if templates:
                lines.append("templates (fill the {variables} to read):")
                lines += [_describe(t, t.uri_template) for t in templates[:MAX_LISTED]]
            blocks.append("\n".join(lines))
        return ToolOutput("\n\n".join(blocks) or "No connected MCP server offers resources.")


class ReadResource:
    name: ClassVar[str] = "mcp_read_resource"
    description: ClassVar[str] = "Read a resource of an MCP server by its URI."
    params: ClassVar[type[Params]] = ReadParams
    read_only: ClassVar[bool] = True

    def __init__(self, catalog: McpCatalog) -> None:
        self.catalog = catalog

    async def run(self, args: ReadParams, ctx: ToolContext) -> ToolOutput:
        server = _server(self.catalog, args.server)
        result = await mcp_call(server, f"resources/read {args.uri}", live(server).read_resource(args.uri))
        images = ctx.services.images
        take = images is not None and images.image_refusal() is None
        rendered = render_read(result, take)
        return ToolOutput(rendered.text, images=tuple(rendered.images), details={"uri": args.uri})
