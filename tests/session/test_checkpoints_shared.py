"""One checkpoint store per workspace, shared by its sessions, and a first snapshot that starts from
the user's git index: real files, real git."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from owltui.session.checkpoints.checkpoints import CheckpointStore
from owltui.session.checkpoints.rewind import SHARED_DIR, STORE_NAME, Checkpointing
from owltui.session.paths import workspace_key
from tests.session.test_checkpoints import git, listing, tree_digest, write

OLD = 1_000_000_000  # a file time long before any index is written: the entries are not racily clean


def make_repo(path: Path, home: Path, files: dict[str, str], attributes: str = "") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, home, "init", "-q", "-b", "main")
    write(path, files)
    if attributes:
        (path / ".gitattributes").write_text(attributes)
    for name in files:
        os.utime(path / name, (OLD, OLD))
    git(path, home, "add", "-A")
    git(path, home, "commit", "-q", "-m", "initial")
    return path


def store(ws: Path, directory: Path, home: Path, session: str, **kw: Any) -> CheckpointStore:
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    return CheckpointStore(ws, directory, env=env, session=session, **kw)


def loose_objects(directory: Path) -> set[str]:
    objects = directory / "objects"
    return {
        d.name + f.name for d in objects.iterdir() if len(d.name) == 2 and d.is_dir() for f in d.iterdir()
    }


def refs(directory: Path) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(directory), "for-each-ref", "--format=%(refname)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(out.split())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def test_sessions_share_one_store_each_with_its_own_list(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {f"d{i % 5}/f{i}.txt": f"text {i}\n" for i in range(60)})
    shared = tmp_path / "shared.git"
    one = store(ws, shared, home, "one")
    a1 = one.checkpoint("a1", "first of one")
    write(ws, {"d0/f0.txt": "changed by one\n"})
    one.checkpoint("a2", "second of one")
    before = loose_objects(shared)

    two = store(ws, shared, home, "two")  # a new session in the same workspace
    b1 = two.checkpoint("b1", "first of two")
    added = loose_objects(shared) - before
    assert len(added) == 1  # its commit: no blob or tree of the unchanged files is hashed again
    assert b1.tree == one.latest().tree  # type: ignore[union-attr]
    assert [c.id for c in two.list()] == ["b1"] and [c.id for c in one.list()] == ["a1", "a2"]
    assert refs(shared) == ["refs/sessions/one", "refs/sessions/two"]

    write(ws, {"d1/f1.txt": "changed by two\n"})
    assert two.restore("b1") == ["d1/f1.txt"]  # rewinding two leaves one's list alone
    assert [c.id for c in store(ws, shared, home, "one").list(current=False)] == ["a1", "a2"]
    assert [c.id for c in store(ws, shared, home, "two").list(current=False)] == ["b1"]
    assert one.restore(a1.id) == ["d0/f0.txt"] and (ws / "d0" / "f0.txt").read_text() == "text 0\n"
    (shared / "sessions" / "two.json").unlink()  # the list is rebuilt from two's own ref
    assert [c.id for c in store(ws, shared, home, "two").list(current=False)] == ["b1"]


def test_a_cold_snapshot_in_a_repository_hashes_only_what_changed(tmp_path: Path, home: Path) -> None:
    ws = make_repo(tmp_path / "ws", home, {f"src/m{i}.py": f"value = {i}\n" for i in range(300)})
    dotgit = tree_digest(ws / ".git")
    write(ws, {"src/m1.py": "value = 'changed'\n", "new.txt": "untracked\n"})
    (ws / "src" / "m2.py").unlink()
    shared = tmp_path / "shared.git"
    s = store(ws, shared, home, "one")
    cp = s.checkpoint("t1", "first ever")
    # two blobs, the two trees and the commit: the 298 unchanged files are not hashed again
    assert len(loose_objects(shared)) == 5
    assert tree_digest(ws / ".git") == dotgit  # the user's repository is only read
    expected = listing(ws)

    write(ws, {"src/m3.py": "edited\n", "src/m1.py": "edited again\n", "other.txt": "x\n"})
    (ws / "src" / "m4.py").unlink()
    assert s.restore(cp.id) == ["other.txt", "src/m1.py", "src/m3.py", "src/m4.py"]
    assert listing(ws) == expected  # borrowed blobs are read from the user's objects

    assert s.adopt_borrowed()  # the borrowed blobs are copied into the store
    assert tree_digest(ws / ".git") == dotgit
    (ws / ".git" / "objects").rename(tmp_path / "pruned")  # the user's gc may remove them
    write(ws, {"src/m5.py": "edited\n"})
    assert s.restore(cp.id) == ["src/m5.py"] and listing(ws) == expected
    s.checkpoint("t2", "after the copy")


def test_seeding_is_refused_where_git_would_transform_bytes(tmp_path: Path, home: Path) -> None:
    files = {f"f{i}.txt": f"line {i}\r\n" for i in range(20)}
    ws = make_repo(tmp_path / "ws", home, files, attributes="* text=auto\n")
    shared = tmp_path / "shared.git"
    s = store(ws, shared, home, "one")
    cp = s.checkpoint("t1", "first")
    assert len(loose_objects(shared)) >= 20  # hashed from disk: the user's blobs hold LF endings
    write(ws, {"f0.txt": "changed\n"})
    assert s.restore(cp.id) == ["f0.txt"] and (ws / "f0.txt").read_bytes() == b"line 0\r\n"


def test_a_seeded_snapshot_still_leaves_out_large_files_and_nested_repositories(
    tmp_path: Path, home: Path
) -> None:
    ws = make_repo(tmp_path / "ws", home, {"small.txt": "s\n", "big.bin": "x" * 500})
    s = store(ws, tmp_path / "shared.git", home, "one", max_file_bytes=100)
    cp = s.checkpoint("t1", "first")
    assert [(k.path, k.reason) for k in cp.skipped] == [("big.bin", "too large")]
    out = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "shared.git"), "ls-tree", "-r", "--name-only", cp.tree],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["small.txt"]


def test_concurrent_snapshots_of_two_sessions_stay_consistent(tmp_path: Path, home: Path) -> None:
    ws = make_repo(tmp_path / "ws", home, {f"f{i}.txt": f"{i}\n" for i in range(100)})
    shared = tmp_path / "shared.git"
    stores = [store(ws, shared, home, name) for name in ("one", "two")]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(s: CheckpointStore, tag: str) -> None:
        try:
            start.wait()
            for i in range(8):
                write(ws, {f"{tag}-{i}.txt": f"{tag} {i}\n", f"f{i}.txt": f"{tag} edit {i}\n"})
                s.checkpoint(f"{tag}{i}", f"turn {i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(s, tag)) for s, tag in zip(stores, ("a", "b"), strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    fresh = store(ws, shared, home, "three").checkpoint("c", "now")
    for s in stores:
        assert len(s.list(current=False)) == 8
        assert s.checkpoint("final", "now").tree == fresh.tree  # the shared index matches the disk
    assert stores[0].adopt_borrowed()  # every blob of both sessions' checkpoints is in the store
    fsck = subprocess.run(["git", "--git-dir", str(shared), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


class _Agent:
    running = False


def test_a_session_uses_the_shared_store_unless_it_has_its_own(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    own = tmp_path / "sessions" / "20250101_old" / STORE_NAME
    (own / "objects").mkdir(parents=True)
    old = Checkpointing(_Agent(), ws, own, max_file_bytes=1000, env=env)  # type: ignore[arg-type]
    assert old.directory == own and old.session is None  # an older session keeps its own store
    new_dir = tmp_path / "sessions" / "20250102_new" / STORE_NAME
    new = Checkpointing(_Agent(), ws, new_dir, max_file_bytes=1000, env=env)  # type: ignore[arg-type]
    shared = tmp_path / "data" / "owltui" / SHARED_DIR / f"{workspace_key(ws)}.git"
    assert new.directory == shared and new.session == "20250102_new"
    new.reset(tmp_path / "sessions" / "20250103_next" / STORE_NAME)  # /new: the same store
    assert new.directory == shared and new.session == "20250103_next"
