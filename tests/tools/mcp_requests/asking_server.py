"""A small MCP server (the official SDK's lowlevel ``Server``, stdio) whose tools ask the client:
``ask`` (a form whose every field has a default; the result's action and content as JSON),
``sample`` (``sampling/createMessage``; the client's error as text), ``capabilities`` (what the
client advertised, as JSON). On a 2026-era connection a question is an ``InputRequiredResult`` (the
client answers and calls again), before it an ``elicitation/create`` request."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

OBJ: dict[str, Any] = {"type": "object"}
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}
TOOLS = [types.Tool(name=n, description=n, input_schema=OBJ) for n in ("ask", "sample", "capabilities")]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: Any, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    modern = ctx.protocol_version >= "2026"
    if params.name == "ask":
        if modern:
            answered = (params.input_responses or {}).get("form")
            if answered is None:
                ask = types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message="Fill in", requested_schema=FORM)
                )
                return types.InputRequiredResult(input_requests={"form": ask})
            result = types.ElicitResult.model_validate(answered, from_attributes=True)
        else:
            result = await ctx.session.elicit_form("Fill in", FORM, related_request_id=ctx.request_id)
        return text(json.dumps({"action": result.action, "content": result.content}))
    if params.name == "sample":
        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
        if modern:
            ask = types.CreateMessageRequest(
                params=types.CreateMessageRequestParams(messages=[message], max_tokens=5)
            )
            return types.InputRequiredResult(input_requests={"sample": ask})
        try:
            await ctx.session.create_message([message], max_tokens=5, related_request_id=ctx.request_id)
        except MCPError as exc:
            return text(f"refused: {exc.message}")
        return text("sampled")
    caps = ctx.session.client_capabilities
    return text(caps.model_dump_json(by_alias=True, exclude_none=True) if caps is not None else "{}")


async def main() -> None:
    from mcp.server.stdio import stdio_server

    server: Server[Any] = Server("asking", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
