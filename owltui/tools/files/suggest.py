""" "Did you mean" for a path that does not exist: case-insensitive and path-aware.

Candidates are the workspace's files as ripgrep lists them (ignored files left out) and the entries
of the nearest existing parent directory. Order: the same path in another case; the same name
elsewhere in the tree (closest directory first); close names next to the path; close names elsewhere.
The missing path itself (a broken symlink) is never suggested. difflib is enough here: a few
thousand names, one query, and no dependency to add.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import threading
import time
from pathlib import Path

from owltui.agent.tool import ToolError
from owltui.text.codec import show_name
from owltui.tools.search.rg import RgError, list_files

LIST_SECONDS = 3.0


def _tree_files(workspace: Path, stop: threading.Event) -> list[str]:
    try:
        return list_files("./", workspace, stop, deadline=time.monotonic() + LIST_SECONDS)
    except (RgError, OSError, ToolError):  # no rg: siblings only
        return []


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def suggestions(path: Path, workspace: Path, stop: threading.Event, limit: int = 5) -> list[str]:
    try:
        want = path.relative_to(workspace).as_posix()
    except ValueError:
        want = str(path)
    want_l = want.lower()
    name_l = path.name.lower()
    want_dir = posixpath.dirname(want_l)
    out: list[str] = []

    def add(rel: str) -> None:
        if rel != want and rel not in out and len(out) < limit:
            out.append(rel)

    started = time.monotonic()
    files = _tree_files(workspace, stop) if want != str(path) else []
    for rel in sorted(f for f in files if f.lower() == want_l):
        add(rel)
    same = [f for f in files if posixpath.basename(f).lower() == name_l]
    same.sort(key=lambda f: (-_ratio(posixpath.dirname(f.lower()), want_dir), len(f), f))
    for rel in same:
        add(rel)

    parent = path.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    try:
        siblings = {e.name.lower(): e.name for e in os.scandir(parent)}
    except OSError:
        siblings = {}
    for low in difflib.get_close_matches(name_l, list(siblings), limit, 0.6):
        sib = parent / siblings[low]
        try:
            add(sib.relative_to(workspace).as_posix())
        except ValueError:
            add(str(sib))

    if len(out) < limit and files and time.monotonic() - started < LIST_SECONDS:
        by_name: dict[str, list[str]] = {}
        for f in files:
            by_name.setdefault(posixpath.basename(f).lower(), []).append(f)
        close = difflib.get_close_matches(name_l, list(by_name), 10, 0.75)
        ranked = [f for low in close for f in by_name[low]]
        ranked.sort(key=lambda f: -_ratio(f.lower(), want_l))
        for rel in ranked:
            add(rel)
    return [show_name(rel) for rel in out]
