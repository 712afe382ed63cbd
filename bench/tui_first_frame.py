"""TUI start-up: OwlTUI's first frame against a minimal Textual app (Static, Input, Footer) started the
same way, a fresh process in a pseudo-terminal (120×40), alternating runs (issue 16: at most 1.4×).

Two moments per run, from the spawn: the first paint (the first write that draws text at the top
row) and the settled screen (the last write before the terminal has been quiet for ``--quiet`` ms:
the first full frame with everything the app draws on its own, footer and status included; the
cursor blink comes later than that). OwlTUI runs with the offline demo model, no session, in an
empty directory, with .pyc files present.

    python bench/tui_first_frame.py [--runs 9] [--quiet 300] [--mcp-servers 2]

With ``--mcp-servers N`` a third row runs OwlTUI with N MCP servers (the reference time server) in
the user config, and the ratio to OwlTUI without them is reported (issue 15: no later).
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

MINIMAL = '''
from textual.app import App
from textual.widgets import Footer, Input, Static


class Minimal(App):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self):
        yield Static("OwlTUI minimal")
        yield Input(placeholder="Ask anything")
        yield Footer()


Minimal().run()
'''


def owltui_cmd() -> list[str]:
    script = Path(sys.executable).with_name("owltui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "owltui.cli"]


def measure(cmd: list[str], env: dict[str, str], cwd: str, quiet: float) -> tuple[float, float]:
    """(first paint, settled) in seconds from the spawn."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal is the pty
        os.chdir(cwd)
        os.execve(cmd[0], cmd, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    first = last = 0.0
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
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    if not first:
        raise RuntimeError(f"{cmd[0]} drew nothing")
    return first, last


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
        env = {k: v for k, v in os.environ.items()
               if not k.endswith("_API_KEY") and k not in ("PYTHONDONTWRITEBYTECODE", "OPENAI_BASE_URL",
                                                           "ANTHROPIC_BASE_URL")}
        env.update(XDG_CONFIG_HOME=f"{tmp}/config", XDG_DATA_HOME=f"{tmp}/data", TERM="xterm-256color",
                   COLUMNS="120", LINES="40")
        ours = [*owltui_cmd(), "--provider", "demo", "--no-session"]
        theirs = [sys.executable, str(Path(tmp) / "minimal.py")]
        quiet = args.quiet / 1000
        mcp_env = dict(env, XDG_CONFIG_HOME=f"{tmp}/config-mcp")
        if args.mcp_servers:
            cfg = Path(tmp) / "config-mcp" / "owltui"
            cfg.mkdir(parents=True)
            cfg.joinpath("config.toml").write_text("".join(
                f'[mcp.servers.time{i}]\ncommand = "{sys.executable}"\nargs = ["-m", "mcp_server_time"]\n'
                for i in range(args.mcp_servers)))
        measure(ours, env, str(work), quiet)  # .pyc files and the page cache
        measure(theirs, env, str(work), quiet)
        rows: dict[str, list[tuple[float, float]]] = {"owltui": [], "minimal": []}
        if args.mcp_servers:
            rows["with-mcp"] = []
        for _ in range(args.runs):
            rows["owltui"].append(measure(ours, env, str(work), quiet))
            rows["minimal"].append(measure(theirs, env, str(work), quiet))
            if args.mcp_servers:
                rows["with-mcp"].append(measure(ours, mcp_env, str(work), quiet))
        for name, samples in rows.items():
            paint = [s[0] * 1000 for s in samples]
            settled = [s[1] * 1000 for s in samples]
            print(f"{name:<8} first paint median {statistics.median(paint):6.0f} ms, settled median "
                  f"{statistics.median(settled):6.0f} ms (n={args.runs})")
        for i, label in ((0, "first paint"), (1, "settled frame")):
            ratios = [a[i] / b[i] for a, b in zip(rows["owltui"], rows["minimal"], strict=True)]
            print(f"{label}: owltui / minimal app median {statistics.median(ratios):.2f}× "
                  f"(spread {min(ratios):.2f}–{max(ratios):.2f}×, {args.runs} alternating pairs, "
                  f"load {os.getloadavg()[0]:.2f})")
            if args.mcp_servers:
                mcp = [a[i] / b[i] for a, b in zip(rows["with-mcp"], rows["owltui"], strict=True)]
                print(f"{label}: with {args.mcp_servers} MCP servers / without median "
                      f"{statistics.median(mcp):.2f}× (spread {min(mcp):.2f}–{max(mcp):.2f}×)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
