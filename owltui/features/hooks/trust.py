"""Hooks a project defines (a repository's ``.claude/settings.json``) start nothing until the user
approved them, because a cloned repository must not run programs on its own.

The approval names their content: every project hook (event, matcher, command, timeout, file) and
the SHA-256 of each project settings file and of every workspace file a command names (such as
``.claude/hooks/check.sh``); a change to any of them asks again. Decisions are kept by the same
store as the workspace's ``.mcp.json`` approvals (``owltui.tools.mcp.approvals.McpApprovals``), in a
file of their own; the store is lent by the session (this layer cannot name it).
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from owltui.features.hooks.config import ConfiguredHook

APPROVALS_FILE = "hook-approvals.json"


class Decisions(Protocol):
    """What the approval store offers (``McpApprovals``)."""

    def decision(self, workspace: Path, sha256: str) -> bool | None: ...

    def record(
        self, workspace: Path, sha256: str, approved: bool, launch: list[str] | None = None
    ) -> None: ...


def _sha(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"


def _named(command: str, workspace: Path) -> list[Path]:
    """Workspace files a command names (``$CLAUDE_PROJECT_DIR/x.sh``, ``./x.py``, ``x.py``)."""
    text = command.replace("${CLAUDE_PROJECT_DIR}", str(workspace)).replace(
        "$CLAUDE_PROJECT_DIR", str(workspace)
    )
    text = text.replace("${OWLTUI_PROJECT_DIR}", str(workspace)).replace(
        "$OWLTUI_PROJECT_DIR", str(workspace)
    )
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    real = Path(os.path.realpath(workspace))
    found: dict[Path, None] = {}
    for word in words:
        cand = Path(os.path.realpath(workspace / word))
        if real in cand.parents and cand.is_file():
            found[cand] = None
    return list(found)


def project_hooks(hooks: Sequence[ConfiguredHook]) -> list[ConfiguredHook]:
    return [h for h in hooks if h.source.project]


def content_lines(hooks: Sequence[ConfiguredHook], workspace: Path) -> list[str]:
    """What an approval covers, one fact a line (also what the question shows)."""
    lines: list[str] = []
    files = dict.fromkeys(h.source.path for h in hooks)
    for path in files:
        lines.append(f"{path} sha256 {_sha(path)}")
    for h in hooks:
        matcher = f" [{h.matcher}]" if h.matcher else ""
        lines.append(f"{h.event}{matcher}: {h.command} (timeout {h.timeout:g} s)")
        for named in _named(h.command, workspace):
            lines.append(
                f"  {named.relative_to(Path(os.path.realpath(workspace))).as_posix()} sha256 {_sha(named)}"
            )
    return lines


def content_digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


class ProjectTrust:
    """Whether this workspace's project hooks, as they are now, were approved."""

    def __init__(self, hooks: Sequence[ConfiguredHook], workspace: Path, store: Decisions | None) -> None:
        self.hooks = project_hooks(hooks)
        self.workspace = workspace
        self.store = store
        self.lines = content_lines(self.hooks, workspace) if self.hooks else []
        self.digest = content_digest(self.lines)
        self.approved = (
            bool(self.hooks) and store is not None and store.decision(workspace, self.digest) is True
        )

    def trusted(self, hook: ConfiguredHook) -> bool:
        return not hook.source.project or self.approved

    def pending(self) -> bool:
        """Project hooks exist and the user never approved exactly these."""
        return bool(self.hooks) and not self.approved

    def notice(self) -> str:
        return (
            f"{len(self.hooks)} project hook(s) are not approved and will not run; review them with "
            "/hooks and approve with /hooks approve (asked again when they change)"
        )

    def question(self) -> str:
        listed = "\n".join(f"  {line}" for line in self.lines)
        return f"This project defines hooks OwlTUI would run as commands:\n{listed}\n"

    def decide(self, approved: bool) -> str:
        if not self.hooks:
            return "this workspace defines no project hooks"
        if self.store is None:
            return "hook approvals are not available here"
        # the content as it is now: what the user just reviewed with /hooks
        self.lines = content_lines(self.hooks, self.workspace)
        self.digest = content_digest(self.lines)
        self.store.record(self.workspace, self.digest, approved, self.lines if approved else None)
        self.approved = approved
        return f"project hooks {'approved' if approved else 'declined'} ({len(self.hooks)} command(s))"
