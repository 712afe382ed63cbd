"""A hand-written MCP server over stdio (no SDK), for what the SDK's server refuses to send: tool
schemas the providers would reject, and a 2025-era ``tools/list_changed`` sent unasked (before the
answer to a call of ``fine``). Answers initialize, tools/list and tools/call; every other
request gets "method not found".
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "fine", "description": "A good tool.", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "no_type",
        "description": "No root type: gets type object.",
        "inputSchema": {"properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {"name": "scalar_root", "description": "A string root.", "inputSchema": {"type": "string"}},
    {
        "name": "union_root",
        "description": "anyOf at the top.",
        "inputSchema": {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    },
    {
        "name": "broken",
        "description": "Not a valid JSON Schema.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "no-such-type"}}},
    },
    {"name": "a" * 80, "description": "A very long name.", "inputSchema": {"type": "object"}},
]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    print("this server writes a log line to stdout first", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, rid = msg.get("method"), msg["id"]
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": msg["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
        elif method == "tools/call" and msg["params"]["name"] == "fine":
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "content": [
                            {
                                "type": "text",
                                "text": f"called fine with {json.dumps(msg['params'].get('arguments'))}",
                            }
                        ]
                    },
                }
            )
        elif method == "tools/call":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "content": [
                            {
                                "type": "text",
                                "text": f"called {msg['params']['name']} with {json.dumps(msg['params'].get('arguments'))}",
                            }
                        ]
                    },
                }
            )
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32601, "message": f"method not found: {method}"},
                }
            )


if __name__ == "__main__":
    main()
