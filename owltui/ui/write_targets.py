"""Where the writes a tool call names really land, for its approval: a path that is a symbolic link,
or goes through one (``docs/notes.md`` -> ``/home/u/.bashrc``), is shown with where it leads.

``write_targets`` covers the ``write`` and ``edit`` tools' ``path``, every path an ``apply_patch``
names (``patch_files`` words them for the approval), and the output redirections and
``tee`` files of a ``bash`` command that are literal (no expansion, no ``cd`` before them: the
shell would decide those, so nothing is claimed). Paths resolve against the workspace; a device
(``/dev/null``, ``/dev/stdout``) is never "redirected".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from owltui.files.paths import PathError, resolve_path
from owltui.policy.permissions.patch import patch_ops, patch_paths

_PSEUDO = (Path("/dev"), Path("/proc"), Path("/sys"))


@dataclass(frozen=True)
class LinkedWrite:
    """A write named ``shown`` (as the call gives it) that lands in ``lands`` (symlinks followed;
    relative to the workspace when it stays inside it), ``inside``: whether it does."""

    shown: str
    lands: str
    inside: bool

    @property
    def arrow(self) -> str:
        """``docs/notes.md → /home/u/.bashrc``"""
        return f"{self.shown} → {self.lands}"

    def warning(self, show: Callable[[str], str]) -> str:
        """The approval's warning line; ``show`` makes hidden characters visible."""
        where = "inside the workspace" if self.inside else "OUTSIDE the workspace"
        return (
            f"⚠ {show(self.shown)} is a symbolic link or goes through one: the write lands in "
            f"{show(self.lands)} ({where})"
        )


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def link_target(path: str, workspace: Path | None) -> LinkedWrite | None:
    """Where a write to ``path`` lands when a symbolic link on the way redirects it; None when it
    lands where it says (or cannot be known: a relative path without a workspace, a bad name)."""
    if workspace is None and not os.path.isabs(os.path.expanduser(path)):
        return None
    base = workspace if workspace is not None else Path("/")
    try:
        lexical = resolve_path(base, path)
    except (PathError, ValueError):
        return None
    if any(_under(lexical, root) for root in _PSEUDO):
        return None
    try:
        real = Path(os.path.realpath(lexical))
    except (OSError, ValueError):
        return None
    if workspace is None:
        return LinkedWrite(path, str(real), False) if real != lexical else None
    real_ws = Path(os.path.realpath(workspace))
    lexical_rel = _relative(lexical, workspace) or _relative(lexical, real_ws)
    real_rel = _relative(real, real_ws)
    if real == lexical or (lexical_rel is not None and lexical_rel == real_rel):
        return None  # no link on the way (a workspace reached through a link changes nothing)
    if real_rel is not None:
        return LinkedWrite(path, real_rel, True)
    return LinkedWrite(path, str(real), False)


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _bash_targets(command: str) -> list[str]:
    """The literal files ``command`` writes by redirection or ``tee`` (none after a ``cd``)."""
    from owltui.policy.shell.parse import analyze

    try:
        found = analyze(command)
    except Exception:  # an approval must be drawn whatever the parser thinks
        return []
    if found.cwds:
        return []  # relative targets after a cd are the shell's to resolve
    targets = [w.value for w in found.writes if w.static]
    for cmd in found.commands:
        if cmd.program == "tee":
            targets += [w.value for w in cmd.words[1:] if w.static and not w.value.startswith("-")]
    return list(dict.fromkeys(targets))


def write_targets(name: str, arguments: dict[str, Any], workspace: Path | None) -> list[LinkedWrite]:
    """The writes of ``name(arguments)`` that a symbolic link sends somewhere else."""
    if name in ("write", "edit"):
        path = arguments.get("path")
        paths = [path] if isinstance(path, str) else []
    elif name == "bash" and isinstance(arguments.get("command"), str):
        paths = _bash_targets(arguments["command"])
    elif name == "apply_patch" and isinstance(arguments.get("input"), str):
        paths = patch_paths(arguments["input"])
    else:
        return []
    out = [link_target(p, workspace) for p in paths]
    return [t for t in out if t is not None]


def patch_files(text: str) -> str:
    """What an ``apply_patch`` touches, for its approval: ``add a.py, update b.py -> c.py, delete d``."""
    out: list[str] = []
    for op, path in patch_ops(text):
        if op == "move" and out:
            out[-1] += f" -> {path}"
        else:
            out.append(f"{op} {path}")
    return ", ".join(out) or "no file named"
