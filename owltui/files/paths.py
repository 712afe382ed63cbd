"""Paths as every layer needs them: a user-given path resolved against the workspace, and whether a
path (symlinks resolved) is inside a root."""

from __future__ import annotations

import os
from pathlib import Path

from owltui.text.codec import name_candidates


class PathError(ValueError):
    """A path that cannot name a file (empty, or with a NUL character)."""


def resolve_path(workspace: Path, path: str) -> Path:
    """An absolute, normalised path; relative paths are taken from the workspace. A name shown with
    visible forms (``bad_\\xff.txt`` for a name that is not UTF-8) finds the file it stands for."""
    if not path.strip():
        raise PathError("path is empty")
    if "\0" in path:
        raise PathError("path contains a NUL character")
    as_given, *decoded = (_absolute(workspace, c) for c in name_candidates(path))
    if decoded and not os.path.lexists(as_given) and os.path.lexists(decoded[0]):
        return decoded[0]  # the visible form of a name that exists (and the name as given does not)
    return as_given


def _absolute(workspace: Path, path: str) -> Path:
    p = Path(os.path.expanduser(path))
    return Path(os.path.normpath(p if p.is_absolute() else workspace / p))


def is_inside(workspace: Path, path: Path) -> bool:
    """True when ``path`` (symlinks resolved, even for a file not yet created) is in the workspace."""
    root = Path(os.path.realpath(workspace))
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents
