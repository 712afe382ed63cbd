"""Each performance trick of ``owltui/_startup.py``'s list, on against off, in alternating runs.

A trick is switched off the way it would be absent: the start-up stubs by importing the real module
first (``pydantic.plugin._loader``, ``httpx._main``), deferred schemas by a ``ConfigDict`` that
drops ``defer_build``, the plain-http client by asking it to verify certificates (with a proxy
variable set: only then does httpx load the CA bundle for it), the stream helper by putting
``json.loads`` back in the parser modules, the cookie jar by timing httpx's own. Every sample is a
pair (on, off, in alternating order); the report is the median of off/on with its spread, and the
median difference, with the load average.

- start-up: ``owltui -p``'s wall time from the process start to its first request reaching a
  loopback server (``bench/startup.py``'s server), and the CPU time of the whole process, each run
  a fresh ``python -c`` process;
- stream: µs per event of a 40,000-event Chat Completions stream read through
  ``OpenAICompatModel`` (``bench/stream_parse.py``'s server and stream);
- anthropic tool arguments: µs per event of the Anthropic parser fed an ``input_json_delta``
  stream in memory (no network);
- cookie jar: µs per response of the jar's ``extract_cookies`` (httpx calls it on every response),
  OwlTUI's jar against httpx's own.

Wall times on a shared 2-core machine spread by ±30 %; ``--instructions N`` counts each start-up
side's instructions under valgrind's callgrind instead (N runs each, to the process's exit), which
shows gains of a few milliseconds that the wall times cannot. Runs with .pyc files present
(``PYTHONDONTWRITEBYTECODE`` is dropped for the children).

    python bench/tricks.py [--pairs 15] [--only NAME ...] [--instructions N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from startup import FirstRequest
from stream_parse import serve_forever

# ---------------------------------------------------------------------------------------------
# start-up tricks: what a fresh process runs before ``owltui.cli.main`` to switch one off

STARTUP_OFF = {
    "pydantic-plugins": "import pydantic.plugin._loader",
    "httpx-cli": "import httpx._main",
    # every pydantic model's schema built at its class statement (``defer_build`` dropped)
    "defer-build": (
        "import pydantic\n"
        "plain = pydantic.ConfigDict\n"
        "pydantic.ConfigDict = lambda **kw: plain(**{k: v for k, v in kw.items() if k != 'defer_build'})"
    ),
    # a plain-http model URL given httpx's own transport (a proxy variable set) with verify=True
    "plain-http-ca": (
        "from owltui import _startup\n"
        "_startup.apply()\n"
        "from owltui.providers.http import stream\n"
        "made = stream.make_client\n"
        "stream.make_client = lambda timeout, verify: made(timeout, verify=True)"
    ),
}
# the environment both sides of a start-up trick run in, beyond the bench's own
STARTUP_ENV = {"plain-http-ca": {"http_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1"}}


def startup_cmd(prelude: str, url: str) -> list[str]:
    argv = ["-p", "hi", "--provider", "openai", "--model", "bench", "--base-url", url, "--no-session"]
    code = f"import sys\n{prelude}\nfrom owltui.cli import main\nsys.exit(main({argv!r}))"
    return [sys.executable, "-c", code]


# ---------------------------------------------------------------------------------------------
# in-process tricks: a context manager that switches one off


@contextmanager
def patched(module: Any, **names: Any) -> Iterator[None]:
    saved = {name: getattr(module, name) for name in names}
    for name, value in names.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def plain_loads() -> Any:
    from owltui.providers.anthropic import parser as anthropic
    from owltui.providers.openai_compat import parser as openai

    @contextmanager
    def both() -> Iterator[None]:
        with patched(openai, loads=json.loads), patched(anthropic, loads=json.loads):
            yield

    return both()


STREAM_OFF: dict[str, Callable[[], Any]] = {"json-scan": plain_loads}
ANTHROPIC_OFF: dict[str, Callable[[], Any]] = {"json-scan": plain_loads}


def anthropic_events(n: int) -> list[str]:
    """An Anthropic tool call whose arguments come in ``n`` ``input_json_delta`` events."""
    head = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "w"},
        },
    ]
    body = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": f'"k{i}": '},
        }
        for i in range(n)
    ]
    tail = [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": n}},
        {"type": "message_stop"},
    ]
    return [json.dumps(e) for e in (*head, *body, *tail)]


def parse_anthropic(events: list[str]) -> float:
    from owltui.providers.anthropic.parser import AnthropicParser

    parser = AnthropicParser()
    feed = parser.feed
    t0 = time.perf_counter()
    for data in events:
        feed("", data)
    parser.flush()
    return (time.perf_counter() - t0) / len(events) * 1e6


async def read_stream(url: str, events: int) -> float:
    from stream_parse import owltui

    t0 = time.perf_counter()
    await owltui(url)
    return (time.perf_counter() - t0) / events * 1e6


def extract_cookies(jar: Any, n: int = 20_000) -> float:
    """µs per response of ``jar.extract_cookies`` on a model API response that sets no cookie (httpx
    calls it once per response)."""
    import httpx

    request = httpx.Request("POST", "https://api.example.com/v1/chat/completions")
    headers = {
        "content-type": "text/event-stream",
        "date": "Mon, 02 Nov 2026 10:00:00 GMT",
        "x-request-id": "r",
    }
    response = httpx.Response(200, headers=headers, request=request)
    extract = jar.extract_cookies
    t0 = time.perf_counter()
    for _ in range(n):
        extract(response)
    return (time.perf_counter() - t0) / n * 1e6


# ---------------------------------------------------------------------------------------------


def report(name: str, unit: str, pairs: list[tuple[float, float]]) -> None:
    ratios = sorted(off / on for on, off in pairs)
    gain = statistics.median(off - on for on, off in pairs)
    on = statistics.median(p[0] for p in pairs)
    print(
        f"{name:<28} on {on:9.2f} {unit}  off/on median {statistics.median(ratios):.3f}x "
        f"(spread {ratios[0]:.3f}-{ratios[-1]:.3f}x)  gain {gain:+.2f} {unit}  "
        f"n={len(pairs)}  load {os.getloadavg()[0]:.2f}",
        flush=True,
    )


def alternate(pairs: int, on: Callable[[], float], off: Callable[[], float]) -> list[tuple[float, float]]:
    on(), off()  # warm up
    out = []
    for i in range(pairs):
        if i % 2:
            b = off()
            a = on()
        else:
            a = on()
            b = off()
        out.append((a, b))
    return out


def first_request(server: FirstRequest, env: dict[str, str], cwd: str, cmd: list[str]) -> tuple[float, float]:
    """ms from the start of ``cmd`` to its first request, and the ms of CPU the whole process used."""
    server.arrived.clear()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    if not server.arrived.wait(60):
        proc.kill()
        raise RuntimeError("print mode never reached the server")
    wall = server.arrived_at - start
    _pid, _status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def instructions(env: dict[str, str], cwd: str, cmd: list[str]) -> int:
    """Instructions the whole process ran, counted by valgrind's callgrind (the same count on every
    run, whatever else the machine does: small start-up gains show where wall times cannot)."""
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run(
        [*vg, *cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600
    )
    return int(done.stderr.split("Collected : ")[1].split()[0])


def run_instructions(names: list[str], runs: int) -> None:
    tmp = tempfile.mkdtemp(prefix="owltui-tricks-")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(XDG_CONFIG_HOME=f"{tmp}/config", XDG_DATA_HOME=f"{tmp}/data", OPENAI_API_KEY="bench")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    server = FirstRequest()
    try:
        for name in names:
            run_env = {**env, **STARTUP_ENV.get(name, {})}
            on_cmd, off_cmd = startup_cmd("", server.url), startup_cmd(STARTUP_OFF[name], server.url)
            on = [instructions(run_env, tmp, on_cmd) for _ in range(runs)]
            off = [instructions(run_env, tmp, off_cmd) for _ in range(runs)]
            print(
                f"start-up {name:<20} instructions on {min(on) / 1e6:8.1f} M (max {max(on) / 1e6:.1f})  "
                f"off {min(off) / 1e6:8.1f} M (max {max(off) / 1e6:.1f})  "
                f"off/on {min(off) / min(on):.3f}x  gain {(min(off) - min(on)) / 1e6:+.1f} M",
                flush=True,
            )
    finally:
        server.httpd.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


def run_startup(names: list[str], pairs: int) -> None:
    tmp = tempfile.mkdtemp(prefix="owltui-tricks-")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(XDG_CONFIG_HOME=f"{tmp}/config", XDG_DATA_HOME=f"{tmp}/data", OPENAI_API_KEY="bench")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    server = FirstRequest()
    try:
        for name in names:
            run_env = {**env, **STARTUP_ENV.get(name, {})}
            on_cmd, off_cmd = startup_cmd("", server.url), startup_cmd(STARTUP_OFF[name], server.url)
            cpu: list[tuple[float, float]] = []
            wall: list[tuple[float, float]] = []
            first_request(server, run_env, tmp, on_cmd), first_request(server, run_env, tmp, off_cmd)
            for i in range(pairs):
                order = (on_cmd, off_cmd) if i % 2 == 0 else (off_cmd, on_cmd)
                got = {id(c): first_request(server, run_env, tmp, c) for c in order}
                on, off = got[id(on_cmd)], got[id(off_cmd)]
                wall.append((on[0], off[0]))
                cpu.append((on[1], off[1]))
            report(f"start-up {name} (wall)", "ms", wall)
            report(f"start-up {name} (CPU)", "ms", cpu)
    finally:
        server.httpd.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


def run_in_process(names: list[str], pairs: int) -> None:
    events = 40_000
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=serve_forever, args=(events, child), daemon=True)
    proc.start()
    try:
        url: str = parent.recv()
        for name in names:
            if name in STREAM_OFF:

                def on() -> float:
                    return asyncio.run(read_stream(url, events))

                def off(switch: Callable[[], Any] = STREAM_OFF[name]) -> float:
                    with switch():
                        return asyncio.run(read_stream(url, events))

                report(f"stream {name}", "us/event", alternate(pairs, on, off))
            if name in ANTHROPIC_OFF:

                def a_on(tool_events: list[str] = anthropic_events(20_000)) -> float:
                    return min(parse_anthropic(tool_events) for _ in range(3))

                def a_off(
                    tool_events: list[str] = anthropic_events(20_000),
                    switch: Callable[[], Any] = ANTHROPIC_OFF[name],
                ) -> float:
                    with switch():
                        return min(parse_anthropic(tool_events) for _ in range(3))

                report(f"anthropic args {name}", "us/event", alternate(pairs, a_on, a_off))
    finally:
        proc.terminate()
        proc.join()
    if "cookie-jar" in names:
        import httpx

        from owltui.providers.http.client import make_client

        ours = make_client(httpx.Timeout(5.0), verify=False)._cookies
        theirs = httpx.Cookies()
        got = alternate(pairs, lambda: extract_cookies(ours), lambda: extract_cookies(theirs))
        report("per response cookie-jar", "us", got)


def main() -> int:
    every = [*STARTUP_OFF, *dict.fromkeys([*STREAM_OFF, *ANTHROPIC_OFF]), "cookie-jar"]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--only", nargs="*", choices=every, default=every)
    ap.add_argument(
        "--instructions",
        type=int,
        metavar="RUNS",
        help="the start-up tricks only: count each side's instructions under valgrind, RUNS times",
    )
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.instructions:
        run_instructions([n for n in args.only if n in STARTUP_OFF], args.instructions)
        return 0
    run_startup([n for n in args.only if n in STARTUP_OFF], args.pairs)
    run_in_process([n for n in args.only if n not in STARTUP_OFF], args.pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
