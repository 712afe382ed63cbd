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

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------------------------
# the server (runs in its own process: python bench/e2e_rounds.py --serve DIR)


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: bool = False) -> bytes:
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def serve(directory: Path) -> None:
    first = directory / "first_request.json"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def handle(self) -> None:
            try:
                super().handle()
            except ConnectionError:
                pass

        def do_GET(self) -> None:
            body = json.dumps({"data": [{"id": "rounds-10"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            data = json.loads(raw)
            if not first.exists():
                first.write_bytes(raw)
            kind, _, n = str(data.get("model", "rounds-1")).partition("-")
            target = int(n or 1)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            done = sum(1 for m in data.get("messages", []) if m.get("role") == "tool")
            out: list[bytes] = [_chunk({"role": "assistant", "content": ""})]
            if kind == "rounds" and done < target:
                call = {
                    "index": 0,
                    "id": f"call_{done}",
                    "type": "function",
                    "function": {"name": "read", "arguments": ""},
                }
                out.append(_chunk({"tool_calls": [call]}))
                out.append(
                    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "f.txt"}'}}]})
                )
                out.append(_chunk({}, "tool_calls", usage=True))
            elif kind == "events":
                out.extend(_chunk({"content": f"w{i} "}) for i in range(target))
                out.append(_chunk({}, "stop", usage=True))
            else:
                out.append(_chunk({"content": "All done."}))
                out.append(_chunk({}, "stop", usage=True))
            out.append(b"data: [DONE]\n\n")
            framed = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in out)
            self.wfile.write(framed + b"0\r\n\r\n")
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    (directory / "port").write_text(str(httpd.server_address[1]))
    httpd.serve_forever()


# ---------------------------------------------------------------------------------------------
# the floor client (runs in its own process: python bench/e2e_rounds.py --floor URL MODEL DIR)


def floor(url: str, model: str, directory: Path) -> None:
    import httpx

    shape = json.loads((directory / "first_request.json").read_text())
    messages: list[dict[str, Any]] = [m for m in shape["messages"] if m["role"] == "system"]
    messages.append({"role": "user", "content": "go"})
    with httpx.Client(timeout=60) as client:
        while True:
            body = {"model": model, "messages": messages, "tools": shape.get("tools", []), "stream": True}
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            with client.stream("POST", url + "/chat/completions", json=body) as resp:
                for line in resp.iter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    delta = json.loads(line[6:])["choices"][0]["delta"]
                    if delta.get("content"):
                        text.append(delta["content"])
                    for tc in delta.get("tool_calls") or ():
                        slot = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
                        slot["id"] = tc.get("id") or slot["id"]
                        fn = tc.get("function") or {}
                        slot["name"] = fn.get("name") or slot["name"]
                        slot["arguments"] += fn.get("arguments") or ""
            message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
            if not calls:
                sys.stdout.write("".join(text) + "\n")
                return
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls.values()
            ]
            messages.append(message)
            for c in calls.values():
                args = json.loads(c["arguments"])
                with open(args["path"], encoding="utf-8") as fh:
                    content = "".join(f"{i}\t{line}" for i, line in enumerate(fh, 1))
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})


# ---------------------------------------------------------------------------------------------
# the driver


def owltui_cmd() -> list[str]:
    script = Path(sys.executable).with_name("owltui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "owltui.cli"]


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
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", type=Path)
    ap.add_argument("--floor", nargs=3, metavar=("URL", "MODEL", "DIR"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--rounds", type=int, nargs=2, default=(10, 150))
    ap.add_argument("--events", type=int, nargs=2, default=(4000, 40000))
    args = ap.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.floor:
        floor(args.floor[0], args.floor[1], Path(args.floor[2]))
        return

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "f.txt").write_text("".join(f"line {i} of a small file\n" for i in range(20)))
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(work)])
        try:
            while not (work / "port").exists():
                time.sleep(0.01)
            url = f"http://127.0.0.1:{(work / 'port').read_text()}/v1"
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"
            }
            env.update(
                XDG_DATA_HOME=str(work / "data"), XDG_CONFIG_HOME=str(work / "cfg"), OPENAI_API_KEY="x"
            )

            def ours(model: str) -> float:
                return timed(
                    [
                        *owltui_cmd(),
                        "-p",
                        "go",
                        "--provider",
                        "openai",
                        "--model",
                        model,
                        "--base-url",
                        url,
                        "--yes",
                        "--no-session",
                        "--max-rounds",
                        "1000",
                    ],
                    env,
                    work,
                    f"owltui {model}",
                )

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
