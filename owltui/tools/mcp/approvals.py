"""Which workspace ``.mcp.json`` files the user approved: ``McpApprovals`` (the store) and
``ProjectFile`` (the workspace's file as the approval question shows it).

A workspace's ``.mcp.json`` is used only once the user approved it (workspace path -> SHA-256 of
the file; a changed file needs a new approval), because a cloned repository must not start
programs on its own. Print mode cannot ask: it needs ``--mcp-config FILE`` (naming a file is
approving it) or an earlier approval.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from owltui.tools.mcp.config import read_file

PROJECT_FILE = ".mcp.json"


def digest(raw: bytes) -> str:
    """The SHA-256 (hex) of a file's bytes: the content an approval names."""
    return hashlib.sha256(raw).hexdigest()


class McpApprovals:
    """Which workspace ``.mcp.json`` files the user approved (or declined), by content hash.

    A JSON file ``{"workspaces": {"/abs/path": {"sha256": ..., "approved": bool, "at": epoch}}}``,
    normally ``<data dir>/mcp-approvals.json``; rewritten atomically. A file that cannot be read
    counts as empty (nothing approved)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        spaces = data.get("workspaces") if isinstance(data, dict) else None
        return spaces if isinstance(spaces, dict) else {}

    def decision(self, workspace: Path, sha256: str) -> bool | None:
        """True/False when the user decided on exactly this content of the workspace's file."""
        entry = self._load().get(str(workspace.resolve()))
        if (
            isinstance(entry, dict)
            and entry.get("sha256") == sha256
            and isinstance(entry.get("approved"), bool)
        ):
            return bool(entry["approved"])
        return None

    def record(self, workspace: Path, sha256: str, approved: bool) -> None:
        """Remember the decision (raises OSError when the file cannot be written)."""
        spaces = self._load()
        spaces[str(workspace.resolve())] = {"sha256": sha256, "approved": approved, "at": int(time.time())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mcp-approvals-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"workspaces": spaces}, fh, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


@dataclass
class ProjectFile:
    """The workspace's ``.mcp.json`` as the approval question shows it."""

    path: Path
    sha256: str
    servers: list[str]  # names, as written
    decision: bool | None  # None: never decided on this content
    error: str | None = None  # why it cannot be used (not JSON, wrong shape)
    data: Any = field(default=None, repr=False)  # the parsed document: the content ``sha256`` names

    def question(self) -> str:
        listed = "\n".join(f"  {name}" for name in self.servers)
        return (
            f"{self.path} defines MCP servers that OwlTUI would start as programs or connect to:\n"
            f"{listed}\nUse them in this workspace? (asked again if the file changes)"
        )


def project_file(workspace: Path, approvals: McpApprovals | None) -> ProjectFile | None:
    """The workspace's ``.mcp.json`` and what the user decided about it; None when there is none."""
    path = workspace / PROJECT_FILE
    if not path.is_file():
        return None
    try:
        raw, data = read_file(path)
    except ValueError as exc:
        return ProjectFile(path, "", [], None, str(exc))
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return ProjectFile(path, digest(raw), [], None, 'expected an object with "mcpServers"')
    sha = digest(raw)
    decided = approvals.decision(workspace, sha) if approvals is not None else None
    return ProjectFile(path, sha, [str(n) for n in servers], decided, data=data)


def approve_project(workspace: Path, approvals: McpApprovals, approved: bool = True) -> ProjectFile | None:
    """Record the user's answer for the workspace's current ``.mcp.json`` (the ``/mcp approve`` and
    ``/mcp decline`` commands, or the start-up question). Returns the file as decided."""
    found = project_file(workspace, approvals)
    if found is None or found.error is not None:
        return found
    approvals.record(workspace, found.sha256, approved)
    found.decision = approved
    return found
