"""Sandboxed commands started by the fork server: OwlTUI's own children, holding nothing of the server,
confined as before, and started the old way (still confined) when the server is gone.

Real processes under the real sandbox; skipped on a kernel without Landlock. Each test gets a fresh
server (``spawner``), closed at its end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolError
from owltui.policy.sandbox.child import capabilities, plan_from_wire, plan_to_wire
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.policy.sandbox.landlock import Landlock
from owltui.policy.sandbox.spawner import clone_number
from owltui.tools.exec import bash, spawn
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.proc import Proc
from owltui.tools.exec.procfs import Stat, children, read_stat
from owltui.tools.exec.reaper import REAPER
from owltui.tools.exec.spawn import Spawned, Spawner

CAPS = capabilities()
pytestmark = pytest.mark.skipif(
    CAPS.landlock_abi < 1 or clone_number() is None, reason="no Landlock or no fork server here"
)


@pytest.fixture
def spawner(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spawner]:
    fresh = Spawner()
    monkeypatch.setattr(spawn, "SPAWNER", fresh)
    yield fresh
    fresh.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def run(ws: Path, command: str, policy: SandboxPolicy | None) -> Proc:
    proc = Proc(command, ws, ws.parent / "spill", sandbox=policy)
    proc._thread.join(30)
    assert proc.done
    return proc


def confined(ws: Path, outside: Path, policy: SandboxPolicy) -> Proc:
    """A command that tries a write outside the roots and one to the protected git config."""
    proc = run(ws, f"touch {outside}/pwned; echo x >> .git/config; echo ran", policy)
    assert "ran" in proc.sink.preview()
    assert not (outside / "pwned").exists()
    if CAPS.namespaces:
        assert "x" not in (ws / ".git" / "config").read_text()
    return proc


def test_the_command_is_owltuis_own_child(spawner: Spawner, repo: Path) -> None:
    proc = run(repo, "echo $PPID", SandboxPolicy("workspace-write", repo))
    assert isinstance(proc._popen, Spawned)  # started by the server, not by Popen
    assert proc.sink.preview().strip() == str(os.getpid())
    assert spawner.server_pid is not None and spawner.server_pid != os.getpid()


def test_the_command_holds_only_its_stdio(spawner: Spawner, repo: Path) -> None:
    proc = run(repo, "ls -l /proc/$$/fd; true", SandboxPolicy("workspace-write", repo))
    assert isinstance(proc._popen, Spawned)
    fds = [line.split()[-3] for line in proc.sink.preview().splitlines() if "->" in line]
    assert fds == ["0", "1", "2"], proc.sink.preview()
    assert "socket:" not in proc.sink.preview()


def test_the_start_waits_for_the_exec_not_for_the_command(spawner: Spawner, repo: Path) -> None:
    started: list[Proc] = []
    starter = threading.Thread(
        target=lambda: started.append(
            Proc("exec sleep 60", repo, repo.parent / "spill", sandbox=SandboxPolicy("workspace-write", repo))
        )
    )
    starter.start()
    starter.join(20)
    assert started, "the start waited for the command to end"
    assert isinstance(started[0]._popen, Spawned) and not started[0].done
    started[0].terminate_sync(grace=1.0)
    started[0]._thread.join(10)
    assert started[0].done


def test_signals_are_as_popen_leaves_them(spawner: Spawner, repo: Path) -> None:
    """Nothing ignored or blocked that a command started by ``Popen`` would not have (SIGPIPE above all)."""
    look = "grep -E '^Sig(Ign|Blk)' /proc/self/status"
    served = run(repo, look, SandboxPolicy("workspace-write", repo))
    assert isinstance(served._popen, Spawned)
    assert served.sink.preview() == run(repo, look, None).sink.preview()


def test_the_escape_attempts_still_fail(spawner: Spawner, repo: Path, outside: Path) -> None:
    proc = confined(repo, outside, SandboxPolicy("workspace-write", repo))
    assert isinstance(proc._popen, Spawned)


def test_a_command_started_on_the_event_loop_is_as_confined(
    spawner: Spawner, repo: Path, outside: Path
) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    ctx = ToolContext(workspace=repo, cancel=CancelToken(), services=Services(sandbox=policy))
    attack = f"touch {outside}/pwned; echo x >> .git/config; echo ran"

    async def main() -> tuple[bool, str]:
        await bash.BashTool().run(bash.BashParams(command="true"), ctx)  # the server is up, git looked at
        cheap = bash._start_is_cheap(policy, True)
        return cheap, (await bash.BashTool().run(bash.BashParams(command=attack), ctx)).content

    cheap, content = anyio.run(main)
    assert cheap  # the second command started on the loop, not in a worker thread
    assert "ran" in content
    assert not (outside / "pwned").exists()
    if CAPS.namespaces:
        assert "x" not in (repo / ".git" / "config").read_text()


def test_killing_the_server_falls_back_to_the_old_start_still_confined(
    spawner: Spawner, repo: Path, outside: Path
) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    assert isinstance(run(repo, "true", policy)._popen, Spawned)
    pid = spawner.server_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # dead (its Popen reaps it)
    proc = confined(repo, outside, policy)
    assert isinstance(proc._popen, subprocess.Popen) and spawner.broken is not None
    assert proc.exit_code == 0 and isinstance(confined(repo, outside, policy)._popen, subprocess.Popen)


def spares(server_pid: int) -> list[Stat]:
    """OwlTUI's children in the server's process group: its spare (a command has its own group)."""
    kids = [read_stat(pid) for pid in children(os.getpid()) if pid != server_pid]
    return [st for st in kids if st is not None and st.pgid == server_pid]


def test_a_spare_waits_ahead_of_each_command_holding_nothing_of_the_servers(
    spawner: Spawner, repo: Path, outside: Path
) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    first = run(repo, "true", policy)
    server = spawner.server_pid
    assert server is not None and isinstance(first._popen, Spawned)
    (spare,) = spares(server)  # the next command's process, cloned after the reply
    assert spare.alive and spare.ppid == os.getpid() and spare.pid != first.pid
    held = {int(fd): os.readlink(f"/proc/{spare.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{spare.pid}/fd")}
    assert [held.pop(fd) for fd in (0, 1, 2)] == ["/dev/null"] * 3
    (own,) = held.values()  # one socket: its own pair's, not the server's end of OwlTUI's pair
    assert own.startswith("socket:")
    second = confined(repo, outside, policy)
    assert second.pid == spare.pid and second.exit_code == 0  # the spare became the command
    assert [st.pid for st in spares(server)] != [spare.pid]


def test_the_command_leads_its_group_when_its_pid_is_known(spawner: Spawner, repo: Path) -> None:
    """A freeze or an abort right after the start signals the command's group: it exists by then
    (from a spare, and from a clone made on the spot), before the set-up and the exec."""
    policy = SandboxPolicy("workspace-write", repo)
    for i in range(20):
        if i == 10:
            (spare,) = spares(spawner.server_pid or 0)
            os.kill(spare.pid, signal.SIGKILL)  # the next command is cloned on the spot
            os.waitpid(spare.pid, 0)
        proc = Proc("sleep 30", repo, repo.parent / "spill", sandbox=policy)
        assert isinstance(proc._popen, Spawned)
        os.killpg(proc.pgid, signal.SIGKILL)  # no ProcessLookupError: the group is there
        proc._thread.join(30)
        assert proc.done and proc.exit_code == 128 + signal.SIGKILL


def test_a_spare_that_died_is_replaced_and_the_server_reaped_with_its_spare(
    spawner: Spawner, repo: Path, outside: Path
) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    run(repo, "true", policy)
    server = spawner.server_pid
    assert server is not None
    (spare,) = spares(server)
    os.kill(spare.pid, signal.SIGKILL)
    os.waitpid(spare.pid, 0)
    proc = confined(repo, outside, policy)  # cloned on the spot, as confined
    assert isinstance(proc._popen, Spawned) and proc.exit_code == 0 and spawner.broken is None
    assert len(spares(server)) == 1
    spawner.close()
    assert not spares(server)  # the last spare ended with the server and was reaped


def test_a_server_that_cannot_start_means_the_old_start(
    spawner: Spawner, repo: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "")
    proc = confined(repo, outside, SandboxPolicy("workspace-write", repo))
    assert isinstance(proc._popen, subprocess.Popen) and spawner.broken is not None


def test_a_set_up_failure_exits_126_with_the_line(spawner: Spawner, repo: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    policy._ll = Landlock(policy.abi, 1 << 60, 0, 0, [])  # a right no kernel knows: creation fails
    proc = run(repo, f"touch {repo}/ran", policy)
    assert isinstance(proc._popen, Spawned)
    assert proc.exit_code == 126 and not (repo / "ran").exists()
    assert "the sandbox could not be set up (landlock_create_ruleset" in proc.sink.preview()


def test_an_exec_failure_is_told_as_the_error_popen_raises(spawner: Spawner, repo: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    plan = policy.plan(repo)
    assert plan is not None
    failed = spawner.start(policy.wire(plan), [str(repo / "no-such-shell"), "-c", "true"], {}, repo)
    assert failed is not None
    err = failed.exec_failure()
    assert isinstance(err, FileNotFoundError) and err.filename == str(repo / "no-such-shell")
    assert failed.exec_failure() is err  # read once, told again
    assert failed.wait() == 127
    failed.stdout.close()
    assert spawner.broken is None  # the server is fine: the next command starts from it
    child = spawner.start(policy.wire(plan), ["/bin/sh", "-c", "exit 7"], {}, repo)
    assert child is not None and child.exec_failure() is None and child.wait() == 7
    child.stdout.close()


def test_a_shell_that_cannot_be_executed_fails_the_bash_call(
    spawner: Spawner, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spawn, "SPAWNER", spawner)
    monkeypatch.setenv("SHELL", str(repo / "not-a-shell"))
    (repo / "not-a-shell").write_text("")
    (repo / "not-a-shell").chmod(0o755)  # executable, but no format the kernel can run
    ctx = ToolContext(repo, CancelToken(), services=Services(sandbox=SandboxPolicy("workspace-write", repo)))
    with pytest.raises(ToolError, match=r"Could not start the shell: .*Exec format error"):
        anyio.run(BashTool().run, BashParams(command="true"), ctx)


def test_the_reaper_leaves_the_shell_to_its_handle(spawner: Spawner, repo: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    plan = policy.plan(repo)
    assert plan is not None
    child = spawner.start(policy.wire(plan), ["/bin/sh", "-c", "exit 7"], {}, repo)
    assert child is not None

    class Origin:
        pid = pgid = child.pid if child is not None else 0
        command = "exit 7"

        @property
        def shell_reaped(self) -> bool:
            return child is not None and child.returncode is not None

    token = REAPER.token()
    REAPER.register(token, Origin())
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # a zombie now, not yet waited for
    REAPER.scan()
    assert child.wait() == 7
    child.stdout.close()


def test_the_plan_survives_the_wire(repo: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    plan = policy.plan(repo)
    assert plan is not None
    again = plan_from_wire(plan_to_wire(plan))
    assert (again.mounts, again.landlock, again.cwd, again.ids) == (
        plan.mounts,
        plan.landlock,
        plan.cwd,
        plan.ids,
    )
    if plan.socket_filter is not None:
        assert again.socket_filter is not None and again.socket_filter.rows == plan.socket_filter.rows


def test_a_session_starts_the_server_before_the_model_acts(spawner: Spawner, tmp_path: Path) -> None:
    """Building a session with an enforced sandbox starts the server (its code is read then, before
    any tool could change a file of OwlTUI's own source in the workspace); without one it does not."""
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options
    from owltui.testing.scripted import ScriptedModel

    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "PATH": os.environ["PATH"]}
    build_runtime(Options(workspace=ws, no_session=True, sandbox="off"), model=ScriptedModel([]), env=env)
    assert spawner.server_pid is None
    build_runtime(Options(workspace=ws, no_session=True), model=ScriptedModel([]), env=env)
    assert spawner.server_pid is not None
