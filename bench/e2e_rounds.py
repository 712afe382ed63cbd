"""Whole-process cost per tool round and per streamed event: print mode against the least Python
doing the same wire work, side by side in one run.

A loopback OpenAI-compatible server (its own process, HTTP/1.1 keep-alive, chunked SSE) plays a
model: with model id ``rounds-N`` it asks for ``read {"path": "f.txt"}`` until the request carries N
tool results, then answers; with ``events-N`` it streams an answer of N text deltas. Each side runs
as a fresh process:

- ``owltui -p go --provider openai --model rounds-N --yes --no-session`` (print mode, text output);
- the floor: sync httpx, the same request shape (system prompt and tool schemas captured from
  OwlTUI's first request, so both send the same bytes of context), SSE lines parsed with
  ``json.loads``, the tool run with ``open().read()`` and numbered lines, messages appended.

The marginal cost of one more round is (T(150) - T(10)) / 140, of one more event
(T(40,000) - T(4,000)) / 36,000: start-up cancels out. Runs alternate (owltui, floor, owltui, …);
the ratio is reported per pair with its median and spread, with the load average. Peak RSS of the
150-round runs (each child's own ``ru_maxrss``) is compared the same way. Measure with .pyc files
present (the driver unsets ``PYTHONDONTWRITEBYTECODE`` for its children).

    python bench/e2e_rounds.py [--pairs 5] [--rounds 10 150] [--events 4000 40000]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scripted_wire as wire

# ---------------------------------------------------------------------------------------------
# the server (runs in its own process: python bench/e2e_rounds.py --serve DIR)


class Rounds(wire.ScriptedHandler):
    """``rounds-N``: a ``read`` call until the request carries N tool results, then an answer;
    ``events-N``: an answer of N text deltas. The first request is kept for the floor's shape."""

    model_id = "rounds-10"
    first: Path

    def frames(self, raw: bytes) -> list[bytes]:
        data = json.loads(raw)
        if not self.first.exists():
            self.first.write_bytes(raw)
        kind, _, n = str(data.get("model", "rounds-1")).partition("-")
        target, done = int(n or 1), len(wire.tool_results(data))
        if kind == "rounds" and done < target:
            return wire.tool_call(f"call_{done}", "read", {"path": "f.txt"})
        if kind == "events":
            return wire.answer(*(f"w{i} " for i in range(target)))
        return wire.answer("All done.")


def serve(directory: Path) -> None:
    Rounds.first = directory / "first_request.json"
    wire.serve(Rounds, directory)


# ---------------------------------------------------------------------------------------------
# the floor client (runs in its own process: python bench/e2e_rounds.py --floor URL MODEL DIR)


def read_numbered(name: str, args: dict[str, Any]) -> str:
    with open(args["path"], encoding="utf-8") as fh:
        return "".join(f"{i}\t{line}" for i, line in enumerate(fh, 1))


def floor(url: str, model: str, directory: Path) -> None:
    shape = json.loads((directory / "first_request.json").read_text())
    wire.floor(url, model, shape, read_numbered)


# ---------------------------------------------------------------------------------------------
# the driver


PEAKS: dict[str, list[float]] = {}


def timed(cmd: list[str], env: dict[str, str], cwd: Path, label: str = "") -> float:
    """Wall time of one run; its peak RSS (MB: ru_maxrss of that child alone, from wait4) is noted
    under ``label``."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            raise subprocess.CalledProcessError(proc.returncode, cmd, stderr=err.read())
    if label:
        PEAKS.setdefault(label, []).append(usage.ru_maxrss / 1024)
    return elapsed


def main() -> None:
    ap = wire.arguments()
    ap.add_argument("--events", type=int, nargs=2, default=(4000, 40000))
    args = ap.parse_args()
    if wire.child_role(args, serve, floor):
        return

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "f.txt").write_text("".join(f"line {i} of a small file\n" for i in range(20)))
        server, url = wire.start_server(__file__, work)
        try:
            env = wire.bench_env(work)

            def ours(model: str) -> float:
                return timed([*wire.print_mode(url), "--model", model], env, work, f"owltui {model}")

            def theirs(model: str) -> float:
                return timed(
                    [sys.executable, __file__, "--floor", url, model, str(work)], env, work, f"floor {model}"
                )

            ours("rounds-1")  # warm caches; captures the request shape for the floor
            for label, (lo, hi), kind in (("round", args.rounds, "rounds"), ("event", args.events, "events")):
                ratios: list[float] = []
                per_ours: list[float] = []
                per_floor: list[float] = []
                for _ in range(args.pairs):
                    a = (ours(f"{kind}-{hi}") - ours(f"{kind}-{lo}")) / (hi - lo)
                    b = (theirs(f"{kind}-{hi}") - theirs(f"{kind}-{lo}")) / (hi - lo)
                    per_ours.append(a * 1e6)
                    per_floor.append(b * 1e6)
                    ratios.append(a / b)
                print(
                    f"per {label}: owltui {statistics.median(per_ours):8.1f} µs, floor "
                    f"{statistics.median(per_floor):8.1f} µs, ratio median {statistics.median(ratios):.2f}× "
                    f"(spread {min(ratios):.2f}–{max(ratios):.2f}×, {args.pairs} alternating pairs, "
                    f"load {os.getloadavg()[0]:.2f})",
                    flush=True,
                )
            hi = args.rounds[1]
            ours_rss, floor_rss = PEAKS[f"owltui rounds-{hi}"], PEAKS[f"floor rounds-{hi}"]
            rss = [a / b for a, b in zip(ours_rss, floor_rss, strict=True)]
            print(
                f"peak RSS over {hi} rounds: owltui {statistics.median(ours_rss):.1f} MB, floor "
                f"{statistics.median(floor_rss):.1f} MB, ratio median {statistics.median(rss):.2f}× "
                f"(spread {min(rss):.2f}–{max(rss):.2f}×)"
            )
        finally:
            server.kill()


if __name__ == "__main__":
    main()
