"""OwlTUI in a real terminal (tmux) against a loopback OpenAI-compatible SSE server: a prompt streams,
steering typed mid-stream reaches the model, /pause and /resume, Esc aborts a long stream."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
ROOT = Path(__file__).resolve().parents[2]


class Tmux:
    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path) -> None:
        self.sock = f"owltui-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        line = " ".join(subprocess.list2cmdline([c]) for c in cmd)
        self._tmux("new-session", "-d", "-s", "t", "-x", "110", "-y", "36", "-c", str(cwd), line)

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.sock, *args], env=self.env, capture_output=True, text=True,
                             timeout=20)
        return out.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)

    def wait(self, cond: Callable[[str], bool], what: str, timeout: float = 20.0) -> str:
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if cond(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True, timeout=20)


def test_tui_in_tmux(tmp_path: Path) -> None:
    hold = threading.Event()
    never = threading.Event()
    server = FakeOpenAI().add(
        Turn(text="Streaming the first half of the answer", pieces=6, hold=hold),
        Turn(text="Noted the steering message."),
        Turn(text="A very long answer that never ends", pieces=4, hold=never),
    )
    env = {**os.environ, "OPENAI_API_KEY": "test", "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path), "TERM": "xterm-256color",
           "PYTHONPATH": str(ROOT)}
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OWLTUI_PROVIDER", "OWLTUI_MODEL"):
        env.pop(var, None)
    cmd = [sys.executable, "-c", "from owltui.cli import main; raise SystemExit(main())",
           "--provider", "openai", "--model", "fake-model", "--base-url", server.url, "--no-session"]
    t = Tmux(cmd, env, tmp_path)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.type("say hello")
        t.keys("Enter")
        t.wait(lambda s: "Streaming the first half of the answer" in s, "streamed text")
        t.type("please be brief")
        t.keys("Enter")
        t.wait(lambda s: "please be brief" in s and "queue 1 steer" in s, "queued steering")
        hold.set()
        t.wait(lambda s: "Noted the steering message." in s, "second answer")
        steered = server.requests[1]["messages"]
        assert any("please be brief" in str(m.get("content")) for m in steered)

        t.type("/pause")
        t.keys("Enter")
        t.wait(lambda s: "⏸ paused" in s and "PAUSED" in s, "pause banner")
        t.type("/resume")
        t.keys("Enter")
        t.wait(lambda s: "resumed after" in s and "⏸ paused" not in s, "resumed")

        t.type("go long")
        t.keys("Enter")
        t.wait(lambda s: "A very long answer that never ends" in s, "long stream")
        t.keys("Escape")
        t.wait(lambda s: "aborted" in s and "idle" in s, "abort")

        t.keys("C-c")
        t.keys("C-c")
        t.wait(lambda s: "Send / steer" not in s, "quit", timeout=10)
    finally:
        never.set()
        t.close()
        server.close()
