"""MCP servers in ACP: the ones a client names in ``session/new`` and the workspace's ``.mcp.json``.

The client's servers (``McpServerStdio``, ``HttpMcpServer``, ``SseMcpServer``) count as approved:
they are written, with the servers of ``--mcp-config`` if one was given, to a ``.mcp.json``-format
file the runtime takes as its ``--mcp-config`` (the file a user names on the command line is
approved for the run; so is what the editor was configured with). A project ``.mcp.json`` nobody
decided on is asked about once through ``session/request_permission`` (``ask_project``), and the
answer is remembered for the workspace as ``/mcp approve`` / ``/mcp decline`` remember it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AllowedOutcome,
    HttpMcpServer,
    McpServerStdio,
    PermissionOption,
    SseMcpServer,
    ToolCallUpdate,
)

from owltui.session.commands.layer import Commands

APPROVE, DECLINE = "mcp-approve", "mcp-decline"


ClientServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def server_entry(server: HttpMcpServer | McpServerStdio) -> tuple[str, dict[str, Any]]:
    """One client-given server as a ``.mcp.json`` entry: (name, entry)."""
    if isinstance(server, HttpMcpServer):
        entry: dict[str, Any] = {"type": "http", "url": server.url}
        if server.headers:
            entry["headers"] = {h.name: h.value for h in server.headers}
        return server.name, entry
    entry = {"type": "stdio", "command": server.command, "args": list(server.args)}
    if server.env:
        entry["env"] = {e.name: e.value for e in server.env}
    return server.name, entry


def client_config(
    servers: Sequence[ClientServer], explicit: Path | None, directory: Path | None = None
) -> Path | None:
    """A ``.mcp.json``-format file with the client's servers (and ``explicit``'s, which win on a
    name both give); None when the client gave none (``explicit`` is used as it is)."""
    if not servers:
        return explicit
    merged: dict[str, Any] = {}
    for server in servers:
        if not isinstance(server, HttpMcpServer | McpServerStdio):
            print(
                f"owltui: warning: MCP server {server.name!r}: only stdio and http servers are supported",
                file=sys.stderr,
            )
            continue
        name, entry = server_entry(server)
        merged[name] = entry
    if explicit is not None:
        try:
            given = json.loads(explicit.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            return explicit  # the runtime reports what is wrong with it
        if isinstance(given, dict) and isinstance(given.get("mcpServers"), dict):
            merged.update(given["mcpServers"])
    fd, name = tempfile.mkstemp(prefix="owltui-acp-mcp-", suffix=".json", dir=directory)
    with open(fd, "w", encoding="utf-8") as fh:
        json.dump({"mcpServers": merged}, fh)
    return Path(name)


async def ask_project(conn: Client, session_id: str, commands: Commands) -> None:
    """Ask once about the workspace's ``.mcp.json`` when nobody decided on its content yet."""
    source = commands.ctx.host.mcp
    if source is None:
        return
    from owltui.tools.mcp.wiring import question

    text = question(source)
    if text is None:
        return
    options = [
        PermissionOption(
            option_id=APPROVE, name="Use these MCP servers in this workspace", kind="allow_always"
        ),
        PermissionOption(option_id=DECLINE, name="Do not start them", kind="reject_always"),
    ]
    call = ToolCallUpdate(
        tool_call_id="owltui-mcp-project",
        title="Start the MCP servers of .mcp.json?",
        kind="other",
        status="pending",
        raw_input={"question": text},
    )
    try:
        answer = await conn.request_permission(session_id=session_id, tool_call=call, options=options)
    except Exception:  # the client could not answer: ask again next time
        return
    outcome = answer.outcome
    if isinstance(outcome, AllowedOutcome) and outcome.option_id in (APPROVE, DECLINE):
        commands.call("mcp", action="approve" if outcome.option_id == APPROVE else "decline")
