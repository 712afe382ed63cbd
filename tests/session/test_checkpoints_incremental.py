"""The incremental snapshot (only the paths ``ls-files`` reports go through ``update-index``) records
exactly what a from-scratch snapshot of the same workspace records, whatever a turn did: files
edited, created, deleted, made executable, replaced by directories or symbolic links and back. A
property test: random turns, and after each the incremental store's tree is the tree a fresh store
takes of the same files, and restoring an earlier checkpoint gives back its files (unless a directory now stands where it had a
file: that is left alone)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from owltui.session.checkpoints.checkpoints import CheckpointStore
from tests.session.test_checkpoints import listing, make_repo

NAMES = ["a", "b", "d", "d/x", "d/y", "d/e/z"]
OPS = st.tuples(
    st.sampled_from(["write", "remove", "chmod", "link", "linkdir"]),
    st.sampled_from(NAMES),
    st.integers(0, 3),
)


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _make_parent(ws: Path, path: Path) -> None:
    """Real directories down to ``path``'s parent (a file or link standing in the way goes)."""
    current = ws
    for part in path.relative_to(ws).parts[:-1]:
        current = current / part
        if current.is_symlink() or current.is_file():
            current.unlink()
        current.mkdir(exist_ok=True)


def apply(ws: Path, outside: Path, op: tuple[str, str, int]) -> None:
    kind, name, n = op
    path = ws / name
    _make_parent(ws, path)
    if kind == "remove":
        _clear(path)
        return
    _clear(path)
    if kind == "write":
        path.write_text(f"{name} version {n}\n" * (n + 1))
    elif kind == "chmod":
        path.write_text(f"#!/bin/sh\necho {n}\n")
        path.chmod(0o755)
    elif kind == "link":
        os.symlink(f"target-{n}", path)
    else:  # a directory replaced by a link out of the workspace
        os.symlink(outside, path)


def fresh_tree(ws: Path, where: Path, env: dict[str, str]) -> str:
    store = CheckpointStore(ws, where, env=env)
    return store.checkpoint("fresh", "from scratch").tree


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    turns=st.lists(st.lists(OPS, min_size=1, max_size=4), min_size=1, max_size=4),
    repo=st.sampled_from(["none", "root", "inside"]),
)
def test_incremental_snapshots_equal_fresh_ones(
    tmp_path_factory: pytest.TempPathFactory, turns: list[list[tuple[str, str, int]]], repo: str
) -> None:
    """``repo``: a plain directory, a git repository, a directory inside one (the store's paths
    then carry the workspace's prefix in the repository)."""
    base = tmp_path_factory.mktemp("inc")
    home = base / "home"
    home.mkdir()
    outside = base / "outside"
    outside.mkdir()
    (outside / "x").write_text("outside\n")
    ws = base / "ws" if repo != "inside" else base / "repo" / "sub" / "ws"
    start = {"a": "a\n", "d/x": "x\n", "d/y": "y\n", "d/e/z": "z\n"}
    if repo == "root":
        make_repo(ws, home, start)
    elif repo == "inside":
        make_repo(base / "repo", home, {"top.txt": "top\n", **{f"sub/ws/{k}": v for k, v in start.items()}})
    else:
        for name, text in start.items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(text)
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    store = CheckpointStore(ws, base / "data" / "ws.git", env=env, session="s")
    seen: list[tuple[str, dict[str, bytes]]] = []
    for i, turn in enumerate(turns):
        files = listing(ws)
        cp = store.checkpoint(f"t{i}", f"turn {i}")
        assert cp.tree == fresh_tree(ws, base / f"fresh{i}.git", env), (i, turn)
        seen.append((cp.id, files))
        for op in turn:
            apply(ws, outside, op)
    for cp_id, files in reversed(seen):
        # a directory standing where the checkpoint had a file is left alone (by design)
        blocked = any((ws / name).is_dir() and not (ws / name).is_symlink() for name in files)
        store.restore(cp_id)
        if not blocked:
            assert listing(ws) == files
    assert (outside / "x").read_text() == "outside\n"
