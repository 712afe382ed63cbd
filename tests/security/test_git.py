"""Git metadata: nothing a sandboxed command (or a file tool) writes may make the user's own git run code.

Each attack runs as the model would run it (the ``bash`` tool under the real sandbox), then the user
runs a plain ``git status`` outside any sandbox, in the workspace or a subdirectory; the payload is
``core.fsmonitor``, which git runs through the shell. Every attack is first shown to work with the
sandbox off (so the test can fail), then to be stopped with it on, as root (a mount namespace) and
through the unprivileged path (a user namespace). The operations a commit needs keep working.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolCall
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.policy.sandbox.child import capabilities
from owltui.policy.sandbox.git_guard import GitAudit
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.files.tools import WriteParams, WriteTool

CAPS = capabilities()
needs_ns = pytest.mark.skipif(
    CAPS.landlock_abi < 1 or not CAPS.namespaces, reason="no Landlock or no namespaces here"
)
pytestmark = pytest.mark.anyio

IDENTITY = (
    "export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@x "
    "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null; "
)


def user_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_AUTHOR_NAME="u",
        GIT_AUTHOR_EMAIL="u@x",
        GIT_COMMITTER_NAME="u",
        GIT_COMMITTER_EMAIL="u@x",
    )
    return env


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=user_env(), capture_output=True, text=True, timeout=60)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "first")
    return path


async def bash(ws: Path, command: str, policy: SandboxPolicy) -> ToolOutput:
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(sandbox=policy))
    return await BashTool().run(BashParams(command=IDENTITY + command, timeout=None), ctx)


# ---- the corpus --------------------------------------------------------------------------------
def _plain(tmp: Path) -> Path:
    return make_repo(tmp / "ws")


def _worktree(tmp: Path) -> Path:
    main = make_repo(tmp / "main")
    git(main, "worktree", "add", "-q", str(tmp / "ws"))
    return tmp / "ws"


def _sparse(tmp: Path) -> Path:
    ws = make_repo(tmp / "ws")
    git(ws, "sparse-checkout", "init")
    assert (ws / ".git" / "config.worktree").exists()
    return ws


def _worktree_config_only(tmp: Path) -> Path:
    ws = make_repo(tmp / "ws")
    git(ws, "config", "extensions.worktreeConfig", "true")
    return ws


def _with_src(tmp: Path) -> Path:
    ws = make_repo(tmp / "ws")
    (ws / "src").mkdir()
    (ws / "src" / "m.py").write_text("")
    return ws


def _pay(marker: Path) -> str:
    return f"'touch {marker}; true'"


@dataclass(frozen=True)
class Attack:
    name: str
    setup: Callable[[Path], Path]
    command: Callable[[Path], str]  # marker -> the model's command
    where: str = "."  # where the user runs git status, relative to the workspace


CORPUS = [
    Attack(
        "commondir pointing at a workspace dir with its own config",
        _plain,
        lambda m: (
            "mkdir evil && cp -r .git/objects .git/refs evil/ && cp .git/config evil/config && "
            f"git config -f evil/config core.fsmonitor {_pay(m)} && echo ../evil > .git/commondir"
        ),
    ),
    Attack(
        "a nested repository recorded as a gitlink through .git/index",
        _plain,
        lambda m: (
            "git init -q sub && echo x > sub/f && git -C sub add f && git -C sub commit -qm s && "
            "git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && "
            f"git -C sub config core.fsmonitor {_pay(m)}"
        ),
    ),
    Attack(
        "a linked worktree's .git file rewritten",
        _worktree,
        lambda m: (
            "cp -r $(git rev-parse --git-common-dir) /tmp/$$.gd && rm -rf /tmp/$$.gd/worktrees && "
            f"git config -f /tmp/$$.gd/config core.fsmonitor {_pay(m)} && "
            'printf "gitdir: /tmp/$$.gd\\n" > .git'
        ),
    ),
    Attack(
        "the linked worktree's own git directory given a config.worktree",
        _worktree,
        lambda m: (
            "git config extensions.worktreeConfig true; "
            f'git config -f "$(git rev-parse --git-dir)/config.worktree" core.fsmonitor {_pay(m)}'
        ),
    ),
    Attack(
        "config.worktree of a sparse checkout, written by cp",
        _sparse,
        lambda m: (
            f"git config -f /tmp/$$.cfg core.fsmonitor {_pay(m)} && cp /tmp/$$.cfg .git/config.worktree"
        ),
    ),
    Attack(
        "config.worktree created where extensions.worktreeConfig is set",
        _worktree_config_only,
        lambda m: (
            f"git config -f /tmp/$$.cfg core.fsmonitor {_pay(m)} && cp /tmp/$$.cfg .git/config.worktree"
        ),
    ),
    Attack(
        "a .git directory planted in a subdirectory",
        _plain,
        lambda m: (
            "git init -q sub && echo x > sub/f && git -C sub add f && git -C sub commit -qm s && "
            f"git -C sub config core.fsmonitor {_pay(m)}"
        ),
        where="sub",
    ),
    Attack(
        "a .git file planted in a subdirectory (git directory outside the workspace)",
        _plain,
        lambda m: (
            "mkdir deep && git init -q --separate-git-dir=/tmp/$$.sep deep/sub && echo x > deep/sub/f && "
            "git -C deep/sub add f && git -C deep/sub commit -qm s && "
            f"git -C deep/sub config core.fsmonitor {_pay(m)}"
        ),
        where="deep/sub",
    ),
    Attack(
        "a .git directory planted, then the directory's mtime set back",
        _with_src,
        lambda m: (
            "old=$(stat -c %y src) && git init -q src/lib && echo x > src/lib/f && git -C src/lib add f && "
            f"git -C src/lib commit -qm s && git -C src/lib config core.fsmonitor {_pay(m)} && "
            'touch -d "$old" src'
        ),
        where="src/lib",
    ),
    Attack(
        "hooks of the worktree's main repository",
        _worktree,
        lambda m: (
            "git config --get core.hooksPath; "
            f'printf "#!/bin/sh\\ntouch {m}\\n" > "$(git rev-parse --git-common-dir)/hooks/post-checkout" && '
            'chmod +x "$(git rev-parse --git-common-dir)/hooks/post-checkout"'
        ),
        where="@checkout",
    ),
]


def user_runs_git(ws: Path, where: str) -> None:
    if where == "@checkout":
        git(ws, "checkout", "-q", "-b", "user-branch")
        return
    git(ws / where, "status")


@pytest.mark.parametrize("attack", CORPUS, ids=[a.name for a in CORPUS])
async def test_the_attack_works_without_the_sandbox(tmp_path: Path, attack: Attack) -> None:
    ws = attack.setup(tmp_path)
    marker = tmp_path / "MARK"
    out = await bash(ws, attack.command(marker), SandboxPolicy("off", ws))
    assert not out.is_error, out.content
    assert not marker.exists()
    user_runs_git(ws, attack.where)
    assert marker.exists(), f"the attack did not work even without the sandbox: {out.content}"


@needs_ns
@pytest.mark.parametrize("userns", [False, True], ids=["mount-namespace", "user-namespace"])
@pytest.mark.parametrize("attack", CORPUS, ids=[a.name for a in CORPUS])
async def test_the_sandbox_stops_it(tmp_path: Path, attack: Attack, userns: bool) -> None:
    if not userns and os.geteuid() != 0:
        pytest.skip("a mount namespace without a user namespace needs root")
    ws = attack.setup(tmp_path)
    marker = tmp_path / "MARK"
    policy = SandboxPolicy("workspace-write", ws, userns=True if userns else None)
    await bash(ws, "true", policy)  # an earlier command; then past the timestamp granularity
    await anyio.sleep(0.1)
    out = await bash(ws, attack.command(marker), policy)
    user_runs_git(ws, attack.where)
    for sub in ("", "sub", "deep", "deep/sub", "evil", "src/lib"):  # and in every subdirectory there is
        if (ws / sub).is_dir():
            git(ws / sub, "status")
    assert not marker.exists(), out.content


@needs_ns
@pytest.mark.parametrize("userns", [False, True], ids=["mount-namespace", "user-namespace"])
@pytest.mark.parametrize("setup", [_plain, _worktree], ids=["repository", "linked-worktree"])
async def test_add_commit_checkout_stash_branch_still_work(
    tmp_path: Path, setup: Callable[[Path], Path], userns: bool
) -> None:
    if not userns and os.geteuid() != 0:
        pytest.skip("a mount namespace without a user namespace needs root")
    ws = setup(tmp_path)
    policy = SandboxPolicy("workspace-write", ws, userns=True if userns else None)
    out = await bash(
        ws,
        "set -e; echo b > b.txt; git add b.txt; git commit -qm second; git checkout -qb feature; "
        "echo c >> a.txt; git stash -q; git stash pop -q; git commit -qam third; git branch other; "
        "git checkout -q -; git merge -q --no-edit feature; git tag v1; git log --oneline | wc -l",
        policy,
    )
    assert not out.is_error, out.content
    assert out.content.strip().splitlines()[0] == "3", out.content
    assert "renamed" not in out.content
    assert git(ws, "status", "--porcelain").stdout == ""


@needs_ns
async def test_the_users_own_nested_repository_is_kept_and_protected(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    policy = SandboxPolicy("workspace-write", ws)
    assert not (await bash(ws, "true", policy)).is_error
    make_repo(ws / "vendor" / "lib")  # the user clones something between two commands
    marker = tmp_path / "MARK"
    out = await bash(ws, f"git -C vendor/lib config core.fsmonitor {_pay(marker)}; echo done", policy)
    assert "renamed" not in out.content and (ws / "vendor" / "lib" / ".git").is_dir()
    git(ws / "vendor" / "lib", "status")
    assert not marker.exists(), out.content


@needs_ns
async def test_the_users_own_git_work_between_commands_is_kept(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    policy = SandboxPolicy("workspace-write", ws)
    assert not (await bash(ws, "true", policy)).is_error
    git(ws, "sparse-checkout", "init")  # config.worktree appears: the user's
    git(ws, "worktree", "add", "-q", str(tmp_path / "wt"))  # .git/worktrees appears: the user's
    out = await bash(ws, "cp .git/config .git/config.worktree", policy)
    assert out.is_error and "protected" in out.content  # and now bound read-only
    assert "renamed" not in out.content
    assert (ws / ".git" / "worktrees").is_dir() and git(tmp_path / "wt", "status").returncode == 0


@needs_ns
async def test_what_a_background_process_plants_later_is_neutralised(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    marker = tmp_path / "MARK"
    policy = SandboxPolicy("workspace-write", ws)
    plant = (
        "git init -q sub && echo x > sub/f && git -C sub add f && git -C sub commit -qm s && "
        f"git -C sub config core.fsmonitor {_pay(marker)}"
    )
    done = tmp_path / "PLANTED"  # written last by the background process, outside the workspace
    first = await bash(ws, f"(sleep 1; {plant}; touch {done}) >/dev/null 2>&1 &", policy)
    assert "renamed" not in first.content
    for _ in range(200):  # until it has planted the repository (polling a file it writes last)
        if done.exists():
            break
        await anyio.sleep(0.05)
    second = await bash(ws, "true", policy)  # the next command: judged, not taken for the user's work
    assert "renamed" in second.content, second.content
    git(ws / "sub", "status")
    assert not marker.exists()


@needs_ns
async def test_a_directory_made_to_look_like_a_git_directory_is_neutralised(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    out = await bash(ws, "git init -q --bare sub && echo made", SandboxPolicy("workspace-write", ws))
    assert "renamed" in out.content and not (ws / "sub" / "HEAD").exists()


async def test_the_write_tool_cannot_plant_a_repository(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    for mode in ("edits", "yolo"):
        policy = PermissionPolicy(ws, mode, None)
        for path in ("sub/.git/config", "sub/.git", ".git/commondir", ".git/index", "a/b/.GIT/HEAD"):
            call = ToolCall(id="1", name="write", arguments={"path": path, "content": "x"})
            verdict = await policy.check(call, read_only=False)
            assert verdict is not None and "explicit approval" in verdict, (mode, path)
    # what git would take for a bare repository, written file by file, loses its HEAD
    sandbox = SandboxPolicy("workspace-write", ws)
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(sandbox=sandbox))
    outs = [
        await WriteTool().run(WriteParams(path=p, content=c), ctx)
        for p, c in (("bare/objects/x", ""), ("bare/refs/heads/x", ""), ("bare/HEAD", "ref: refs/heads/x\n"))
    ]
    assert "renamed" in outs[-1].content and not (ws / "bare" / "HEAD").exists()


async def test_apply_patch_cannot_plant_a_repository(tmp_path: Path) -> None:
    """The patch tool's twin of the write tool's test: a header, a move's destination, or several
    files of one patch that together look like a bare repository."""
    from owltui.tools.patch.tool import ApplyPatchParams, ApplyPatchTool

    ws = make_repo(tmp_path / "ws")
    (ws / "notes.txt").write_text("x\n")
    for mode in ("edits", "yolo"):
        policy = PermissionPolicy(ws, mode, None)
        for path in ("sub/.git/config", ".git/hooks/pre-commit", "a/b/.GIT/HEAD"):
            for body in (
                f"*** Add File: {path}\n+x",
                f"*** Update File: notes.txt\n*** Move to: {path}\n@@\n-x\n+y",
            ):
                patch = f"*** Begin Patch\n{body}\n*** End Patch"
                call = ToolCall(id="1", name="apply_patch", arguments={"input": patch})
                verdict = await policy.check(call, read_only=False)
                assert verdict is not None and "explicit approval" in verdict, (mode, path, body)
    sandbox = SandboxPolicy("workspace-write", ws)
    ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(sandbox=sandbox))
    bare = "\n".join(
        f"*** Add File: {p}\n+{c}"
        for p, c in (("bare/objects/x", ""), ("bare/refs/heads/x", ""), ("bare/HEAD", "ref: refs/heads/x"))
    )
    out = await ApplyPatchTool().run(ApplyPatchParams(input=f"*** Begin Patch\n{bare}\n*** End Patch"), ctx)
    assert "renamed" in out.content and not (ws / "bare" / "HEAD").exists()


def test_the_audit_is_cheap_on_a_10k_file_tree(tmp_path: Path) -> None:
    import time

    ws = tmp_path / "ws"
    for d in range(500):
        sub = ws / f"d{d // 50}" / f"e{d}"
        sub.mkdir(parents=True)
        for f in range(20):
            (sub / f"f{f}").write_text("")
    audit = GitAudit(ws)
    audit.look(judge=False)
    runs = []
    for _ in range(20):
        t = time.perf_counter()
        audit.look(judge=False)
        assert audit.look(judge=True) == []
        runs.append(time.perf_counter() - t)
    runs.sort()
    assert runs[len(runs) // 2] < 0.05  # measured ~2 ms here; generous for slow CI machines
