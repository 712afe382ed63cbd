"""Which workspace ``.mcp.json`` files the user approved: ``McpApprovals`` (the store) and
``ProjectFile`` (the workspace's file as the approval question shows it).

A workspace's ``.mcp.json`` is used only once the user approved it, because a cloned repository
must not start programs on its own. An approval names the file's bytes *and* what its servers run
(``launch_lines``: each server's command, arguments and working directory, and the SHA-256 of every
workspace file the command or an argument names, such as ``./tools/mcp.sh``): a change to any of
them needs a new approval, and the question then shows what changed since the last one. Print mode
cannot ask: it needs ``--mcp-config FILE`` (naming a file is approving it) or an earlier approval.
(What a server loads without naming it, such as a script's imports, is not covered here: these
servers run under the sandbox, see ``launch``.)
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from owltui.tools.mcp.config import read_file

PROJECT_FILE = ".mcp.json"
HASHED_UP_TO = 64 * 1024 * 1024  # a named file larger than this counts by its size and time only


def digest(raw: bytes) -> str:
    """The SHA-256 (hex) of a file's bytes: the content an approval names."""
    return hashlib.sha256(raw).hexdigest()


def _file_digest(path: Path) -> str:
    try:
        st = path.stat()
        if st.st_size > HASHED_UP_TO:
            return f"size {st.st_size}, modified {st.st_mtime_ns}"
        with path.open("rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"


def _named_files(words: list[str], bases: list[Path], workspace: Path) -> list[Path]:
    """The workspace files that ``words`` (a command and its arguments) name, relative to ``bases``."""
    real_ws = Path(os.path.realpath(workspace))
    found: dict[Path, None] = {}
    for word in words:
        for text in dict.fromkeys([word, word.partition("=")[2]]):
            if not text or "\0" in text:
                continue
            for base in bases:
                cand = Path(os.path.realpath(base / os.path.expanduser(text)))
                if (cand == real_ws or real_ws in cand.parents) and cand.is_file():
                    found[cand] = None
    return list(found)


def launch_lines(data: Any, workspace: Path) -> list[str]:
    """What the servers of a parsed ``.mcp.json`` run, one line per fact: ``NAME: COMMAND ARGS (in
    DIR)`` or ``NAME: URL``, then ``  FILE sha256 HEX`` for each workspace file it names."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return []
    lines: list[str] = []
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            lines.append(f"{name}: (not an object)")
            continue
        if "url" in entry and "command" not in entry:
            lines.append(f"{name}: {entry.get('type', 'http')} {entry.get('url')}")
            continue
        command = entry.get("command")
        args = entry.get("args", [])
        words = [str(w) for w in ([command] + (args if isinstance(args, list) else [args]))]
        cwd = entry.get("cwd")
        where = f"in {workspace / str(cwd)}" if isinstance(cwd, str) and cwd else "in a neutral directory"
        off = " (disabled)" if entry.get("disabled") is True or entry.get("enabled") is False else ""
        lines.append(f"{name}: {shlex.join(words)} ({where}){off}")
        env = entry.get("env")
        if isinstance(env, dict) and env:
            lines.append(f"  env: {' '.join(f'{k}={v}' for k, v in env.items())}")
        bases = [workspace / str(cwd)] if isinstance(cwd, str) and cwd else []
        for path in _named_files(words, [*bases, workspace], workspace):
            rel = path.relative_to(Path(os.path.realpath(workspace))).as_posix()
            lines.append(f"  {rel} sha256 {_file_digest(path)}")
    return lines


def approval_digest(raw: bytes, lines: list[str]) -> str:
    """What an approval names: the file's bytes and what its servers run (``launch_lines``)."""
    return digest(raw + b"\0" + "\n".join(lines).encode("utf-8", "surrogateescape"))


class McpApprovals:
    """Which workspace ``.mcp.json`` files the user approved (or declined), by content hash.

    A JSON file ``{"workspaces": {"/abs/path": {"sha256": ..., "approved": bool, "at": epoch,
    "launch": [lines]}}}`` (``launch``: what the servers ran when decided, to show what changed),
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

    def approved_launch(self, workspace: Path) -> list[str] | None:
        """What the servers ran when the user last approved this workspace's file (None: never)."""
        entry = self._load().get(str(workspace.resolve()))
        if not isinstance(entry, dict) or entry.get("approved") is not True:
            return None
        lines = entry.get("launch")
        return [str(x) for x in lines] if isinstance(lines, list) else []

    def record(self, workspace: Path, sha256: str, approved: bool, launch: list[str] | None = None) -> None:
        """Remember the decision (raises OSError when the file cannot be written)."""
        spaces = self._load()
        entry: dict[str, Any] = {"sha256": sha256, "approved": approved, "at": int(time.time())}
        if launch is not None:
            entry["launch"] = launch
        elif not approved:  # a refusal keeps what was approved before, to show what changed
            old = spaces.get(str(workspace.resolve()))
            if isinstance(old, dict) and isinstance(old.get("launch"), list):
                entry["launch"] = old["launch"]
        spaces[str(workspace.resolve())] = entry
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
    launch: list[str] = field(default_factory=list)  # what its servers run (``launch_lines``)
    previous: list[str] | None = None  # what they ran when last approved (None: never approved)

    def question(self) -> str:
        listed = "\n".join(f"  {line}" for line in self.launch)
        text = (
            f"{self.path} defines MCP servers that OwlTUI would start as programs (under the same "
            f"sandbox as commands) or connect to:\n{listed}\n"
        )
        if self.previous is not None and self.previous != self.launch:
            diff = [
                f"  {line}"
                for line in difflib.unified_diff(self.previous, self.launch, lineterm="", n=0)
                if not line.startswith(("---", "+++", "@@"))
            ]
            text += "Changed since you approved it:\n" + "\n".join(diff) + "\n"
        return text + "Use them in this workspace? (asked again if the file or a file it names changes)"


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
    launch = launch_lines(data, workspace)
    sha = approval_digest(raw, launch)
    decided = approvals.decision(workspace, sha) if approvals is not None else None
    previous = approvals.approved_launch(workspace) if approvals is not None else None
    names = [str(n) for n in servers]
    return ProjectFile(path, sha, names, decided, data=data, launch=launch, previous=previous)


def approve_project(workspace: Path, approvals: McpApprovals, approved: bool = True) -> ProjectFile | None:
    """Record the user's answer for the workspace's current ``.mcp.json`` (the ``/mcp approve`` and
    ``/mcp decline`` commands, or the start-up question). Returns the file as decided."""
    found = project_file(workspace, approvals)
    if found is None or found.error is not None:
        return found
    approvals.record(workspace, found.sha256, approved, found.launch if approved else None)
    found.decision = approved
    return found
