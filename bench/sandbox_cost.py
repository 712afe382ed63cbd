"""What the kernel sandbox adds to each command: ``true`` started through ``Proc`` (the bash tool's
path: process group, pipe, reader thread) with and without the sandbox, 50 runs each, interleaved.

    PYTHONPATH=/work/main python bench/sandbox_cost.py [--runs 50] [--ballast-mb 0] [--tui]

Each sandbox (Landlock only; Landlock + namespaces + the git binds) runs two ways: started by the
fork server (``spawn.SPAWNER``, the default) and the old way, ``Popen(preexec_fn=...)``, which forks
the parent. ``--tui`` imports the TUI first and ``--ballast-mb`` adds live memory, so the parent is
the size of a real session (a fork costs more as the parent grows; the server's start does not).
Also reports the fork server's resident size and the one-time probe (``capabilities()``).
Target: median added cost per command under 5 ms.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from owltui.policy.sandbox import kernel as sandbox
from owltui.policy.sandbox.child import capabilities
from owltui.tools.exec.proc import Proc
from owltui.tools.exec.spawn import SPAWNER


def _probe_ms() -> float:
    """A fresh interpreter's first ``capabilities()`` (ctypes import + Landlock + namespace probe)."""
    code = (
        "import time; from owltui.policy.sandbox.kernel import capabilities; t = time.perf_counter(); "
        "capabilities(); print((time.perf_counter() - t) * 1000)"
    )
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(5)
    ]
    return statistics.median(runs)


def _one(ws: Path, spill: Path, policy: sandbox.SandboxPolicy | None, server: bool = True) -> float:
    SPAWNER.enabled = server
    t = time.perf_counter()
    proc = Proc("true", ws, spill, sandbox=policy)
    proc._thread.join()
    assert proc.exit_code == 0, proc.sink.preview()
    return (time.perf_counter() - t) * 1000


def _summary(name: str, ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=10)
    return f"{name:<26} median {statistics.median(ms):6.2f} ms   p10 {q[0]:6.2f}   p90 {q[-1]:6.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--ballast-mb", type=int, default=0)
    ap.add_argument("--tui", action="store_true", help="import the TUI first (a real session's size)")
    args = ap.parse_args()
    probe = _probe_ms()
    if args.tui:
        import owltui.session.runtime.runtime
        import owltui.ui.app  # noqa: F401
    ballast = [bytearray(1024) for _ in range(args.ballast_mb * 1024)]
    caps = capabilities()
    print(
        f"kernel: Landlock ABI {caps.landlock_abi}, namespaces {'yes' if caps.namespaces else 'no'} "
        f"({'user namespace' if caps.userns else 'mount namespace as root'})"
    )
    print(
        f"parent max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
        f"(ballast {len(ballast) // 1024} MB)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ws, spill = Path(tmp) / "ws", Path(tmp) / "spill"
        ws.mkdir()
        subprocess.run(["git", "init", "-q", str(ws)], check=True)  # .git/config and hooks to protect
        landlock = sandbox.SandboxPolicy("workspace-write", ws, namespaces=False)
        full = sandbox.SandboxPolicy("workspace-write", ws)
        variants: dict[str, tuple[sandbox.SandboxPolicy | None, bool]] = {
            "without sandbox": (None, True),
            "landlock, server": (landlock, True),
            "landlock, preexec": (landlock, False),
            "landlock+ns, server": (full, True),
            "landlock+ns, preexec": (full, False),
        }
        times: dict[str, list[float]] = {name: [] for name in variants}
        t = time.perf_counter()
        _one(ws, spill, full, True)  # the first sandboxed command starts the fork server
        first = (time.perf_counter() - t) * 1000
        for policy, server in variants.values():  # warm-up: plans are cached per policy
            _one(ws, spill, policy, server)
        for _ in range(args.runs):
            for name, (policy, server) in variants.items():
                times[name].append(_one(ws, spill, policy, server))
        rss = _rss_mb(SPAWNER.server_pid)
    print(f"fork server: resident {rss:.1f} MB; first sandboxed command (starts it) {first:.1f} ms")
    for name, ms in times.items():
        print(_summary(name, ms))
    base = statistics.median(times["without sandbox"])
    for name in list(times)[1:]:
        print(f"added by {name:<21} {statistics.median(times[name]) - base:6.2f} ms (median)")
    for kind in ("landlock", "landlock+ns"):
        ratio = statistics.median(times[f"{kind}, server"]) / statistics.median(times[f"{kind}, preexec"])
        print(f"{kind:<12} server / preexec {ratio:5.2f}x")
    print(f"start-up probe (once)      {probe:6.2f} ms")


def _rss_mb(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main()
