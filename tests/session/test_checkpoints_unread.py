"""A workspace with more new files than the store copies: checkpoints stay on, those files are
recorded by hash only (no bytes in the store), later snapshots cost what changed, and a rewind puts
back everything whose bytes were recorded and names the files it cannot put back. Real files, real
git; the limit is lowered to 10 files so the workspace stays small. (Sizes: bench/checkpoint_cliff.py.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from owltui.session.checkpoints import prune
from owltui.session.checkpoints.checkpoints import CheckpointStore
from owltui.session.checkpoints.git import BORROWED_FILE
from owltui.session.checkpoints.unread import UNREAD_FILE
from tests.session.test_checkpoints import git, make_repo, write

FILES = {f"d{i % 3}/f{i}.txt": f"original {i}\n" for i in range(12)}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(home)}


def blobs(store: Path) -> set[str]:
    """The blob ids the store holds (loose or packed)."""
    out = subprocess.run(
        ["git", "--git-dir", str(store), "cat-file", "--batch-all-objects", "--batch-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split()[0] for line in out.splitlines() if line.split()[1] == "blob"}


def blob_of(text: str) -> str:
    return subprocess.run(
        ["git", "hash-object", "--stdin"], input=text, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_too_many_new_files_are_hashed_not_copied_and_rewind_names_what_it_cannot_restore(
    tmp_path: Path, env: dict[str, str]
) -> None:
    ws = tmp_path / "ws"
    write(ws, FILES)
    directory = tmp_path / "store.git"
    store = CheckpointStore(ws, directory, env=env, max_files=10)
    first = store.checkpoint("t1", "first turn")
    assert len(store.notices) == 1 and "12 new files" in store.notices[0] and "hash only" in store.notices[0]
    assert (directory / UNREAD_FILE).exists()
    assert blobs(directory) == set()  # nothing of the workspace was copied
    listed = subprocess.run(
        ["git", "--git-dir", str(directory), "ls-tree", "-r", "--name-only", first.tree],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(listed) == sorted(FILES)  # ... but every file is named in the checkpoint

    (ws / "d0/f0.txt").write_text("changed by the turn\n")
    (ws / "d1/f1.txt").unlink()
    (ws / "new.txt").write_text("created by the turn\n")
    second = store.checkpoint("t2", "second turn")
    assert store.notices == [store.notices[0]]  # said once: the second snapshot copies what changed
    assert blobs(directory) == {blob_of("changed by the turn\n"), blob_of("created by the turn\n")}
    assert second.files is None and store.list()[0].files == 3

    (ws / "d0/f0.txt").write_text("changed again\n")
    assert store.restore_report(second.id) == (["d0/f0.txt"], [])  # recorded bytes come back
    assert (ws / "d0/f0.txt").read_text() == "changed by the turn\n"

    done, lost = store.restore_report(first.id)
    assert done == ["new.txt"]  # what the turn created is deleted: that needs no bytes
    assert lost == ["d0/f0.txt", "d1/f1.txt"]  # never copied: named, not written
    assert not (ws / "new.txt").exists()
    assert (ws / "d0/f0.txt").read_text() == "changed by the turn\n"
    assert not (ws / "d1/f1.txt").exists()
    for name, text in FILES.items():  # every other file untouched
        if name not in lost:
            assert (ws / name).read_text() == text


def test_the_limit_is_what_decides(tmp_path: Path, env: dict[str, str]) -> None:
    """The same workspace under the default limit is copied whole (the check can fail)."""
    ws = tmp_path / "ws"
    write(ws, FILES)
    store = CheckpointStore(ws, tmp_path / "store.git", env=env)
    store.checkpoint("t1", "x")
    assert store.notices == [] and not (tmp_path / "store.git" / UNREAD_FILE).exists()
    assert len(blobs(tmp_path / "store.git")) == len(FILES)


def test_in_a_repository_the_borrowing_ends_and_a_prune_keeps_the_store_usable(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Tracked files start from the user's index (borrowed, then copied); the untracked bulk is
    hashed only. Copying the borrowed blobs and pruning both finish although the store lacks the
    unread ones, and a rewind after the prune still works."""
    home = Path(env["HOME"])
    repo = make_repo(tmp_path / "repo", home, {"src/a.py": "a = 1\n", "src/b.py": "b = 2\n"})
    write(repo, {f"data/x{i}.csv": f"{i}\n" for i in range(12)})
    directory = tmp_path / "data" / "checkpoints" / "key.git"
    sessions = tmp_path / "data" / "sessions" / "key"
    sessions.mkdir(parents=True)
    (sessions / "s1.jsonl").write_text("{}\n")
    store = CheckpointStore(repo, directory, env=env, session="s1", max_files=10)
    first = store.checkpoint("t1", "first")
    assert store.notices and (directory / UNREAD_FILE).exists()
    assert store.adopt_borrowed() and not (directory / BORROWED_FILE).exists()
    assert blobs(directory) == {blob_of("a = 1\n"), blob_of("b = 2\n")}

    (repo / "src/a.py").write_text("a = 99\n")
    (repo / "data/x0.csv").write_text("edited\n")
    report = prune.prune_store(directory, sessions, budget=1 << 40, env=env, keep="s1")
    assert report.error is None, report.error
    assert store.restore_report(first.id) == (["src/a.py"], ["data/x0.csv"])
    assert (repo / "src/a.py").read_text() == "a = 1\n"
    assert git(repo, home, "status", "--porcelain") == "?? data/\n"


@pytest.mark.anyio
async def test_a_session_says_it_once_and_undo_names_what_it_cannot_put_back(tmp_path: Path) -> None:
    from owltui.session.commands.layer import Commands
    from owltui.testing.scripted import Call, Step
    from tests.session.test_command_layer import Front
    from tests.session.test_rewind_runtime import _build, _run

    write(tmp_path / "ws", FILES)
    turn = [
        Step(calls=[Call("bash", {"command": "echo shell > d0/f0.txt && echo made > made.txt"})]),
        Step(text="done"),
    ]
    warnings: list[str] = []
    rt, _ = _build(
        tmp_path, [*turn, Step(text="ok")], config="checkpoint_max_files = 10\n", warn=warnings.append
    )
    async with rt:
        await _run(rt, "change things")
        await _run(rt, "say ok")
        assert rt.checkpoints is not None and rt.checkpoints.enabled
        cps = await rt.checkpoints.checkpoints()
        reply = Commands(rt, Front()).slash(f"/rewind {cps[0].id} files")
        assert reply is not None and reply.then is not None
        done = await reply.then
    said = [w for w in warnings if "hash only" in w]
    assert len(said) == 1, warnings
    assert done.ok and done.data["restored"] == ["made.txt"] and done.data["unrestored"] == ["d0/f0.txt"]
    assert "1 file not put back, recorded by hash only" in done.text and "d0/f0.txt" in done.text
    assert not (tmp_path / "ws" / "made.txt").exists()
