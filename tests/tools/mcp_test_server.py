"""A small MCP server built with the official SDK (lowlevel ``Server``), for the MCP client tests.

    python mcp_test_server.py stdio
    python mcp_test_server.py http TOKEN   # Streamable HTTP on 127.0.0.1, a free port printed as
                                           # "PORT n"; every request needs "Authorization: Bearer TOKEN"

Tools: echo (readOnlyHint), slow (reports progress 0 once it runs, then sleeps; a cancelled call writes
"cancelled <seconds>" to the file named by $MCP_TEST_MARKER), picture (an image and a caption),
structured (structured content only), fails (an error result), spawn_child (starts ``sleep 300`` in
the server's process group and returns its pid), change_tools (sends tools/list_changed), whoami (the
server's pid and $MCP_TEST_GREETING), and one whose name needs sanitising. (Schemas the providers would
reject: ``mcp_raw_server.py``, as the SDK refuses to send them.)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import ToolsListChanged

CHILDREN: list[Any] = []  # kept referenced: the server leaves them running when it exits
BUS = InMemorySubscriptionBus()  # subscriptions/listen (2026-era clients opt in to list changes)

OBJ: dict[str, Any] = {"type": "object"}
TOOLS = [
    types.Tool(
        name="echo",
        description="Echo the text back.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="slow",
        description="Sleep for the given seconds, then answer.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number"}},
            "required": ["seconds"],
        },
    ),
    types.Tool(name="picture", description="A tiny picture.", input_schema=OBJ),
    types.Tool(name="structured", description="Structured content only.", input_schema=OBJ),
    types.Tool(name="fails", description="Always fails.", input_schema=OBJ),
    types.Tool(name="spawn_child", description="Start a child process.", input_schema=OBJ),
    types.Tool(name="change_tools", description="Announce a changed tool list.", input_schema=OBJ),
    types.Tool(name="whoami", description="", input_schema=OBJ),
    types.Tool(
        name="weird.name with spaces!",
        description="Needs a sanitised name.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    ),
]
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def text(value: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)], is_error=error)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return text(f"echo: {args['text']}")
    if name == "slow":
        start = time.monotonic()
        try:
            await ctx.session.report_progress(0, float(args["seconds"]), "sleeping")  # the call is here
            await anyio.sleep(float(args["seconds"]))
        except anyio.get_cancelled_exc_class():
            marker = os.environ.get("MCP_TEST_MARKER")
            if marker:
                note = f"cancelled {time.monotonic() - start:.2f}\n"
                with anyio.CancelScope(shield=True):
                    await anyio.Path(marker).write_text(note)
            raise
        return text(f"slept {args['seconds']}")
    if name == "picture":
        return types.CallToolResult(
            content=[
                types.ImageContent(type="image", data=PIXEL, mime_type="image/png"),
                types.TextContent(type="text", text="a red pixel"),
            ]
        )
    if name == "structured":
        return types.CallToolResult(content=[], structured_content={"answer": 42, "unit": "owls"})
    if name == "fails":
        return text("it broke on purpose", error=True)
    if name == "spawn_child":
        child = await anyio.open_process(
            ["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        CHILDREN.append(child)
        return text(str(child.pid))
    if name == "change_tools":
        if ctx.protocol_version < "2026":
            await ctx.session.send_tool_list_changed()  # 2025 era: sent unasked
        await BUS.publish(ToolsListChanged())  # 2026 era: to the listening clients
        return text("announced")
    if name == "whoami":
        return text(f"{os.getpid()} {os.environ.get('MCP_TEST_GREETING', '')}")
    return text(f"unknown tool {name}", error=True)


def make_server() -> Server[Any]:
    return Server(
        "owltui-test",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(BUS),
    )


async def run_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_http(token: str) -> None:
    import uvicorn

    app = make_server().streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong token"})
                return
        await app(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        run_http(sys.argv[2])
    else:
        anyio.run(run_stdio)
