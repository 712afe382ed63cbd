"""What one ``bash true`` tool call costs, and where the time goes.

    PYTHONPATH=/work/main python bench/bash_cost.py [--runs 50] [--files 1,10000]

For each repository size (a git repository of N committed files, 20 to a directory) four things run
alternately, ``--runs`` times each: a bare ``subprocess.run(["sh", "-c", "true"])`` (the floor), the
``bash`` tool's ``run`` with the sandbox off, and with the default workspace-write sandbox (Landlock,
namespaces, seccomp, the git binds and the git check before and after the command) started by the
fork server (the default) and the old way (``Popen(preexec_fn=...)``, a fork of this process), all
with a job manager as in a session. ``--ballast-mb`` makes this process the size of a TUI session.
It prints medians with p10/p90, the ratios to the floor, and a breakdown: the time spent in the
pieces of the path (the git check before the command, the plan of binds, starting the process —
which includes the child's sandbox set-up, since both ``Popen`` and the fork server wait for the
``exec`` —, the wait for it to end, the escapee scan, the git check after it), as medians. The permission review of the call (``PermissionPolicy.review``) is
timed apart, as it runs in the loop before the tool.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolCall
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.policy.sandbox.child import capabilities
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.tools.exec import bash as bash_mod
from owltui.tools.exec import proc as proc_mod
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.reaper import REAPER
from owltui.tools.exec.spawn import SPAWNER, Spawner
from owltui.tools.jobs.manager import JobManager

PIECES: dict[str, float] = {}


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            PIECES[name] = PIECES.get(name, 0.0) + (time.perf_counter() - t) * 1000

    return wrapper


def _atimed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return await fn(*args, **kw)
        finally:
            PIECES[name] = PIECES.get(name, 0.0) + (time.perf_counter() - t) * 1000

    return wrapper


def _wrap(owner: object, attr: str, name: str, timer: Callable[..., Any] = _timed) -> None:
    setattr(owner, attr, timer(name, getattr(owner, attr)))


def _instrument() -> None:
    _wrap(SandboxPolicy, "refresh_git", "git check before")
    _wrap(SandboxPolicy, "_mounts", "plan of binds")
    _wrap(SandboxPolicy, "audit_git", "git check after")
    _wrap(subprocess.Popen, "__init__", "Popen (fork, child set-up, exec)")
    BashTool._follow = staticmethod(_atimed("wait for the end", BashTool._follow))  # type: ignore[method-assign]
    _wrap(bash_mod, "_let_escapees_exec", "escapee scan", _atimed)
    _wrap(bash_mod, "_audited", "git check after, in a thread", _atimed)
    _wrap(JobManager, "collect_escaped", "jobs.collect_escaped")
    _wrap(JobManager, "watch", "jobs.watch")
    _wrap(SandboxPolicy, "plan", "plan (git check, binds)")
    _wrap(Spawner, "start", "fork server (child set-up, exec)")
    _wrap(SandboxPolicy, "child_env", "child_env")
    _wrap(proc_mod, "child_env", "child_env")
    _wrap(proc_mod, "become_subreaper", "become_subreaper")
    _wrap(REAPER, "register", "REAPER.register")
    _wrap(threading.Thread, "start", "Thread.start")
    _wrap(proc_mod.Proc, "__init__", "Proc start (total)")


def _repo(root: Path, files: int) -> Path:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(files):
        d = root / f"d{i // 400}" / f"e{i // 20 % 20}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"{i}\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"],
        check=True,
    )
    return root


def _summary(name: str, ms: list[float], floor: float) -> str:
    q = statistics.quantiles(ms, n=10)
    med = statistics.median(ms)
    return f"  {name:<22} median {med:6.2f} ms  p10 {q[0]:6.2f}  p90 {q[-1]:6.2f}  {med / floor:5.2f}x floor"


async def _measure(ws: Path, spill: Path, runs: int) -> None:
    on = SandboxPolicy("workspace-write", ws)
    policies = {
        "sandbox off": (SandboxPolicy("off", ws), True),
        "sandbox on": (on, True),
        "on, preexec": (on, False),
    }
    tool = BashTool()
    params = BashParams(command="true", timeout=None)
    times: dict[str, list[float]] = {"floor (sh -c true)": [], **{k: [] for k in policies}}
    pieces: dict[str, dict[str, list[float]]] = {k: {} for k in policies}
    review: list[float] = []
    perms = PermissionPolicy(ws, "ask", config_dir=spill / "cfg")
    call = ToolCall(id="c", name="bash", arguments={"command": "true"})

    jobs = JobManager(lambda _e: None, spill_dir=spill)
    try:

        async def one(policy: SandboxPolicy, server: bool) -> float:
            SPAWNER.enabled = server
            ctx = ToolContext(ws, CancelToken(), services=Services(sandbox=policy, jobs=jobs))
            t = time.perf_counter()
            out = await tool.run(params, ctx)
            took = (time.perf_counter() - t) * 1000
            assert not out.is_error, out.content
            return took

        for policy, server in policies.values():  # warm-up: the plans are cached per policy
            await one(policy, server)
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(["sh", "-c", "true"], check=True)  # noqa: ASYNC221 - the floor blocks, as a shell would
            times["floor (sh -c true)"].append((time.perf_counter() - t) * 1000)
            for name, (policy, server) in policies.items():
                PIECES.clear()
                times[name].append(await one(policy, server))
                for piece, took in PIECES.items():
                    pieces[name].setdefault(piece, []).append(took)
            t = time.perf_counter()
            perms.review(call)
            review.append((time.perf_counter() - t) * 1000)
    finally:
        await jobs.shutdown()
    floor = statistics.median(times["floor (sh -c true)"])
    for name, ms in times.items():
        print(_summary(name, ms, floor))
    off = statistics.median(times["sandbox off"])
    for name in ("sandbox on", "on, preexec"):
        print(
            f"  added by the sandbox ({name}) {statistics.median(times[name]) - off:6.2f} ms (median - median off)"
        )
    print(f"  breakdown (median ms per call; p90)       {'      '.join(f'{k:<13}' for k in policies)}")
    names = dict.fromkeys(n for variant in pieces.values() for n in variant)
    for name in names:
        cells = []
        for variant in pieces.values():
            got = variant.get(name)
            cells.append(
                f"{statistics.median(got):6.2f} {statistics.quantiles(got, n=10)[-1]:6.2f}"
                if got
                else " " * 13
            )
        print(f"    {name:<40} {'      '.join(cells)}")
    print(f"  permission review (in the loop, before the tool) {statistics.median(review):6.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--files", default="1,10000")
    ap.add_argument("--ballast-mb", type=int, default=0, help="live memory added (a TUI session's size)")
    args = ap.parse_args()
    ballast = [bytearray(1024) for _ in range(args.ballast_mb * 1024)]
    caps = capabilities()
    print(f"kernel: Landlock ABI {caps.landlock_abi}, namespaces {caps.namespaces}, userns {caps.userns}")
    _instrument()
    for n in (int(x) for x in args.files.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            ws = _repo(Path(tmp) / "ws", n)
            spill = Path(tmp) / "spill"
            spill.mkdir()
            print(
                f"git repository of {n} files ({sum(1 for p in ws.rglob('*') if p.is_dir())} directories with .git's):"
            )
            anyio.run(_measure, ws, spill, args.runs)
    del ballast


if __name__ == "__main__":
    main()
