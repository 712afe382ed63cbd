"""Memory held per tool round in print mode and RPC mode against the session file's bytes per round.

One turn of N rounds through the real runtime (``build_runtime`` as each mode builds it): every
model response is one ``ls`` call until the request carries N tool results, then a short answer.
Two models play it: ``ScriptedModel`` in-process, and the OpenAI-compatible provider against a
loopback server in its own process (HTTP keep-alive, chunked SSE, so the wire cache is in play).

Each measurement is a fresh child process. With ``tracemalloc`` on, snapshots are taken at the
tool end of round 100 and of round N (after a collection) and their difference divided by N - 100
is the memory per round; the session file's size divided by N its bytes per round; their ratio the
figure the target bounds. The floor is the least code holding the same history: the session
file's lines kept as ``json.loads`` dicts, measured the same way in the same child. A second child
without ``tracemalloc`` gives the resident set growth per round (``/proc/self/statm``) and the
client's time per round between rounds 100 and N. Runs alternate print, RPC, print, ...; medians
and spreads are over the runs.

    PYTHONPATH=/work/main python bench/memory_per_round.py [--runs 3] [--rounds 1000 3000]
        [--models scripted openai]

Measured (2 cores, load 0.5-1; held per round / file bytes per round; 2 runs each): items of one
shape share pydantic's set of given field names (216 B per instance before: four per round):
scripted, print and RPC, 1,000 and 3,000 rounds: 3.18-3.21x (1,868-1,882 B against 586 B; before
4.65-4.69x, 2,732-2,747 B, and 7.27-7.30x, 4,268-4,282 B before items left their defaults unset);
OpenAI-compatible, 1,000 rounds: 3.59-4.04x (2,151-2,419 B against 598 B; the same tree before the
change 5.04x, 3,014-3,018 B): what swings by ~270 B between runs is whether the last request body
(one copy of the wire, ~240 B a round) is still alive at the snapshot. Resident growth, scripted:
1.93 kB a round (before 2.87 kB). Client time per round, scripted print: 1.80 ms [1.70-1.90] at
1,000 rounds, 2.29 ms [2.18-2.41] at 3,000 (sharing the set costs ~0.7 us per item built).
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scripted_wire as wire

FIRST = 100  # rounds before the first snapshot: start-up and warm caches are not per-round cost


class Rounds(wire.ScriptedHandler):
    """Model ``rounds-N``: an ``ls`` call until the request carries N tool results, then an answer
    (the body is searched, not parsed: the server's cost stays small beside the client's)."""

    model_id = "rounds-10"

    def frames(self, raw: bytes) -> list[bytes]:
        found = re.search(rb'"model":"rounds-(\d+)"', raw)
        done = raw.count(b'"role":"tool"')
        if done < (int(found.group(1)) if found else 1):
            return wire.tool_call(f"call_{done}", "ls", {"path": "."})
        return wire.answer("All done.")


def serve(directory: Path) -> None:
    wire.serve(Rounds, directory)


def _resident() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Probe:
    """Counts tool ends; takes the measurements at round FIRST and at the last round."""

    def __init__(self, rounds: int, traced: bool) -> None:
        self.rounds, self.traced, self.seen = rounds, traced, 0
        self.marks: dict[int, tuple[Any, int, float]] = {}

    def tool_end(self) -> None:
        self.seen += 1
        if self.seen in (FIRST, self.rounds):
            gc.collect()
            snap = tracemalloc.take_snapshot() if self.traced else None
            self.marks[self.seen] = (snap, _resident(), time.perf_counter())


class Discard(io.StringIO):
    """stderr for print mode's progress lines, keeping none of them."""

    def write(self, text: str) -> int:
        return len(text)


class Sink(io.RawIOBase):
    """RPC's stdout: counts tool ends, answers ``agent_end`` with ``quit``."""

    def __init__(self, probe: Probe, command_fd: int) -> None:
        self.probe, self.command_fd = probe, command_fd

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raw = bytes(data)
        if b'"type":"tool_end"' in raw:
            self.probe.tool_end()
        if b'"type":"agent_end"' in raw:
            os.write(self.command_fd, b'{"type": "quit"}\n')
        return len(raw)


def child(mode: str, model_kind: str, rounds: int, traced: bool, url: str) -> dict[str, Any]:
    import anyio

    from owltui.agent.events import ToolEnd
    from owltui.agent.messages import ToolResult
    from owltui.agent.model import ModelRequest
    from owltui.modes.print_mode import print_run
    from owltui.modes.rpc import rpc_main
    from owltui.session.runtime.options import Options
    from owltui.session.runtime.runtime import Runtime
    from owltui.testing.scripted import Call, ScriptedModel, Step

    tmp = Path(tempfile.mkdtemp(prefix="owl-mem-"))
    ws = tmp / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}.txt").write_text("x\n")
    env = {"HOME": str(tmp), "XDG_DATA_HOME": str(tmp / "data"), "XDG_CONFIG_HOME": str(tmp / "cfg")}
    env |= {"PATH": os.environ["PATH"], "OPENAI_API_KEY": "x"}
    options = Options(workspace=ws, yes=True, max_rounds=rounds + 10)
    model: Any = None
    if model_kind == "openai":
        options.provider, options.base_url, options.model = "openai", url, f"rounds-{rounds}"
    else:

        def step(request: ModelRequest) -> Step:
            done = sum(1 for m in request.messages if isinstance(m, ToolResult))
            return Step(calls=[Call("ls", {"path": "."})]) if done < rounds else Step(text="All done.")

        class Forgetful(ScriptedModel):
            async def stream(self, request: ModelRequest) -> Any:
                self.requests.clear()  # the double's own log is not the product's memory
                async for ev in super().stream(request):
                    yield ev

        model = Forgetful(step, record=False)
    probe = Probe(rounds, traced)
    if traced:
        tracemalloc.start()

    async def run() -> int:
        if mode == "print":

            def prepare(runtime: Runtime) -> None:
                runtime.emitter.subscribe(lambda ev: probe.tool_end() if isinstance(ev, ToolEnd) else None)

            return await print_run(
                options,
                "go",
                model=model,
                env=env,
                out=io.BytesIO(),
                err=Discard(),
                handle_signals=False,
                prepare=prepare,
            )
        read_fd, write_fd = os.pipe()
        os.write(write_fd, b'{"type": "prompt", "text": "go"}\n')
        return await rpc_main(options, model=model, env=env, stdin_fd=read_fd, stdout=Sink(probe, write_fd))  # type: ignore[arg-type]

    code = anyio.run(run)
    files = list((tmp / "data").rglob("*.jsonl"))
    file_bytes = sum(f.stat().st_size for f in files)
    (s0, r0, t0), (s1, r1, t1) = probe.marks[FIRST], probe.marks[rounds]
    out: dict[str, Any] = {"code": code, "file_per_round": file_bytes / rounds}
    out["rss_per_round"] = (r1 - r0) / (rounds - FIRST)
    out["ms_per_round"] = (t1 - t0) * 1000 / (rounds - FIRST)
    if traced:
        held = sum(d.size_diff for d in s1.compare_to(s0, "filename"))
        out["traced_per_round"] = held / (rounds - FIRST)
        lines = b"".join(f.read_bytes() for f in files).splitlines()
        cut = len(lines) * FIRST // rounds
        gc.collect()
        before = tracemalloc.take_snapshot()
        kept = [json.loads(line) for line in lines[cut:]]
        after = tracemalloc.take_snapshot()
        out["floor_per_round"] = sum(d.size_diff for d in after.compare_to(before, "filename")) / (
            rounds - FIRST
        )
        del kept
    return out


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.0f} [{min(values):.0f}-{max(values):.0f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, nargs="+", default=[1000, 3000])
    ap.add_argument("--models", nargs="+", default=["scripted", "openai"])
    ap.add_argument("--serve", type=Path)
    ap.add_argument("--child", nargs=5)
    args = ap.parse_args()
    if args.serve:
        return serve(args.serve)
    if args.child:
        mode, kind, rounds, traced, url = args.child
        print(json.dumps(child(mode, kind, int(rounds), traced == "1", url)))
        return None
    work = Path(tempfile.mkdtemp(prefix="owl-mem-srv-"))
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(work)])
    try:
        while not (work / "port").exists():
            time.sleep(0.05)
        url = f"http://127.0.0.1:{(work / 'port').read_text()}/v1"
        print(
            f"load average {os.getloadavg()[0]:.2f}; per round after round {FIRST}; bytes, median [min-max]"
        )
        for kind in args.models:
            for rounds in args.rounds:
                results: dict[str, list[dict[str, Any]]] = {"print": [], "rpc": []}
                for _ in range(args.runs):
                    for mode in ("print", "rpc"):
                        row: dict[str, Any] = {}
                        for traced in ("1", "0"):
                            cmd = [sys.executable, __file__, "--child", mode, kind, str(rounds), traced, url]
                            row |= json.loads(
                                subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                            )
                        results[mode].append(row)
                for mode, rows in results.items():
                    col = {k: [r[k] for r in rows] for k in rows[0]}
                    ratio = [r["traced_per_round"] / r["file_per_round"] for r in rows]
                    floor = [r["traced_per_round"] / r["floor_per_round"] for r in rows]
                    print(
                        f"{kind:8} {mode:5} {rounds:5} rounds: held {_spread(col['traced_per_round'])}"
                        f"  file {_spread(col['file_per_round'])}  held/file {statistics.median(ratio):.2f}"
                        f" [{min(ratio):.2f}-{max(ratio):.2f}]  floor (file lines as dicts)"
                        f" {_spread(col['floor_per_round'])} held/floor {statistics.median(floor):.2f}"
                        f"  rss {_spread(col['rss_per_round'])}  ms/round {statistics.median(col['ms_per_round']):.2f}"
                        f" [{min(col['ms_per_round']):.2f}-{max(col['ms_per_round']):.2f}]",
                        flush=True,
                    )
    finally:
        server.kill()
    return None


if __name__ == "__main__":
    main()
