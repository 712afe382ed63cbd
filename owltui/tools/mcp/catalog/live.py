"""A server's connected SDK client, read for resources and prompts (``McpServer._client``, which
``McpServer.run`` sets while connected), and whether it advertised a capability."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from owltui.agent.tool import ToolError

if TYPE_CHECKING:
    from owltui.tools.mcp.server import McpServer


def offers(server: McpServer, capability: str) -> bool:
    """Whether the connected ``server`` advertised ``capability`` (``resources`` or ``prompts``)."""
    client = server._client if server.state == "connected" else None
    return client is not None and getattr(client.server_capabilities, capability, None) is not None


def live(server: McpServer) -> Any:
    """The connected SDK client of ``server`` (its ``list_resources``, ``read_resource``,
    ``list_prompts``, ``get_prompt``); a ToolError when it is not connected."""
    if server._client is None or server.state != "connected":
        why = f": {server.error}" if server.error else ""
        raise ToolError(f"The MCP server '{server.name}' is not connected{why}.")
    return server._client
