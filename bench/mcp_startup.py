"""MCP start-up cost: what two configured servers add to the start-up path and to the event loop.

1. The start-up path (a fresh interpreter, the agent and the built-in tools already imported):
   importing ``owltui.tools.mcp``, reading the servers and making the source, with two servers —
   and whether the MCP SDK got imported (it must not: it costs about a second).
2. In the background: ``McpSource.start()`` connecting two servers (the reference ``mcp-server-time``
   and the SDK-built test server) while a 10 ms ticker runs on the same event loop — the ticker's
   worst lag is how much later a TUI frame could be drawn meanwhile. Also the time until ready (the
   first model request waits at most that long, counted from start-up) and the time to close.

Usage: python bench/mcp_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
SERVERS = {
    "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
    "test": {"command": sys.executable, "args": [str(ROOT / "tests" / "tools" / "mcp_test_server.py")]},
}

STARTUP_PATH = """
import sys, time
import owltui.agent.agent, owltui.tools.registry  # on the start-up path anyway
t = time.perf_counter()
from pathlib import Path
from owltui.tools.mcp.selection import load_mcp_servers
from owltui.tools.mcp.source import McpSource
servers, _ = load_mcp_servers(Path(sys.argv[1]), {}, Path(sys.argv[2]), None)
src = McpSource(servers, workspace=Path(sys.argv[1]))
took = time.perf_counter() - t
sdk = any(m == "mcp" or m.startswith("mcp.") for m in sys.modules)
print(took, sdk, len(servers))
"""


def startup_path(ws: Path, config: Path, runs: int) -> tuple[float, bool]:
    times, sdk = [], False
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", STARTUP_PATH, str(ws), str(config)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        times.append(float(out[0]))
        sdk = sdk or out[1] == "True"
        assert out[2] == "2"
    return statistics.median(times), sdk


async def background(ws: Path, config: Path) -> dict[str, float]:
    from owltui.tools.mcp.selection import load_mcp_servers
    from owltui.tools.mcp.source import McpSource

    servers, _ = load_mcp_servers(ws, {}, config, None)
    warnings: list[str] = []
    src = McpSource(servers, workspace=ws, warn=warnings.append)
    worst = 0.0
    done = anyio.Event()

    async def ticker() -> None:
        nonlocal worst
        while not done.is_set():
            t = time.perf_counter()
            await anyio.sleep(0.01)
            worst = max(worst, time.perf_counter() - t - 0.01)

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        tg.start_soon(src.start)
        ok = await src.wait_ready()
        ready = time.perf_counter() - t0
        tools = len(src.tools())
        done.set()
        t1 = time.perf_counter()
        await src.aclose()
        closed = time.perf_counter() - t1
        tg.cancel_scope.cancel()
    assert ok and not warnings, warnings
    return {"ready_s": ready, "worst_loop_lag_ms": worst * 1000, "close_s": closed, "tools": tools}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        config = ws / "servers.json"
        config.write_text(json.dumps({"mcpServers": SERVERS}))
        path_s, sdk = startup_path(ws, config, args.runs)
        print(
            f"start-up path (import + load + source, 2 servers): {path_s * 1000:.1f} ms median; "
            f"MCP SDK imported: {sdk}"
        )
        results = [anyio.run(background, ws, config) for _ in range(args.runs)]
    for key in ("ready_s", "worst_loop_lag_ms", "close_s"):
        values = [r[key] for r in results]
        print(f"{key}: median {statistics.median(values):.3f}, max {max(values):.3f}")
    print(f"tools: {results[0]['tools']}")


if __name__ == "__main__":
    main()
