"""HTTP client cost under httpx, transport by transport, side by side in one run.

The server is ``e2e_rounds.py``'s (its own process, HTTP/1.1 keep-alive, chunked SSE). Each client
runs in a fresh process, in turn (alternating, ``--repeat`` times), and reports:

- per request: wall and CPU µs of one POST of a 24 KB JSON body whose answer is a short tool-call
  stream (the shape of a tool round), read to its end, over a kept-alive connection;
- per event: wall µs per event of one 40,000-event text stream, bytes read to the end;

Clients: sync httpx (the floor), async httpx with its default transport (httpcore), async httpx
with ``httpx-aiohttp``'s transport (when installed) and with OwlTUI's ``LeanTransport`` (h11).

    python bench/http_transports.py [--requests 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent

CLIENTS = ["sync httpx (floor)", "httpx default (httpcore)", "httpx + httpx-aiohttp", "httpx + LeanTransport"]


def body_bytes() -> bytes:
    msgs = [{"role": "system", "content": "x" * 8000}, {"role": "user", "content": "go"}]
    for i in range(40):
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "f.txt"}'},
                    }
                ],
            }
        )
    tools = [
        {
            "type": "function",
            "function": {"name": f"t{i}", "description": "d" * 600, "parameters": {"type": "object"}},
        }
        for i in range(12)
    ]
    return json.dumps({"model": "rounds-100000", "stream": True, "tools": tools, "messages": msgs}).encode()


def client(name: str, url: str, requests: int) -> None:
    import asyncio

    import httpx

    payload = body_bytes()
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    events_body = json.dumps({"model": "events-40000", "messages": []}).encode()
    out: dict[str, float] = {}
    if name.startswith("sync"):
        with httpx.Client(timeout=60) as c:

            def once(data: bytes) -> int:
                n = 0
                with c.stream("POST", url + "/chat/completions", content=data, headers=headers) as r:
                    for chunk in r.iter_bytes():
                        n += len(chunk)
                return n

            for _ in range(20):
                once(payload)
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(requests):
                once(payload)
            out["wall"] = (time.perf_counter() - t0) / requests * 1e6
            out["cpu"] = (time.process_time() - c0) / requests * 1e6
            t0 = time.perf_counter()
            once(events_body)
            out["event"] = (time.perf_counter() - t0) / 40000 * 1e6
        print(json.dumps(out))
        return

    async def main() -> None:
        if name.startswith("httpx default"):
            c = httpx.AsyncClient(timeout=60)
        elif "aiohttp" in name:
            from httpx_aiohttp import AiohttpTransport

            c = httpx.AsyncClient(timeout=60, transport=AiohttpTransport())
        else:
            from owltui.providers.http.transport import LeanTransport

            c = httpx.AsyncClient(timeout=60, transport=LeanTransport())
        async with c:

            async def once(data: bytes) -> int:
                n = 0
                async with c.stream("POST", url + "/chat/completions", content=data, headers=headers) as r:
                    async for chunk in r.aiter_bytes():
                        n += len(chunk)
                return n

            for _ in range(20):
                await once(payload)
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(requests):
                await once(payload)
            out["wall"] = (time.perf_counter() - t0) / requests * 1e6
            out["cpu"] = (time.process_time() - c0) / requests * 1e6
            t0 = time.perf_counter()
            await once(events_body)
            out["event"] = (time.perf_counter() - t0) / 40000 * 1e6

    asyncio.run(main())
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", nargs=3, metavar=("NAME", "URL", "N"))
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.client:
        client(args.client[0], args.client[1], int(args.client[2]))
        return
    names = list(CLIENTS)
    try:
        import httpx_aiohttp  # noqa: F401
    except ImportError:
        names.remove("httpx + httpx-aiohttp")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = subprocess.Popen([sys.executable, str(BENCH / "e2e_rounds.py"), "--serve", str(work)])
        try:
            while not (work / "port").exists():
                time.sleep(0.01)
            url = f"http://127.0.0.1:{(work / 'port').read_text()}/v1"
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            results: dict[str, list[dict[str, float]]] = {n: [] for n in names}
            for _ in range(args.repeat):
                for n in names:
                    proc = subprocess.run(
                        [sys.executable, __file__, "--client", n, url, str(args.requests)],
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    results[n].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(
                f"load: {os.getloadavg()[0]:.2f}; {args.requests} requests of {len(body_bytes())} bytes, "
                f"medians of {args.repeat} alternating runs"
            )
            floor = statistics.median(r["cpu"] for r in results[names[0]])
            for n in names:
                wall = statistics.median(r["wall"] for r in results[n])
                cpu = [r["cpu"] for r in results[n]]
                ev = statistics.median(r["event"] for r in results[n])
                print(
                    f"{n:<28} per request wall {wall:7.0f} µs  cpu {statistics.median(cpu):7.0f} µs "
                    f"({min(cpu):.0f}–{max(cpu):.0f}; {statistics.median(cpu) / floor:.2f}× floor)  "
                    f"per event {ev:6.2f} µs"
                )
        finally:
            server.kill()


if __name__ == "__main__":
    main()
