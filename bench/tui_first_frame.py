"""TUI start-up: OwlTUI's first frame against a minimal Textual app (Static, Input, Footer) started the
same way, a fresh process in a pseudo-terminal (120×40), alternating runs (the target: at most 1.4×).

Moments per run, from the spawn: the first paint (the first write that draws text at the top row);
the full frame (the first write that draws the footer's keys - Textual draws the footer last - with
the input and status line: OwlTUI's start-up screen, ``owltui.ui.boot``); for OwlTUI, ready (the
first write naming the model: the runtime is built and the main screen is in); and the settled
screen (the last write before the terminal has been quiet for ``--quiet`` ms; the cursor blink comes
later). OwlTUI runs with the offline demo model, no session, in an empty directory, with .pyc files
present.

    python bench/tui_first_frame.py [--runs 9] [--quiet 300] [--mcp-servers 2]

With ``--mcp-servers N`` a third row runs OwlTUI with N MCP servers (the reference time server) in
the user config, and the ratio to OwlTUI without them is reported (the target: no later).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

MINIMAL = """
from textual.app import App
from textual.widgets import Footer, Input, Static


class Minimal(App):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self):
        yield Static("OwlTUI minimal")
        yield Input(placeholder="Ask anything")
        yield Footer()


Minimal().run()
"""


def owltui_cmd() -> list[str]:
    script = Path(sys.executable).with_name("owltui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "owltui.cli"]


Moments = tuple[float, float, float, float]  # first paint, full frame, ready, settled (s)


def measure(
    cmd: list[str],
    env: dict[str, str],
    cwd: str,
    quiet: float,
    footer: bytes,
    ready_mark: bytes | None = None,
) -> Moments:
    """Seconds from the spawn to each moment (ready: when ``ready_mark`` is first drawn; without
    it, the full frame)."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal is the pty
        os.chdir(cwd)
        os.execve(cmd[0], cmd, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    first = last = full = seen = 0.0
    try:
        deadline = start + 30
        while time.perf_counter() < deadline:
            wait = quiet if first else 1.0
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                if first:
                    break  # quiet for long enough after drawing: settled
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            now = time.perf_counter() - start
            if not first and b"\x1b[1;1H" in data:
                first = now
            if first:
                last = now
                if not full and footer in data:
                    full = now
                if ready_mark is not None and not seen and ready_mark in data:
                    seen = now
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    if not first or not full or (ready_mark is not None and not seen):
        raise RuntimeError(f"{cmd[0]} did not draw everything (paint {first}, frame {full}, ready {seen})")
    return first, full, seen or full, last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--quiet", type=float, default=300, help="ms of silence that ends the first frame")
    ap.add_argument("--mcp-servers", type=int, default=0, help="also run with N MCP servers configured")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="owltui-frame-")
    try:
        work = Path(tmp) / "work"
        work.mkdir()
        (Path(tmp) / "minimal.py").write_text(MINIMAL)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY")
            and k not in ("PYTHONDONTWRITEBYTECODE", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
        }
        env.update(
            XDG_CONFIG_HOME=f"{tmp}/config",
            XDG_DATA_HOME=f"{tmp}/data",
            TERM="xterm-256color",
            COLUMNS="120",
            LINES="40",
        )
        ours = [*owltui_cmd(), "--provider", "demo", "--no-session"]
        theirs = [sys.executable, str(Path(tmp) / "minimal.py")]
        quiet = args.quiet / 1000
        mcp_env = dict(env, XDG_CONFIG_HOME=f"{tmp}/config-mcp")
        if args.mcp_servers:
            cfg = Path(tmp) / "config-mcp" / "owltui"
            cfg.mkdir(parents=True)
            cfg.joinpath("config.toml").write_text(
                "".join(
                    f'[mcp.servers.time{i}]\ncommand = "{sys.executable}"\nargs = ["-m", "mcp_server_time"]\n'
                    for i in range(args.mcp_servers)
                )
            )

        def run_ours(environ: dict[str, str]) -> Moments:
            return measure(ours, environ, str(work), quiet, footer=b"Send", ready_mark=b"demo (offline)")

        def run_theirs() -> Moments:
            return measure(theirs, env, str(work), quiet, footer=b"Quit")

        run_ours(env)  # .pyc files and the page cache
        run_theirs()
        rows: dict[str, list[Moments]] = {"owltui": [], "minimal": []}
        if args.mcp_servers:
            rows["with-mcp"] = []
        for _ in range(args.runs):
            rows["owltui"].append(run_ours(env))
            rows["minimal"].append(run_theirs())
            if args.mcp_servers:
                rows["with-mcp"].append(run_ours(mcp_env))
        for name, samples in rows.items():
            med = [statistics.median(s[k] * 1000 for s in samples) for k in range(4)]
            ready = f", ready {med[2]:4.0f}" if name != "minimal" else ""
            print(
                f"{name:<8} medians (ms): first paint {med[0]:4.0f}, full frame {med[1]:4.0f}{ready}, "
                f"settled {med[3]:4.0f} (n={args.runs})"
            )

        def spread(ratios: list[float]) -> str:
            return f"median {statistics.median(ratios):.2f}× (spread {min(ratios):.2f}–{max(ratios):.2f}×)"

        print(f"({args.runs} alternating runs each, load {os.getloadavg()[0]:.2f})")
        for k, label in ((0, "first paint"), (1, "full frame")):
            ratios = [a[k] / b[k] for a, b in zip(rows["owltui"], rows["minimal"], strict=True)]
            print(f"{label}: owltui / minimal app {spread(ratios)}")
        ratios = [a[2] / b[3] for a, b in zip(rows["owltui"], rows["minimal"], strict=True)]
        print(f"owltui ready / minimal app settled {spread(ratios)}")
        if args.mcp_servers:
            for k, label in ((0, "first paint"), (1, "full frame"), (2, "ready")):
                mcp = [a[k] / b[k] for a, b in zip(rows["with-mcp"], rows["owltui"], strict=True)]
                print(f"{label}: with {args.mcp_servers} MCP servers / without {spread(mcp)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
