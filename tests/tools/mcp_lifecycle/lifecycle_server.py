"""An SDK-built MCP server over stdio for the life-cycle tests.

    python lifecycle_server.py

Tools: hang (never answers; a cancelled call writes "cancelled" to $MCP_TEST_MARKER), ticking
(``seconds`` long, a progress notification every ``every`` seconds, then "ticked"), dual (the same
payload as text and as structuredContent: ``mode`` "json" sends the JSON re-indented, "file" sends
the text and ``{"content": text}``), picture (an image block and an embedded image resource),
relist (``mode`` "same" announces tools/list_changed without a change, "add" adds the tool
``extra`` first).
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import ToolsListChanged

BUS = InMemorySubscriptionBus()
OBJ: dict[str, Any] = {"type": "object"}
# a 2×3 red PNG
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAE0lEQVR4nGP8z8DAwMDAxIBMAQAUQAEF3SN5DgAAAABJRU5ErkJggg=="
)
PAYLOAD = {"path": "notes.txt", "lines": [f"line {i}: {'owl ' * 12}" for i in range(40)], "total": 40}
TOOLS = [
    types.Tool(name="hang", description="Never answers.", input_schema=OBJ),
    types.Tool(
        name="ticking",
        description="Reports progress while it works.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "every": {"type": "number"}},
            "required": ["seconds", "every"],
        },
    ),
    types.Tool(
        name="dual",
        description="The same payload as text and structured content.",
        input_schema={"type": "object", "properties": {"mode": {"type": "string"}}},
    ),
    types.Tool(name="picture", description="Two pictures.", input_schema=OBJ),
    types.Tool(
        name="relist",
        description="Announce a tool list change.",
        input_schema={"type": "object", "properties": {"mode": {"type": "string"}}},
    ),
]
EXTRA = types.Tool(name="extra", description="Added later.", input_schema=OBJ)
LISTED = list(TOOLS)


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=LISTED)


async def announce(ctx: Any) -> None:
    if ctx.protocol_version < "2026":
        await ctx.session.send_tool_list_changed()
    await BUS.publish(ToolsListChanged())


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "hang":
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            marker = os.environ.get("MCP_TEST_MARKER")
            if marker:
                with anyio.CancelScope(shield=True):
                    await anyio.Path(marker).write_text("cancelled\n")
            raise
    if params.name == "ticking":
        seconds, every = float(args["seconds"]), float(args["every"])
        done = 0.0
        while done < seconds:
            await anyio.sleep(every)  # the work being simulated, not synchronisation
            done += every
            await ctx.session.report_progress(done, seconds, "working")
        return text("ticked")
    if params.name == "dual":
        if args.get("mode") == "file":
            body = "\n".join(PAYLOAD["lines"])  # type: ignore[arg-type]
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=body)], structured_content={"content": body}
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(PAYLOAD, indent=4))],
            structured_content=PAYLOAD,
        )
    if params.name == "picture":
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="two red pictures"),
                types.ImageContent(type="image", data=PIXEL, mime_type="image/png"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.BlobResourceContents(
                        uri="file:///red.png", mime_type="image/png", blob=PIXEL
                    ),
                ),
            ]
        )
    if params.name == "relist":
        if args.get("mode") == "add" and EXTRA not in LISTED:
            LISTED.append(EXTRA)
        await announce(ctx)
        return text("announced")
    return types.CallToolResult(content=[types.TextContent(type="text", text="unknown")], is_error=True)


async def main() -> None:
    from mcp.server.stdio import stdio_server

    server: Server[Any] = Server(
        "owltui-lifecycle",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(BUS),
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
