"""Recognising, in a failed command's output, a write the sandbox refused, and saying so.

``explain_blocked`` reads the error lines (``Read-only file system``, ``Permission denied``...),
finds the paths they name, and for each asks the policy whether the sandbox is why (outside the
writable roots, protected configuration, read-only mode, network off): the sentence tells the
model what happened and what the user can change (``sandbox_writable``, ``--sandbox off``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Protocol

from owltui.policy.sandbox.landlock import DEVICES


def inside(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or lies below it (no symlinks resolved)."""
    return path == root or root in path.parents


class Confinement(Protocol):
    """What ``explain_blocked`` reads of the policy (``sandbox.SandboxPolicy``)."""

    mode: str
    workspace: Path

    @property
    def protects_config(self) -> bool: ...

    @property
    def network_restricted(self) -> bool: ...

    def protected_paths(self) -> list[Path]: ...

    def writable_roots(self) -> list[Path]: ...


_DENIED = re.compile(
    r"read-only file system|permission denied|operation not permitted|"
    r"device or resource busy|EACCES|EROFS|EPERM|EBUSY|errno 13|errno 30|errno 1\b",
    re.IGNORECASE,
)
_NET = re.compile(r"connect|connection|network|socket", re.IGNORECASE)
_QUOTED = re.compile(r"['\"‘’`“]([^'\"‘’`“”\n]{1,4096})['\"‘’`”]")
_BARE = re.compile(
    r"(?:^|[\s:=(])((?:~|\.{1,2})?/[^\s:'\"`,;()]*|\.{1,2}(?=[\s:'\"]|$)|"
    r"[A-Za-z0-9_.@+-]+/[^\s:'\"`,;()]*|\.[A-Za-z0-9_][^\s:'\"`,;()/]*)"
)


def _candidates(line: str) -> list[str]:
    found = [m.group(1) for m in _QUOTED.finditer(line)]
    found += [m.group(1) for m in _BARE.finditer(line)]
    return [f.strip() for f in found if f.strip()]


def _writable_without_sandbox(path: Path) -> bool:
    """Could this process write ``path`` (or create it) if there were no sandbox? A refusal the
    ordinary permissions would give too is not the sandbox's doing."""
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return os.access(p, os.W_OK)


def _verdict(policy: Confinement, path: Path) -> str | None:
    """Why the policy refuses writes to ``path`` (None: it allows them, or the sandbox is not why)."""
    if policy.protects_config and any(inside(path, p) for p in policy.protected_paths()):
        return "protected"
    if path in (Path(d) for d in DEVICES):
        return None
    if policy.mode != "read-only" and any(inside(path, root) for root in policy.writable_roots()):
        return None
    if not _writable_without_sandbox(path):
        return None
    return "read-only" if policy.mode == "read-only" else "outside"


def _resolve(text: str, cwd: Path) -> Path:
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = cwd / p
    # realpath of the parent: the file itself may not exist (it could not be created)
    return Path(os.path.realpath(p.parent)) / p.name if p.name else Path(os.path.realpath(p))


def explain_blocked(policy: Confinement, output: str, cwd: Path) -> str | None:
    """The "blocked by the sandbox" sentence for ``output``, or None when no refused write shows."""
    outside: list[Path] = []
    protected: list[Path] = []
    readonly: list[Path] = []
    network = False
    for line in output.splitlines()[-400:] if output.count("\n") > 400 else output.splitlines():
        if not _DENIED.search(line):
            continue
        if policy.network_restricted and _NET.search(line) and "permission denied" in line.lower():
            network = True
        for cand in _candidates(line):
            try:
                path = _resolve(cand, cwd)
            except (OSError, ValueError):
                continue
            why = _verdict(policy, path)
            bucket = {"outside": outside, "protected": protected, "read-only": readonly}.get(why or "")
            if bucket is not None and path not in bucket:
                bucket.append(path)
    parts: list[str] = []
    if protected:
        names = ", ".join(_show(p, policy.workspace) for p in protected[:3])
        parts.append(
            f"blocked by the sandbox: {names} is protected configuration (read-only for commands, "
            "also as root); ask the user to make this change"
        )
    if readonly:
        names = ", ".join(_show(p, policy.workspace) for p in readonly[:3])
        parts.append(
            f'blocked by the sandbox: it is read-only (sandbox = "read-only"), so {names} cannot '
            "be written; the user can run with --sandbox workspace-write or --sandbox off"
        )
    if outside:
        dirs = sorted({str(_suggest(p)) for p in outside[:3]})
        listed = ", ".join(f'"{d}"' for d in dirs)
        parts.append(
            f"blocked by the sandbox: writes outside the workspace are not allowed "
            f"({', '.join(str(p) for p in outside[:3])}); the user can allow this path with "
            f"sandbox_writable = [{listed}] in the config file, or run OwlTUI with --sandbox off"
        )
    if network:
        parts.append("blocked by the sandbox: network connections are not allowed (sandbox_network = false)")
    return "\n".join(parts) if parts else None


def _show(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _suggest(path: Path) -> Path:
    """The directory to suggest for ``sandbox_writable``: the nearest existing directory."""
    p = path if path.is_dir() else path.parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return p
