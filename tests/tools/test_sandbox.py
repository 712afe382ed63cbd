"""The kernel sandbox with real processes: what a command may write, what it may not, and what it is told.

These run real shells under Landlock (and a user/mount namespace where allowed); they are skipped on
a kernel without Landlock. "Outside" (the ``outside`` fixture, conftest.py) is a fresh directory in the
home directory: not the workspace, not the temp dir, so a sandboxed command must not be able to write there.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.policy.sandbox.blocked import explain_blocked
from owltui.policy.sandbox.child import capabilities
from owltui.policy.sandbox.env import child_env
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.policy.sandbox.landlock import Landlock as _Landlock
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.proc import Proc
from owltui.tools.jobs.manager import JobManager

CAPS = capabilities()
needs_landlock = pytest.mark.skipif(CAPS.landlock_abi < 1, reason="this kernel has no Landlock")
needs_ns = pytest.mark.skipif(
    CAPS.landlock_abi < 1 or not CAPS.namespaces, reason="no Landlock or no namespaces here"
)
pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A workspace that is a git repository."""
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "src.txt").write_text("code\n")
    return ws


async def bash(ws: Path, command: str, policy: SandboxPolicy | None = None, **services: Any) -> ToolOutput:
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(sandbox=policy, **services))
    return await BashTool().run(BashParams(command=command), ctx)


# ---- what may be written ------------------------------------------------------------------------
@needs_landlock
async def test_writing_to_home_fails_with_the_sandbox_message(repo: Path, outside: Path) -> None:
    out = await bash(repo, f"touch {outside}/pwned", SandboxPolicy("workspace-write", repo))
    assert out.is_error
    assert not (outside / "pwned").exists()
    assert "blocked by the sandbox: writes outside the workspace are not allowed" in out.content
    assert f'sandbox_writable = ["{outside}"]' in out.content and "--sandbox off" in out.content
    assert out.details["sandbox_blocked"] is True


@needs_landlock
async def test_the_workspace_and_the_temp_dir_are_writable(repo: Path, tmp_path: Path) -> None:
    scratch = Path(tempfile.gettempdir()) / f"owltui-sandbox-{uuid.uuid4().hex[:8]}"
    try:
        out = await bash(
            repo,
            f"mkdir -p build/x && echo hi > build/x/f && rm src.txt && mv build b2 && "
            f"echo t > {scratch} && cat {scratch} && echo z > /dev/null && "
            f"git add -A && git -c user.name=a -c user.email=a@b commit -qm one && echo ok",
            SandboxPolicy("workspace-write", repo),
        )
        assert not out.is_error, out.content
        assert out.content.endswith("ok\n")
        assert (repo / "b2" / "x" / "f").read_text() == "hi\n" and not (repo / "src.txt").exists()
        assert scratch.read_text() == "t\n"
    finally:
        scratch.unlink(missing_ok=True)


@needs_landlock
async def test_sandbox_writable_adds_a_place(repo: Path, outside: Path) -> None:
    out = await bash(
        repo,
        f"touch {outside}/allowed && echo ok",
        SandboxPolicy("workspace-write", repo, writable=[outside]),
    )
    assert not out.is_error, out.content
    assert (outside / "allowed").exists()


@needs_ns
@pytest.mark.parametrize("userns", [False, True], ids=["default", "user-namespace"])
async def test_git_config_hooks_and_owltui_are_read_only(repo: Path, userns: bool) -> None:
    policy = SandboxPolicy("workspace-write", repo, userns=userns or None)
    assert policy.protects_config
    before = (repo / ".git" / "config").read_text()
    attempts = {
        "echo '[core] fsmonitor = touch pwned' >> .git/config": "Read-only file system",
        "git config core.fsmonitor 'touch pwned'": "",
        "touch .git/hooks/pre-commit": "Read-only file system",
        "mkdir -p .owltui && echo '[allow]' > .owltui/permissions.toml": "Read-only file system",
        "mv .git .git-old": "busy",
        "mv .git/config .git/c && echo x > .git/config": "busy",
        "umount -l .git/config; echo x > .git/config": "Read-only file system",
        "nsenter -t 1 -m sh -c 'echo x > .git/config'": "",
    }
    for command, message in attempts.items():
        out = await bash(repo, command, policy)
        assert out.is_error, command
        assert message.lower() in out.content.lower(), (command, out.content)
    assert (repo / ".git" / "config").read_text() == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / ".owltui" / "permissions.toml").exists()
    assert (repo / ".git").is_dir() and not (repo / ".git-old").exists()
    # the model is told why
    out = await bash(repo, "echo x >> .git/config", policy)
    assert "blocked by the sandbox: .git/config is protected configuration" in out.content
    assert out.details["sandbox_blocked"] is True
    # and the rest of .git works: a commit writes objects, refs and the index
    out = await bash(
        repo, "git add -A && git -c user.name=a -c user.email=a@b commit -qm x && echo ok", policy
    )
    assert out.content.endswith("ok\n"), out.content


@needs_ns
async def test_a_missing_owltui_dir_cannot_be_created(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    policy = SandboxPolicy("workspace-write", ws)
    out = await bash(ws, "mkdir -p .owltui && touch .owltui/permissions.toml", policy)
    assert out.is_error
    assert not (ws / ".owltui" / "permissions.toml").exists()
    assert (ws / ".owltui").is_dir() and list((ws / ".owltui").iterdir()) == []  # created empty, kept empty


def mountinfo() -> str:
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        return fh.read()


@needs_ns
async def test_no_mount_leaks_into_the_parent(repo: Path) -> None:
    before = mountinfo()
    out = await bash(repo, "true", SandboxPolicy("workspace-write", repo))
    assert not out.is_error
    assert mountinfo() == before


@needs_landlock
async def test_read_only_mode(repo: Path) -> None:
    policy = SandboxPolicy("read-only", repo)
    out = await bash(repo, "cat src.txt && echo x > /dev/null && touch new", policy)
    assert out.is_error and "code\n" in out.content
    assert not (repo / "new").exists()
    assert 'sandbox = "read-only"' in out.content and out.details["sandbox_blocked"] is True


@pytest.mark.skipif(CAPS.landlock_abi < 4, reason="TCP rules need Landlock ABI 4")
async def test_sandbox_network_false_denies_tcp_connect(repo: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        cmd = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        closed = await bash(repo, cmd, SandboxPolicy("workspace-write", repo, network=False))
        assert closed.is_error and "connected" not in closed.content
        assert "network connections are not allowed" in closed.content
        opened = await bash(repo, cmd, SandboxPolicy("workspace-write", repo))
        assert opened.content.strip() == "connected"
    finally:
        server.close()


# ---- without the sandbox --------------------------------------------------------------------------
@needs_landlock
async def test_one_run_outside_the_sandbox_on_the_users_word(repo: Path, outside: Path) -> None:
    asked: list[tuple[str, str, str]] = []

    async def rerun(call_id: str, command: str, reason: str) -> bool:
        asked.append((call_id, command, reason))
        return True

    policy = SandboxPolicy("workspace-write", repo)
    out = await bash(repo, f"touch {outside}/f && echo made", policy, sandbox_rerun=rerun)
    assert len(asked) == 1 and "blocked by the sandbox" in asked[0][2]
    assert (outside / "f").exists() and not out.is_error
    assert out.details["rerun_outside_sandbox"] is True and "made" in out.content

    async def refuse(call_id: str, command: str, reason: str) -> bool:
        return False

    out = await bash(repo, f"touch {outside}/g", policy, sandbox_rerun=refuse)
    assert out.is_error and not (outside / "g").exists()
    # the direct way (the host's own re-run): not a parameter the model can send
    ctx = ToolContext(workspace=repo, cancel=CancelToken(), services=Services(sandbox=policy))
    out = await BashTool().run(BashParams(command=f"touch {outside}/h"), ctx, sandboxed=False)
    assert not out.is_error and (outside / "h").exists()
    assert "sandboxed" not in BashParams.model_json_schema()["properties"]


def test_no_landlock_means_every_command_asks(repo: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo, landlock=False, namespaces=False)
    assert not policy.enforced and policy.requires_approval and not policy.protects_config
    assert policy.preexec(repo) is None
    [note] = policy.startup_notes()
    assert "no Landlock" in note and "every command asks" in note and "--sandbox off" in note
    off = SandboxPolicy("off", repo)
    assert not off.enforced and not off.requires_approval
    assert "off" in off.startup_notes()[0]


@needs_landlock
def test_without_namespaces_config_is_guarded_by_approval_only(repo: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo, namespaces=False)
    assert policy.enforced and not policy.requires_approval and not policy.protects_config
    assert any("protected by approval only" in n for n in policy.startup_notes())


@needs_landlock
def test_a_full_sandbox_says_nothing_at_start(repo: Path) -> None:
    if not CAPS.namespaces:
        pytest.skip("no namespaces here")
    assert SandboxPolicy("workspace-write", repo).startup_notes() == []


# ---- jobs and the environment ---------------------------------------------------------------------
@needs_landlock
async def test_background_jobs_are_sandboxed(repo: Path, outside: Path, tmp_path: Path) -> None:
    jobs = JobManager(spill_dir=tmp_path / "spill", sandbox=SandboxPolicy("workspace-write", repo))
    try:
        job = await jobs.start(f"touch {outside}/j", repo)
        await job.proc.wait(10)
        assert job.proc.exit_code != 0 and not (outside / "j").exists()
    finally:
        await jobs.shutdown()


async def test_env_shows_no_keys(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    values = {
        "ANTHROPIC_API_KEY": "sk-ant-envtest-0123456789",
        "OPENAI_API_KEY": "sk-envtest-abcdefghij",
        "GITHUB_TOKEN": "ghp_envtest_0123456789",
        "db_password": "hunter2-envtest",
        "AWS_SECRET_ACCESS_KEY": "awssecret-envtest-01",
        "OPENAI_BASE_URL": "https://u:pw-envtest@h/v1",
        "KEEP_THIS_TOKEN": "kept-envtest-value",
        "PLAIN_VAR": "plain-envtest",
    }
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    out = await bash(repo, "env", SandboxPolicy("workspace-write", repo, env_keep=["KEEP_*"]))
    assert not out.is_error
    for k, v in values.items():
        if k in ("KEEP_THIS_TOKEN", "PLAIN_VAR"):
            assert f"{k}={v}" in out.content
        else:
            assert v not in out.content and f"{k}=" not in out.content


def test_child_env_rules() -> None:
    env = {
        "API_KEY": "x",
        "my_key_file": "x",
        "Secret_Thing": "x",
        "GH_TOKEN": "x",
        "PASSWORD": "x",
        "HOME": "/h",
        "PATH": "/bin",
        "OPENAI_BASE_URL": "http://a:b@h",
        "ANTHROPIC_BASE_URL": "http://h",
    }
    assert child_env(env) == {"HOME": "/h", "PATH": "/bin", "ANTHROPIC_BASE_URL": "http://h"}
    assert "GH_TOKEN" in child_env(env, ["GH_TOKEN"]) and "API_KEY" not in child_env(env, ["GH_TOKEN"])


# ---- explaining failures --------------------------------------------------------------------------
@needs_landlock
@pytest.mark.parametrize(
    "line",
    [
        "touch: cannot touch '{p}/x': Permission denied",
        "/bin/bash: line 1: {p}/x: Permission denied",
        "mkdir: cannot create directory ‘{p}/d’: Permission denied",
        "PermissionError: [Errno 13] Permission denied: '{p}/x'",
        "npm ERR! Error: EACCES: permission denied, mkdir '{p}/.npm/_cacache'",
        "cp: cannot create regular file '{p}/x': Permission denied",
    ],
)
def test_explain_recognises_refused_writes_outside(repo: Path, outside: Path, line: str) -> None:
    note = explain_blocked(SandboxPolicy("workspace-write", repo), line.format(p=outside), repo)
    assert note is not None and "writes outside the workspace" in note and str(outside) in note


@needs_landlock
@pytest.mark.parametrize(
    "line",
    [
        "bash: ./build/x: Permission denied",  # inside the workspace: not the sandbox
        "error: something unrelated",
        "ls: cannot open directory '/tmp/x': Permission denied",
        "Permission denied (publickey).",
    ],
)
def test_explain_stays_quiet_otherwise(repo: Path, line: str) -> None:
    assert explain_blocked(SandboxPolicy("workspace-write", repo), line, repo) is None


@needs_landlock
@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere without a sandbox")
def test_explain_ignores_what_file_permissions_refuse_anyway(repo: Path) -> None:
    line = "cat: /etc/shadow: Permission denied"
    assert explain_blocked(SandboxPolicy("workspace-write", repo), line, repo) is None


@needs_landlock
def test_sandbox_failure_does_not_run_the_command(repo: Path, tmp_path: Path) -> None:
    policy = SandboxPolicy("workspace-write", repo)
    policy._ll = _Landlock(policy.abi, 1 << 60, 0, 0, [])  # a right no kernel knows: creation fails
    proc = Proc(f"touch {repo}/ran", repo, tmp_path / "spill", sandbox=policy)
    proc._thread.join(10)
    assert proc.exit_code == 126 and not (repo / "ran").exists()
    assert "the sandbox could not be set up" in proc.sink.preview()
