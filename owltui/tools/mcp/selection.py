"""Which MCP servers a session starts: ``load_mcp_servers`` merges the sources by server name.

Sources, later ones overriding earlier ones by server name: the user config's ``[mcp.servers]``,
the workspace's ``.mcp.json`` (only once approved: ``approvals``) and ``--mcp-config FILE``.
Servers of a file inside the workspace (the model can write it) are marked ``confined``: they run
under the sandbox (``launch``). Servers whose names clash once made fit for tool names are left out
with a notice. Nothing here
imports the MCP SDK: this runs on the start-up path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from owltui.tools.mcp.approvals import PROJECT_FILE, McpApprovals, project_file
from owltui.tools.mcp.config import McpConfigError, ServerSpec, parse_server, parse_servers, read_file


def _merge(into: dict[str, ServerSpec], found: Iterable[ServerSpec], notices: list[str]) -> None:
    for spec in found:
        old = into.get(spec.name)
        if old is not None:
            notices.append(f"MCP server '{spec.name}' from {spec.origin} replaces the one from {old.origin}")
        into[spec.name] = spec


def load_mcp_servers(
    workspace: Path,
    user_servers: Mapping[str, Any] | None,
    explicit_file: Path | None,
    approved_store: McpApprovals | None,
    env: Mapping[str, str] | None = None,
) -> tuple[list[ServerSpec], list[str]]:
    """The servers to start and the notices to show (one line each).

    ``user_servers``: the user config's ``[mcp.servers]`` tables. ``explicit_file``: ``--mcp-config``
    (raises ``McpConfigError`` when it is missing or not valid). The workspace's ``.mcp.json`` is
    used when ``explicit_file`` is that file or ``approved_store`` holds an approval of its current
    content; otherwise a notice says how to approve it. Servers whose names clash once made fit for
    tool names are notices too; the result is sorted by key."""
    env = dict(os.environ if env is None else env)
    workspace = workspace.resolve()
    notices: list[str] = []
    chosen: dict[str, ServerSpec] = {}
    user = [
        parse_server(str(name), raw, "user config", workspace, env, notices)
        for name, raw in (user_servers or {}).items()
    ]
    _merge(chosen, [s for s in user if s is not None], notices)

    explicit = explicit_file.expanduser().resolve() if explicit_file is not None else None
    project = project_file(workspace, approved_store)
    if project is not None and project.path.resolve() != explicit:
        label = f"{project.path.name} in {workspace}"
        if project.error is not None:
            notices.append(f"{label} is not used: {project.error}")
        elif project.decision is True:  # the servers of the content approved, not of a second read
            found = parse_servers(project.data, str(project.path), workspace, env, notices, confined=True)
            _merge(chosen, found, notices)
        elif project.decision is False and project.servers:
            notices.append(
                f"{label} is not used: you declined its MCP servers "
                f"({', '.join(project.servers)}); /mcp approve to use them"
            )
        elif project.decision is None and project.servers:
            notices.append(
                f"{label} defines MCP servers ({', '.join(project.servers)}) that are not "
                "started until you approve the file: /mcp approve in the TUI, or pass "
                f"--mcp-config {PROJECT_FILE}"
            )
    if explicit is not None:
        try:
            _, data = read_file(explicit)
            confined = explicit == workspace or workspace in explicit.parents
            found = parse_servers(data, str(explicit), workspace, env, notices, confined)
        except ValueError as exc:
            raise McpConfigError(f"--mcp-config {explicit_file}: {exc}") from None
        _merge(chosen, found, notices)

    by_key: dict[str, ServerSpec] = {}
    for spec in chosen.values():
        other = by_key.get(spec.key)
        if other is not None:
            notices.append(
                f"MCP server '{spec.name}' is not used: its tool names would clash with "
                f"'{other.name}' (both become mcp__{spec.key}__...)"
            )
            continue
        by_key[spec.key] = spec
    return [by_key[k] for k in sorted(by_key)], notices
