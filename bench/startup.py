"""Start-up time: median wall time of ``owltui --version`` and of print mode up to its first request
reaching a loopback server, against ``python -c pass`` and ``python -c "import httpx, pydantic"``,
and the ratio of print mode's start → first request to the floor's: the least code that sends a
request (``python -c "import httpx, json; httpx.post(...)"``), measured the same way, in
alternating runs (the target: at most 2.0×). Runs with .pyc files present, as an install has them.

Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def owltui_cmd() -> list[str]:
    script = Path(sys.executable).with_name("owltui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "owltui.cli"]


def timed(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


class FirstRequest:
    """A loopback Chat Completions server that notes when each request arrives and answers 'ok'."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        bench = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                bench.arrived_at = time.perf_counter()
                bench.arrived.set()
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
                body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.arrived_at = 0.0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def measure(self, env: dict[str, str], cwd: str, cmd: list[str] | None = None) -> float:
        self.arrived.clear()
        cmd = cmd or [
            *owltui_cmd(),
            "-p",
            "hi",
            "--provider",
            "openai",
            "--model",
            "bench",
            "--base-url",
            self.url,
            "--no-session",
        ]
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        if not self.arrived.wait(60):
            proc.kill()
            raise RuntimeError("print mode never reached the server")
        elapsed = self.arrived_at - start
        proc.wait(60)
        return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="owltui-bench-")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(XDG_CONFIG_HOME=f"{tmp}/config", XDG_DATA_HOME=f"{tmp}/data", OPENAI_API_KEY="bench")
    # an installed owltui has its .pyc files; without this (set on some machines) every run recompiles
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    server = FirstRequest()
    cases = {
        "python -c pass": lambda: timed([sys.executable, "-c", "pass"], env, tmp),
        "python -c 'import httpx, pydantic'": lambda: timed(
            [sys.executable, "-c", "import httpx, pydantic"], env, tmp
        ),
        "owltui --version": lambda: timed([*owltui_cmd(), "--version"], env, tmp),
        "owltui -p (to first request)": lambda: server.measure(env, tmp),
    }
    floor_code = (
        "import httpx, json; httpx.post(%r, content=json.dumps({'model': 'bench', 'stream': True, "
        "'messages': [{'role': 'user', 'content': 'hi'}]}), headers={'authorization': 'Bearer bench', "
        "'content-type': 'application/json'})" % (server.url + "/chat/completions")
    )
    cases["floor: httpx.post (to first request)"] = lambda: server.measure(
        env, tmp, [sys.executable, "-c", floor_code]
    )
    try:
        for name, fn in cases.items():
            fn()  # warm the page cache and .pyc files
            samples = [fn() for _ in range(args.runs)]
            print(
                f"{name:<38} median {statistics.median(samples) * 1000:7.1f} ms  "
                f"(min {min(samples) * 1000:.1f}, max {max(samples) * 1000:.1f}, n={args.runs})",
                flush=True,
            )
        ours, floor = cases["owltui -p (to first request)"], cases["floor: httpx.post (to first request)"]
        ratios = []
        for _ in range(args.runs):
            a, b = ours(), floor()
            ratios.append(a / b)
        print(
            f"start → first request, owltui -p / floor: median {statistics.median(ratios):.2f}× "
            f"(spread {min(ratios):.2f}–{max(ratios):.2f}×, {args.runs} alternating pairs, "
            f"load {os.getloadavg()[0]:.2f})"
        )
    finally:
        server.httpd.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
