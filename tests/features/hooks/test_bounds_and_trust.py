"""A hook that hangs is killed at its timeout, an abort kills a running hook, and project hooks
(a repository's ``.claude/settings.json``) run nothing until approved, and ask again once changed."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from owltui.agent.pause import GATE
from owltui.features.hooks.runner import run_command
from owltui.session.commands.host import LineFront
from owltui.session.commands.layer import Commands
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.features.hooks.conftest import World, run_prompt

pytestmark = pytest.mark.anyio


def _pidfds(pids: list[int]) -> list[int]:
    """A pidfd for each running process: readable once it has exited (it works for processes that
    are not our children, so the test waits on their death instead of polling)."""
    fds: list[int] = []
    for pid in pids:
        try:
            fds.append(os.pidfd_open(pid))
        except ProcessLookupError:
            pass  # gone already
    return fds


async def _all_exit(fds: list[int]) -> bool:
    with anyio.fail_after(10):
        for fd in fds:
            try:
                await anyio.wait_readable(fd)
            finally:
                os.close(fd)
    return True


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


async def _pids_from(fifo: Path) -> list[int]:
    """What the hook writes into ``fifo`` (read in a thread: it blocks until the hook writes)."""
    text = await anyio.to_thread.run_sync(fifo.read_text)
    return [int(p) for p in text.split()]


async def test_a_hanging_hook_is_killed_at_its_timeout(world: World) -> None:
    fifo = _fifo(world.root / "fifo")
    hook = world.script("hang.sh", f"#!/bin/bash\nsleep 600 &\necho $$ $! > {fifo}\nwait\n")
    world.config(
        'permission_mode = "yolo"\n[[hooks.PreToolUse]]\n'
        f'hooks = [{{ type = "command", command = "{hook}", timeout = 0.5 }}]\n'
    )
    model = ScriptedModel([Step(calls=[Call("bash", {"command": "touch ran"})]), Step(text="done")])
    fds: list[int] = []

    async def watch() -> None:
        fds.extend(_pidfds(await _pids_from(fifo)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        await run_prompt(world.runtime(model), "go")
    (end,) = world.hook_ends()
    assert "timed out after 0.5 s" in end["error"]
    assert (world.ws / "ran").exists()  # a failed hook is not a block: the call went on
    assert await _all_exit(fds)  # the hook and its child: killed, not left running


async def test_cancelling_a_hook_kills_its_process_group(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "fifo")
    script = f"sleep 600 & echo $$ $! > {fifo}; wait"
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                await run_command(script, {}, workspace=tmp_path, env={"PATH": "/usr/bin:/bin"}, limit_s=60)

            tg.start_soon(run)
            pids = await _pids_from(fifo)  # the hook and its child are running
            fds = _pidfds(pids)
            scope.cancel()  # what Esc does to the run's scope
    assert len(pids) == 2 and await _all_exit(fds)


async def test_aborting_the_run_stops_a_running_hook(world: World) -> None:
    fifo = _fifo(world.root / "fifo")
    hook = world.script("slow.sh", f"#!/bin/bash\necho $$ > {fifo}\nsleep 600\n")
    world.config(f'[[hooks.UserPromptSubmit]]\nhooks = [{{ type = "command", command = "{hook}" }}]\n')
    model = ScriptedModel([Step(text="never")])
    rt = world.runtime(model)
    async with rt:
        rt.agent.prompt("hi")
        with anyio.fail_after(20):
            fds = _pidfds(await _pids_from(fifo))
            rt.agent.abort()
            await rt.wait_settled()
    assert model.calls == 0 and await _all_exit(fds)


def _state(pid: int) -> str:
    """The process's state letter in /proc (``T``: stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.parametrize("freeze", [True, False])
async def test_a_pause_freezes_a_running_hook_and_its_time_limit(world: World, freeze: bool) -> None:
    """A pause that freezes stops the hook (SIGSTOP) and its clock: held longer than the hook's
    timeout, the hook still ends normally once resumed. Without freezing it keeps running and the
    timeout kills it (so the test can fail)."""
    fifo, go = _fifo(world.root / "fifo"), _fifo(world.root / "go")
    hook = world.script("wait.sh", f"#!/bin/bash\necho $$ > {fifo}\nread line < {go}\n")
    world.config(
        f"pause_freeze = {str(freeze).lower()}\n[[hooks.UserPromptSubmit]]\n"
        f'hooks = [{{ type = "command", command = "exec {hook}", timeout = 1 }}]\n'
    )  # exec: the script is the process OwlTUI started (a child of this test), so waitid sees it stop
    rt = world.runtime(ScriptedModel([Step(text="answered")]))
    assert rt.freezer is not None
    async with rt:
        rt.agent.prompt("hi")
        with anyio.fail_after(20):
            (pid,) = await _pids_from(fifo)
            try:
                rt.freezer.pause()
                if freeze:  # until the stop has happened (the hook is a child of this process)
                    stopped = lambda: os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOWAIT)  # noqa: E731
                    with anyio.fail_after(5):
                        await anyio.to_thread.run_sync(stopped, abandon_on_cancel=True)
                assert (_state(pid) == "T") is freeze
                await anyio.sleep(1.5)  # a pause longer than the hook's time limit
            finally:
                GATE.resume()  # the gate is process-wide
            await anyio.to_thread.run_sync(lambda: go.write_text("go\n") if freeze else None)
            await rt.wait_settled()
    (end,) = world.hook_ends()
    if freeze:
        assert "error" not in end and rt.stats.answer == "answered", end
    else:
        assert "timed out after 1 s" in end["error"]


def _project(world: World, marker: Path, command: str | None = None, where: str = "claude") -> None:
    """A project hook on bash calls: in the repository's ``.claude/settings.json`` (with
    ``hooks_from_claude``) or in its ``.owltui/hooks.toml``."""
    cmd = command or f"touch {marker}"
    if where == "claude":
        world.claude_settings(
            world.ws, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": cmd}]}]}
        )
        world.config('permission_mode = "yolo"\nhooks_from_claude = true\n')
        return
    (world.ws / ".owltui").mkdir(exist_ok=True)
    (world.ws / ".owltui" / "hooks.toml").write_text(
        f'[[hooks.PreToolUse]]\nmatcher = "bash"\nhooks = [{{ type = "command", command = "{cmd}" }}]\n'
    )
    world.config('permission_mode = "yolo"\n')


def _bash() -> ScriptedModel:
    return ScriptedModel([Step(calls=[Call("bash", {"command": "echo hi"})]), Step(text="done")])


PLACES = pytest.mark.parametrize("where", ["claude", "owltui"])


@PLACES
async def test_an_unapproved_project_hook_runs_nothing(world: World, where: str) -> None:
    marker = world.root / "marker"
    _project(world, marker, where=where)
    await run_prompt(world.runtime(_bash()), "go")
    assert not marker.exists()
    assert any("not approved" in w for w in world.warnings)


@PLACES
async def test_approved_then_changed_asks_again(world: World, where: str) -> None:
    marker = world.root / "marker"
    _project(world, marker, where=where)
    rt = world.runtime(_bash())
    commands = Commands(rt, LineFront())
    listing = commands.slash("/hooks")  # what /hooks shows before approving
    assert listing is not None and "NOT approved" in listing.text and f"touch {marker}" in listing.text
    approved = commands.slash("/hooks approve")
    assert approved is not None and "approved" in approved.text
    await run_prompt(world.runtime(_bash()), "go")  # a new session: remembered
    assert marker.exists()
    marker.unlink()
    _project(world, marker, f"touch {marker}; echo changed", where=where)
    world.warnings.clear()
    await run_prompt(world.runtime(_bash()), "go")
    assert not marker.exists() and any("not approved" in w for w in world.warnings)
