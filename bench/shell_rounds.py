"""Whole-process cost of one more ``bash ls`` tool round and one more ``ls`` tool round: OwlTUI (print
mode, the sandbox on) against the least Python doing the same wire work and, where it is installed,
pi (``@mariozechner/pi-coding-agent``), all against the same scripted server in one run.

A loopback OpenAI-compatible chat-completions server (its own process, HTTP/1.1 keep-alive, chunked
SSE) plays a model: with model id ``bash-N`` it asks for ``bash {"command": "ls"}``, with ``ls-N``
for ``ls {"path": "."}``, until the request carries N tool results, then answers. The workspace is
a small git repository (20 committed files). Each side runs as a fresh process:

- ``owltui -p go --provider openai --model bash-N --base-url URL --yes --no-session --max-rounds 1000``
  with the default sandbox (``workspace-write``: Landlock, namespaces, seccomp, the git check). Before
  measuring, one probe run checks that it is enforced: its ``bash`` call must be refused a write
  outside the workspace and run with ``NoNewPrivs`` and a seccomp filter, or the bench stops;
- the floor: sync httpx, OwlTUI's own first request's system prompt and tool schemas (the same
  bytes of context), SSE lines parsed with ``json.loads``, the tool run as
  ``subprocess.run(["bash", "-c", "ls"])`` or ``os.listdir``, messages appended;
- pi: ``pi -p go --provider bench --model bash-N --tools bash,ls --no-session``, the provider in a
  ``models.json`` (api ``openai-completions``) under a temporary ``HOME`` and
  ``PI_CODING_AGENT_DIR``. Skipped with one line when ``--pi PATH`` does not exist.

The marginal cost of a round is (T(150) - T(10)) / 140: start-up cancels out. Runs alternate (owltui,
floor, pi, owltui, ...); the ratios owltui/pi and owltui/floor are taken per pair and reported as
median and spread (min-max), with the 1-minute load average before and after each line (the bench
itself keeps about one core busy). Measure on a quiet machine (load below ~1.5 on 2 cores); the
driver unsets ``PYTHONDONTWRITEBYTECODE`` for its children.

    .venv/bin/python bench/shell_rounds.py [--pairs 5] [--rounds 10 150] [--tools bash,ls] [--pi PATH]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scripted_wire as wire
from e2e_rounds import timed

PI_DEFAULT = Path.home() / ".cache/owltui-bench/pi/node_modules/.bin/pi"
CALLS = {"bash": ("bash", {"command": "ls"}), "ls": ("ls", {"path": "."})}

# ---------------------------------------------------------------------------------------------
# the server (its own process: python bench/shell_rounds.py --serve DIR)


class Shell(wire.ScriptedHandler):
    """``bash-N`` / ``ls-N``: that call until the request carries N tool results, then an answer;
    ``probe-1``: one ``bash`` call running ``DIR/probe_command``, its result kept in
    ``DIR/probe_result.json``. The first request of each kind is kept for the floor's shape."""

    model_id = "bash-10"
    directory: Path

    def frames(self, raw: bytes) -> list[bytes]:
        data = json.loads(raw)
        kind, _, n = str(data.get("model", "bash-1")).partition("-")
        first = self.directory / f"first_{kind}.json"  # OwlTUI runs first: the floor copies its shape
        if not first.exists():
            first.write_bytes(raw)
        results = wire.tool_results(data)
        if kind == "probe" and results:
            (self.directory / "probe_result.json").write_text(json.dumps(results[-1].get("content")))
        if len(results) >= int(n or 1) or kind not in (*CALLS, "probe"):
            return wire.answer("All done.")
        if kind == "probe":
            return wire.tool_call(
                "call_0", "bash", {"command": (self.directory / "probe_command").read_text()}
            )
        return wire.tool_call(f"call_{len(results)}", *CALLS[kind])


def serve(directory: Path) -> None:
    Shell.directory = directory
    wire.serve(Shell, directory)


# ---------------------------------------------------------------------------------------------
# the floor client (its own process: python bench/shell_rounds.py --floor URL MODEL DIR)


def run_tool(name: str, args: dict[str, Any]) -> str:
    if name == "bash":
        done = subprocess.run(["bash", "-c", args["command"]], capture_output=True, text=True)
        return done.stdout + done.stderr
    return "\n".join(sorted(os.listdir(args.get("path") or ".")))


def floor(url: str, model: str, directory: Path) -> None:
    shape = json.loads((directory / f"first_{model.partition('-')[0]}.json").read_text())
    wire.floor(url, model, shape, run_tool)


# ---------------------------------------------------------------------------------------------
# the driver


def _workspace(root: Path) -> None:
    root.mkdir()
    for i in range(20):
        (root / f"file{i:02d}.txt").write_text(f"line {i}\n")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hi')\n")
    git = ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)


def _pi_home(home: Path, url: str, models: list[str]) -> dict[str, str]:
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    provider = {
        "baseUrl": url,
        "api": "openai-completions",
        "apiKey": "x",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": m, "reasoning": False} for m in models],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"bench": provider}}, indent=2))
    return {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
    }


def _probe(cmd: list[str], env: dict[str, str], work: Path, served: Path, outside: Path) -> str:
    """One OwlTUI run whose bash call tries to write outside the workspace: the sandbox must refuse."""
    target = outside / "written-by-a-command"
    (served / "probe_target").write_text(str(target))  # read at run time: the kernel must refuse it
    (served / "probe_command").write_text(
        f"grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; "
        f'(echo x > "$(cat {served / "probe_target"})") 2>/dev/null && echo WROTE || echo REFUSED'
    )
    done = subprocess.run([*cmd, "--model", "probe-1"], env=env, cwd=work, capture_output=True, text=True)
    result = json.loads((served / "probe_result.json").read_text())
    text = result if isinstance(result, str) else json.dumps(result)
    fields = dict(line.split(":", 1) for line in text.splitlines() if line.startswith(("NoNew", "Seccomp")))
    enforced = (
        "REFUSED" in text
        and not target.exists()
        and fields.get("NoNewPrivs", "").strip() == "1"
        and fields.get("Seccomp", "").strip() == "2"
    )
    notes = " | ".join(ln for ln in done.stderr.splitlines() if ln.startswith("owltui:")) or "none"
    if not enforced:
        sys.exit(f"the sandbox is not enforced in the OwlTUI run (tool result {text!r}; stderr: {notes})")
    return (
        f"sandbox: enforced in the run (a write outside the workspace refused, NoNewPrivs 1, seccomp "
        f"filter on); OwlTUI start-up notes: {notes}"
    )


def _outside_root() -> Path:
    """Where the probe's write goes: under the user's home, outside every place the sandbox opens."""
    root = Path.home() / ".cache" / "owltui-bench"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}× (spread {min(values):.2f}–{max(values):.2f}×)"


def main() -> None:
    ap = wire.arguments()
    ap.add_argument("--tools", default="bash,ls", help="which rounds to measure (bash, ls)")
    ap.add_argument("--pi", type=Path, default=PI_DEFAULT, help="the pi executable")
    args = ap.parse_args()
    if wire.child_role(args, serve, floor):
        return

    lo, hi = args.rounds
    kinds = [k for k in args.tools.split(",") if k]
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=_outside_root()) as outside:
        base = Path(tmp)
        work, served = base / "ws", base / "served"
        _workspace(work)
        served.mkdir()
        server, url = wire.start_server(__file__, served)
        try:
            env = wire.bench_env(base, drop=("OWLTUI_SANDBOX",))
            ours_cmd = wire.print_mode(url)
            pi = args.pi if args.pi.exists() else None
            pi_env = {
                **env,
                **_pi_home(base / "pi-home", url, [f"{k}-{n}" for k in kinds for n in (1, lo, hi)]),
            }

            def ours(model: str) -> float:
                return timed([*ours_cmd, "--model", model], env, work)

            def the_floor(model: str) -> float:
                return timed([sys.executable, __file__, "--floor", url, model, str(served)], env, work)

            def theirs(model: str) -> float:
                cmd = [str(pi), "-p", "go", "--provider", "bench", "--model", model]
                return timed([*cmd, "--tools", "bash,ls", "--no-session"], pi_env, work)

            print(_probe(ours_cmd, env, work, served, Path(outside)), flush=True)
            if pi is None:
                print(f"pi: not found at {args.pi}; skipped (install @mariozechner/pi-coding-agent)")
            sides = {"owltui": ours, "floor": the_floor, **({"pi": theirs} if pi else {})}
            for kind in kinds:
                for run in sides.values():  # warm caches; OwlTUI's first request is the floor's shape
                    run(f"{kind}-1")
                per: dict[str, list[float]] = {name: [] for name in sides}
                load = os.getloadavg()[0]
                for _ in range(args.pairs):
                    for name, run in sides.items():
                        per[name].append((run(f"{kind}-{hi}") - run(f"{kind}-{lo}")) / (hi - lo) * 1000)
                label = "bash ls" if kind == "bash" else kind
                cells = ", ".join(f"{name} {statistics.median(ms):6.2f} ms" for name, ms in per.items())
                ratios = [
                    f"owltui/floor {_fmt([a / b for a, b in zip(per['owltui'], per['floor'], strict=True)])}"
                ]
                if "pi" in per:
                    ratios.insert(
                        0, f"owltui/pi {_fmt([a / b for a, b in zip(per['owltui'], per['pi'], strict=True)])}"
                    )
                print(
                    f"`{label}` round: {cells}; {'; '.join(ratios)} "
                    f"({args.pairs} alternating pairs, rounds {lo}->{hi}, load {load:.2f} before, "
                    f"{os.getloadavg()[0]:.2f} after, the bench's own processes included)",
                    flush=True,
                )
        finally:
            server.kill()
            server.wait()
            shutil.rmtree(served, ignore_errors=True)


if __name__ == "__main__":
    main()
