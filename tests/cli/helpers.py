"""Running the real CLI as a subprocess against the fake server, with XDG dirs in a temp folder."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from owltui.session.paths import sessions_dir

SECRET_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "OWLTUI_PROVIDER",
    "OWLTUI_MODEL",
    "OWLTUI_PERMISSION_MODE",
    "OWLTUI_MAX_ROUNDS",
)


def cli_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SECRET_VARS}
    env.update(
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        HOME=str(tmp),
        OPENAI_API_KEY="test",
        PYTHONUNBUFFERED="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def owltui_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "owltui.cli", *args]


def openai_args(url: str) -> list[str]:
    return ["--provider", "openai", "--model", "fake-model", "--base-url", url]


def run_cli(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str = "", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        owltui_cmd(*args), env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout
    )


def session_files(workspace: Path, env: dict[str, str]) -> list[Path]:
    d = sessions_dir(workspace, env)
    return sorted(d.glob("*.jsonl")) if d.exists() else []


def released(path: Path, timeout: float = 20.0) -> Path:
    """``path`` once no process holds its session lock: after a SIGKILL the killed process is gone
    when ``wait`` returns, but a child it was starting (between fork and exec) may hold the locked
    file a moment longer."""
    import fcntl
    import time

    end = time.monotonic() + timeout
    with path.open("rb") as fh:
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)
                continue
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            return path


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Proc:
    """A running ``owltui`` with JSON lines on stdout collected by a thread."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.p = subprocess.Popen(
            owltui_cmd(*args),
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.backlog: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for raw in self.p.stdout:
            self.raw.append(raw)
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def send(self, obj: dict[str, Any] | str) -> None:
        assert self.p.stdin is not None
        line = obj if isinstance(obj, str) else json.dumps(obj)
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()

    def expect(self, timeout: float = 30, **match: Any) -> dict[str, Any]:
        """The first line, read earlier but not yet matched or new, having all of ``match``'s fields."""
        for i, msg in enumerate(self.backlog):
            if all(msg.get(k) == v for k, v in match.items()):
                return self.backlog.pop(i)
        while True:
            try:
                msg = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"timed out waiting for {match}; last seen {self.seen[-6:]}") from None
            if msg is None:
                raise AssertionError(f"stdout ended while waiting for {match}; seen {self.seen[-5:]}")
            self.seen.append(msg)
            if all(msg.get(k) == v for k, v in match.items()):
                return msg
            self.backlog.append(msg)

    def call(self, cmd: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        self.send(cmd)
        return self.expect(timeout, type="response", command=cmd["type"], id=cmd.get("id"))

    def close_stdin(self) -> None:
        assert self.p.stdin is not None
        self.p.stdin.close()

    def wait(self, timeout: float = 30) -> int:
        return self.p.wait(timeout=timeout)

    def stderr(self) -> str:
        assert self.p.stderr is not None
        return self.p.stderr.read().decode()

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
