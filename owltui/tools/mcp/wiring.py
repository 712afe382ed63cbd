"""The MCP client as the runtime, the commands and the permission rules use it: each wiring is a line
or two (see ``owltui.tools.mcp`` for the pieces).

- runtime: ``mcp = mcp_source(workspace, config.mcp, options.mcp_config, env, warn, data_dir(env),
  sandbox)`` (the session's ``SandboxPolicy``: servers a workspace file defines run under it, with the
  network allowed; stdio servers start in ``<data dir>/mcp-cwd``), added to the sources; before the
  session's first model request, ``await mcp.wait_ready()`` and the tool list taken again
  (``collect_tools``) — the list is then fixed for the session.
- ``/mcp``: ``describe(mcp)``; ``/mcp approve`` / ``/mcp decline``: ``decide(mcp, True|False)``;
  RPC ``mcp_status``: ``{"servers": status(mcp)}``; the start-up question: ``question(mcp)``.
- permissions: ``names.rule_verdict(name, allow["mcp"], deny["mcp"])`` and ``names.proposed_rule``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from owltui.agent.services import Sandbox
from owltui.tools.mcp.approvals import McpApprovals, approve_project, project_file
from owltui.tools.mcp.config import McpSettings, parse_servers
from owltui.tools.mcp.launch import Launch, neutral_dir
from owltui.tools.mcp.selection import load_mcp_servers
from owltui.tools.mcp.source import McpSource

APPROVALS_FILE = "mcp-approvals.json"


def approvals_in(data_dir: Path) -> McpApprovals:
    """The approval store under OwlTUI's data directory."""
    return McpApprovals(data_dir / APPROVALS_FILE)


def server_sandbox(sandbox: Sandbox | None) -> Sandbox | None:
    """The session's sandbox as servers a workspace file defines run under it: the same policy with
    the network allowed (a server that talks to nothing is rare). None: ``Launch``'s default."""
    from owltui.policy.sandbox.kernel import PROTECTED_IN_WORKSPACE, SandboxPolicy

    if not isinstance(sandbox, SandboxPolicy) or sandbox.network:
        return sandbox
    own = {sandbox.workspace / p for p in PROTECTED_IN_WORKSPACE}  # the new policy adds these itself
    return SandboxPolicy(
        sandbox.mode,
        sandbox.workspace,
        writable=sandbox.writable,
        network=True,
        unix_sockets=sandbox.unix_sockets,
        env_keep=sandbox.env_keep,
        protected=[p for p in sandbox.protected_paths() if p not in own],
        landlock=None if sandbox.abi else False,
        namespaces=sandbox.namespaces,
        userns=sandbox.userns,
    )


def mcp_source(
    workspace: Path,
    settings: McpSettings | None,
    explicit_file: Path | None,
    env: Mapping[str, str],
    warn: Callable[[str], None],
    data_dir: Path,
    sandbox: Sandbox | None = None,
) -> McpSource:
    """The session's MCP source (possibly without servers): notices go to ``warn`` now; raises
    ``McpConfigError`` for an unusable ``--mcp-config`` file. Starts nothing (``start`` does).
    ``sandbox``: the session's policy (see ``server_sandbox``)."""
    settings = settings or McpSettings()
    approvals = approvals_in(data_dir)
    servers, notices = load_mcp_servers(workspace, settings.servers, explicit_file, approvals, env)
    for notice in notices:
        warn(notice)
    source = McpSource(
        servers,
        workspace=workspace,
        env=env,
        warn=warn,
        trust_read_only_hints=settings.trust_read_only_hints,
        startup_timeout=settings.startup_timeout,
        launch=Launch(workspace, neutral_dir(data_dir), server_sandbox(sandbox)),
        tool_timeout=settings.tool_timeout,
    )
    source.approvals = approvals
    source.requests.policy = settings.elicitation
    return source


def question(source: McpSource) -> str | None:
    """The approval question for the workspace's ``.mcp.json`` when the user never decided on its
    current content (the TUI asks it once at start-up; yes -> ``decide(source, True)``)."""
    found = project_file(source.workspace, source.approvals)
    if found is None or found.error is not None or found.decision is not None or not found.servers:
        return None
    return found.question()


def decide(source: McpSource, approved: bool) -> str:
    """``/mcp approve`` and ``/mcp decline``: remember the answer for the workspace's ``.mcp.json``
    and, when approved, start its servers now (their tools join at the next turn boundary)."""
    approvals = source.approvals
    if approvals is None:
        return "MCP approvals are not available here."
    found = approve_project(source.workspace, approvals, approved)
    if found is None:
        return f"There is no .mcp.json in {source.workspace}."
    if found.error is not None:
        return f"{found.path} cannot be used: {found.error}"
    if not approved:
        return f"The MCP servers of {found.path} will not be started in this workspace."
    notices: list[str] = []  # the servers of the content just approved (not of a second read)
    servers = parse_servers(
        found.data, str(found.path), source.workspace.resolve(), source.env, notices, confined=True
    )
    for notice in notices:
        source.warn(notice)
    names = ", ".join(s.name for s in servers) or "none"
    if not servers:
        return f"Approved {found.path}: it names no MCP server that can be started."
    if not source.add_servers(servers):
        return f"Approved {found.path}: its MCP servers ({names}) start with the next session."
    if source.frozen:
        return (
            f"Approved {found.path}: starting its MCP servers ({names}) now; each one's tools join "
            "at the next turn once it connects (a notice says so)."
        )
    return f"Approved {found.path}: starting its MCP servers ({names})."


NONE = "No MCP servers are configured (.mcp.json, [mcp.servers.NAME] or --mcp-config FILE)."


def awaiting(source: McpSource) -> list[dict[str, Any]]:
    """The workspace ``.mcp.json``'s servers that wait for ``/mcp approve`` (never decided on this
    content, or declined), as ``status`` entries with the state ``awaiting_approval`` or
    ``declined``; a file that cannot be used is one entry with the state ``failed``."""
    found = project_file(source.workspace, source.approvals)
    if found is None or found.decision is True:
        return []
    if found.error is not None:
        return [{"name": found.path.name, "state": "failed", "tools": [], "error": found.error}]
    running = {s.name for s in source.servers}
    state = "declined" if found.decision is False else "awaiting_approval"
    return [
        {"name": name, "state": state, "tools": [], "file": str(found.path), "approve": "/mcp approve"}
        for name in found.servers
        if name not in running
    ]


def status(source: McpSource | None) -> list[dict[str, Any]]:
    """The ``mcp_status`` RPC answer's ``servers``: the source's, then those awaiting approval."""
    return [*source.status(), *awaiting(source)] if source is not None else []


def describe(source: McpSource | None) -> str:
    """``/mcp``: servers, state, tools; a ``.mcp.json`` not approved yet is listed with the command
    that approves it."""
    if source is None:
        return NONE
    lines = [source.describe()] if source.servers else []
    waiting = awaiting(source)
    if waiting and waiting[0]["state"] == "failed":
        lines.append(f"{waiting[0]['name']}: cannot be used: {waiting[0]['error']}")
    elif waiting:
        where = waiting[0]["file"]
        names = ", ".join(e["name"] for e in waiting)
        if waiting[0]["state"] == "declined":
            lines.append(f"{where}: declined, not started ({names}); /mcp approve starts them")
        else:
            lines.append(f"{where}: awaiting approval ({names}); /mcp approve starts them now, /mcp decline")
    return "\n".join(lines) if lines else NONE
