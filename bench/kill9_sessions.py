"""kill -9 at random points of a scripted run with a concurrent batch; then check the session.

    python bench/kill9_sessions.py [--runs 50] [--with-hook] [--seed N]

Each run is ``owltui -p --output jsonl --yes`` against a loopback OpenAI-compatible server, scripted:
``bash sleep`` that outlives its 1 s timeout (job 1), then one read-only batch run concurrently,
``read`` + ``job_output wait=4`` (the read's ``tool_end`` is out while the batch is still waiting),
then a final answer. The process is killed with SIGKILL after a random number of output lines plus a
random delay. Then: the session file loads (corrupt or torn lines skipped), it starts with a user
message, every call whose ``tool_end`` was emitted has its result in the conversation, and
``owltui -p -c`` continues it (exit 0, a request that starts with a user message).

``--with-hook`` runs the CLI with the one call the loop needs for early persistence patched in (what
``Ledger.finished`` should do before emitting ``tool_end``)::

    early = getattr(self.history, "record_result_early", None)
    if early is not None:
        early(result)

Without it, a result finished inside a concurrent group is saved only when the whole group ends.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from owltui.agent.messages import ToolResult, UserMessage  # noqa: E402
from owltui.session.paths import sessions_dir  # noqa: E402
from owltui.session.store.store import SessionStore  # noqa: E402
from tests.cli.fake_openai import FakeOpenAI, Turn  # noqa: E402
from tests.cli.helpers import cli_env, openai_args  # noqa: E402

HOOKED = """
import sys
from owltui.agent import ledger
_finished = ledger.Ledger.finished
def finished(self, call, result, details):
    early = getattr(self.history, "record_result_early", None)
    if early is not None:
        early(result)
    _finished(self, call, result, details)
ledger.Ledger.finished = finished
from owltui.cli import main
sys.exit(main())
"""


def script() -> list[Turn]:
    return [
        Turn(text="Starting a job.", calls=[("bash", {"command": "sleep 3", "timeout": 1})]),
        Turn(
            text="Reading while waiting.",
            calls=[("read", {"path": "hello.txt"}), ("job_output", {"job_id": "1", "wait": 4})],
        ),
        Turn(text="All done."),
    ]


def one_run(fake: FakeOpenAI, base: Path, n: int, rng: random.Random, hook: bool) -> tuple[bool, str]:
    ws = base / f"ws{n}"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello\n")
    env = cli_env(base / f"home{n}")
    with fake._lock:
        fake.turns.clear()
    fake.add(*script())
    cmd = [sys.executable, "-c", HOOKED] if hook else [sys.executable, "-m", "owltui.cli"]
    cmd += ["-p", "go", "--output", "jsonl", "--yes", *openai_args(fake.url)]
    p = subprocess.Popen(cmd, env=env, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdout is not None
    lines: list[bytes] = []
    after = rng.randint(3, 26)  # the whole run prints 27 lines
    delay = rng.choice([0.0, 0.0, rng.uniform(0, 0.3), rng.uniform(0, 2.0)])
    timer: threading.Timer | None = None
    for raw in p.stdout:
        lines.append(raw)
        if len(lines) == after:
            timer = threading.Timer(delay, p.kill)
            timer.start()
    if timer is None:
        p.kill()
    p.wait()
    if timer is not None:
        timer.join()
    ended = set()
    for raw in lines:
        try:
            ev = json.loads(raw)
        except ValueError:
            continue  # a line cut by the kill
        if ev.get("type") == "tool_end":
            ended.add(ev["call_id"])
    files = sorted(sessions_dir(ws, env).glob("*.jsonl"))
    if not files:
        return (not ended, f"no session file, {len(ended)} tool_end")
    warnings: list[str] = []
    store = SessionStore.open(files[0], warn=warnings.append)
    items = list(store.items())
    store.close()
    saved = {i.call_id for i in items if isinstance(i, ToolResult)}
    missing = ended - saved
    if items and not isinstance(items[0], UserMessage):
        return False, "starts with an assistant message"
    fake.add(Turn(text="resumed"))
    before = len(fake.requests)
    r = subprocess.run(
        [sys.executable, "-m", "owltui.cli", "-p", "-c", "continue", *openai_args(fake.url)],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
    )
    first_role = (
        next((m["role"] for m in fake.requests[before]["messages"] if m["role"] != "system"), None)
        if len(fake.requests) > before
        else None
    )
    ok = not missing and r.returncode == 0 and first_role == "user"
    why = (
        f"killed after {len(lines)} lines (+{delay:.2f}s): {len(ended)} tool_end, {len(saved)} saved"
        + (f", MISSING {sorted(missing)}" if missing else "")
        + (f", -c exit {r.returncode}: {r.stderr.strip()[-200:]}" if r.returncode else "")
        + (f", warnings {warnings}" if warnings else "")
    )
    return ok, why


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--with-hook", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    fake = FakeOpenAI()
    failures = 0
    start = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(args.runs):
                ok, why = one_run(fake, Path(tmp), n, rng, args.with_hook)
                failures += not ok
                print(f"{n:3d} {'ok  ' if ok else 'FAIL'} {why}", flush=True)
    finally:
        fake.close()
    print(
        f"{args.runs - failures}/{args.runs} runs kept every emitted result "
        f"({'with' if args.with_hook else 'without'} the loop hook), {time.monotonic() - start:.0f} s"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
