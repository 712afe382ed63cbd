"""Pruning the checkpoint stores: a deleted session's checkpoints go (and the objects only they
held), a store over its budget drops its least recently used sessions' checkpoints (leaving a note
their rewind shows) but never the running one's nor a recently used one's, a store in use by another
process is left alone, old per-session stores of deleted sessions are removed, and ``owltui --gc``
does it all at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from owltui.session.checkpoints import prune
from owltui.session.checkpoints.checkpoints import CheckpointStore
from owltui.session.checkpoints.shared import store_lock
from tests.session.test_checkpoints import listing

MB = 1024 * 1024


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(home)}


def age(path: Path, seconds: float) -> None:
    when = time.time() - seconds
    os.utime(path, (when, when))


def session(
    ws: Path, store: Path, sessions: Path, name: str, env: dict[str, str], blob: int
) -> CheckpointStore:
    """A session with a session file and two checkpoints; between them a file of ``blob`` random
    bytes existed (only this session's checkpoints hold it)."""
    (sessions / f"{name}.jsonl").write_text("{}\n")
    cps = CheckpointStore(ws, store, env=env, session=name)
    (ws / f"{name}.bin").write_bytes(os.urandom(blob))
    cps.checkpoint(f"{name}-1", "with the blob")
    (ws / f"{name}.bin").unlink()
    cps.checkpoint(f"{name}-2", "without it")
    return cps


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    data = tmp_path / "data"
    sessions = data / "sessions" / "ws-key"
    sessions.mkdir(parents=True)
    return ws, data / "checkpoints" / "ws-key.git", sessions


def refs(store: Path) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(store), "for-each-ref", "--format=%(refname)"],
        capture_output=True,
        text=True,
    )
    return sorted(out.stdout.split())


def test_a_deleted_sessions_checkpoints_and_their_objects_go(
    layout: tuple[Path, Path, Path], env: dict[str, str]
) -> None:
    ws, store, sessions = layout
    session(ws, store, sessions, "old", env, 3 * MB)
    kept = session(ws, store, sessions, "kept", env, 1000)
    (sessions / "old.jsonl").unlink()
    age(store / "sessions" / "old.json", 2 * prune.QUIET_S)
    report = prune.prune_store(store, sessions, budget=10_000 * MB, env=env, keep="kept")
    assert report.unreachable == ["old"] and not report.over_budget
    assert refs(store) == ["refs/sessions/kept"]
    assert not (store / "sessions" / "old.json").exists()
    assert report.before - report.after > 2 * MB  # the blob only the deleted session held
    kept.restore(kept.list()[0].id)
    assert (ws / "kept.bin").stat().st_size == 1000


def test_a_recent_session_without_its_file_yet_is_kept(
    layout: tuple[Path, Path, Path], env: dict[str, str]
) -> None:
    ws, store, sessions = layout
    session(ws, store, sessions, "new", env, 1000)
    (sessions / "new.jsonl").unlink()
    report = prune.prune_store(store, sessions, budget=10_000 * MB, env=env, keep=None)
    assert not report.unreachable and refs(store) == ["refs/sessions/new"]


def test_over_budget_the_least_recently_used_sessions_go_first(
    layout: tuple[Path, Path, Path], env: dict[str, str]
) -> None:
    ws, store, sessions = layout
    for name, used in (("oldest", 5), ("older", 4), ("recent", 0)):
        session(ws, store, sessions, name, env, 2 * MB)
        if used:
            age(store / "sessions" / f"{name}.json", used * prune.QUIET_S)
    running = session(ws, store, sessions, "running", env, 2 * MB)
    age(store / "sessions" / "running.json", 9 * prune.QUIET_S)  # the least recently used, but running
    size = prune.disk_usage(store)
    report = prune.prune_store(store, sessions, budget=size - 3 * MB, env=env, keep="running")
    assert report.over_budget == ["oldest", "older"] and not report.still_over
    assert refs(store) == ["refs/sessions/recent", "refs/sessions/running"]
    note = prune.pruned_note(store, "oldest")
    assert note is not None and "over its budget" in note and "checkpoint_budget_mb" in note
    assert prune.pruned_note(store, "running") is None
    before = listing(ws)
    running.restore(running.list()[0].id)
    assert (ws / "running.bin").stat().st_size == 2 * MB
    running.restore(running.list()[-1].id)
    assert listing(ws) == before


def test_a_store_in_use_is_left_alone(layout: tuple[Path, Path, Path], env: dict[str, str]) -> None:
    ws, store, sessions = layout
    session(ws, store, sessions, "old", env, 1000)
    (sessions / "old.jsonl").unlink()
    age(store / "sessions" / "old.json", 2 * prune.QUIET_S)
    with store_lock(store):
        report = prune.prune_store(store, sessions, budget=1, env=env)
    assert report.busy and refs(store) == ["refs/sessions/old"]


def test_old_per_session_stores_of_deleted_sessions_are_removed(
    layout: tuple[Path, Path, Path], env: dict[str, str]
) -> None:
    ws, _store, sessions = layout
    for name in ("gone", "alive"):
        own = sessions / name / "checkpoints.git"
        CheckpointStore(ws, own, env=env).checkpoint("t1", "x")
        for path in own.glob("*"):
            age(path, 2 * prune.QUIET_S)
    (sessions / "alive.jsonl").write_text("{}\n")
    reports = prune.prune_old_stores(sessions)
    assert [r.removed for r in reports] == [True]
    assert not (sessions / "gone" / "checkpoints.git").exists()
    assert (sessions / "alive" / "checkpoints.git" / "objects").is_dir()


def test_owltui_gc_prunes_every_store(
    layout: tuple[Path, Path, Path], env: dict[str, str], tmp_path: Path
) -> None:
    ws, store, sessions = layout
    session(ws, store, sessions, "old", env, 2 * MB)
    session(ws, store, sessions, "kept", env, 1000)
    (sessions / "old.jsonl").unlink()
    age(store / "sessions" / "old.json", 2 * prune.QUIET_S)
    orphan = store.parent / "nobody-left.git"  # a workspace with no session file any more
    CheckpointStore(ws, orphan, env=env, session="x").checkpoint("t1", "x")
    for path in orphan.glob("*"):
        age(path, 2 * prune.QUIET_S)
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    os.rename(tmp_path / "data", xdg / "owltui")
    run_env = {**env, "XDG_DATA_HOME": str(xdg), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    out = subprocess.run(
        [str(Path(sys.executable).parent / "owltui"), "--gc"],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any("nobody-left.git: removed" in line for line in lines), lines
    assert any(
        "ws-key.git" in line and "1 deleted sessions' checkpoints removed" in line for line in lines
    ), lines
    assert lines[-1].startswith("2 checkpoint stores looked at"), lines
    assert not (xdg / "owltui" / "checkpoints" / "nobody-left.git").exists()
    assert refs(xdg / "owltui" / "checkpoints" / "ws-key.git") == ["refs/sessions/kept"]


@pytest.mark.anyio
async def test_a_session_prunes_its_workspaces_store_in_a_process_of_its_own(tmp_path: Path) -> None:
    """A deleted session's checkpoints in the workspace's store: the next session, once warmed,
    starts the pass (the ref goes), and a session whose checkpoints a budget pass removed says so
    in /rewind."""
    import anyio

    from owltui.session.checkpoints.rewind import SHARED_DIR
    from owltui.session.commands.layer import Commands
    from owltui.session.paths import sessions_dir, workspace_key
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options
    from owltui.testing.scripted import ScriptedModel, Step
    from tests.session.test_command_layer import Front
    from tests.session.test_rewind_runtime import _env

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    env = _env(tmp_path)
    store = tmp_path / "data" / "owltui" / SHARED_DIR / f"{workspace_key(ws)}.git"
    sessions = sessions_dir(ws, env)
    sessions.mkdir(parents=True)
    session(ws, store, sessions, "gone", {"PATH": env["PATH"], "HOME": env["HOME"]}, 1000)
    (sessions / "gone.jsonl").unlink()
    age(store / "sessions" / "gone.json", 2 * prune.QUIET_S)
    rt = build_runtime(Options(workspace=ws, yes=True), model=ScriptedModel([Step(text="hi")]), env=env)
    async with rt:
        assert rt.agent.prompt("hello")
        await rt.wait_settled()
        cps = rt.checkpoints
        assert cps is not None and cps.session is not None
        await anyio.to_thread.run_sync(cps.prune_checked.wait, 30)
        assert cps.pruning is not None
        assert await anyio.to_thread.run_sync(lambda: cps.pruning.wait(30) if cps.pruning else None) == 0
        name = cps.session
        assert refs(store) == [f"refs/sessions/{name}"] and prune.due(store) is False
    age(store / "sessions" / f"{name}.json", 2 * prune.QUIET_S)  # a session not used for a while
    report = prune.prune_store(store, sessions, budget=1, env={"PATH": env["PATH"]})
    assert report.over_budget == [name] and report.still_over  # the index's blobs stay
    again = build_runtime(
        Options(workspace=ws, yes=True, continue_session=True), model=ScriptedModel([]), env=env
    )
    async with again:
        reply = Commands(again, Front()).slash("/rewind")
        assert reply is not None and reply.then is not None
        shown = await reply.then
        assert "checkpoints of this session were removed" in shown.text
