"""MCP client: the Model Context Protocol servers users already run, as OwlTUI tools.

``config``: which servers (``.mcp.json``, ``[mcp.servers.NAME]``, ``--mcp-config``, approvals);
``source``: ``McpSource``, the tool source that connects them in the background and freezes their
tools before the first request; ``names``: ``mcp__SERVER__TOOL`` and the ``[allow] mcp`` rules;
``schema`` and ``results``: the server's JSON schema in, its results out as text; ``client`` and
``stdio``: the SDK side (imported only in the background).

Nothing imported here loads the MCP SDK.
"""

from __future__ import annotations

from owltui.tools.mcp.config import (
    McpApprovals,
    McpConfigError,
    McpSettings,
    ProjectFile,
    ServerSpec,
    approve_project,
    load_mcp_servers,
    project_file,
)
from owltui.tools.mcp.names import (
    proposed_rule,
    rule_matches,
    rule_subject,
    rule_verdict,
    split_tool_name,
    tool_name,
)
from owltui.tools.mcp.source import McpSource, McpTool
from owltui.tools.mcp.wiring import decide, describe, mcp_source, question, status

__all__ = [
    "McpApprovals",
    "McpConfigError",
    "McpSettings",
    "McpSource",
    "McpTool",
    "ProjectFile",
    "ServerSpec",
    "approve_project",
    "decide",
    "describe",
    "load_mcp_servers",
    "mcp_source",
    "project_file",
    "proposed_rule",
    "question",
    "rule_matches",
    "rule_subject",
    "rule_verdict",
    "split_tool_name",
    "status",
    "tool_name",
]
