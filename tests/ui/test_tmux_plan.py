"""Plan mode in a real terminal (tmux), the ``owltui`` console script against a loopback
OpenAI-compatible server: F6 cycles the mode in the status bar (the mode key's second binding: tmux
sends Alt+M as Esc then m, which a loaded machine may deliver in two reads), ``/plan TEXT`` enters plan mode
and sends TEXT, a write is refused, the plan screen shows the model's plan, ``e`` accepts it into
edits and the same run goes on to write the file."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.ui.test_tmux import Tmux, _env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_plan_mode_in_tmux(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = FakeOpenAI().add(
        Turn(calls=[("write", {"path": "out.txt", "content": "early\n"})]),
        Turn(calls=[("exit_plan", {"plan": "# Step list\n\n1. write **out.txt**\n2. report back"})]),
        Turn(calls=[("write", {"path": "out.txt", "content": "planned\n"})]),
        Turn(text="All written as planned."),
    )
    owltui = str(Path(sys.executable).parent / "owltui")
    cmd = [owltui, "--provider", "openai", "--model", "fake-model", "--base-url", server.url, "--no-session"]
    t = Tmux(cmd, _env(tmp_path), ws)
    try:
        t.wait(lambda s: "Send / steer" in s and " idle" in s, "the TUI")
        t.keys("F6")
        t.wait(lambda s: "edits mode" in s, "the mode key: edits")
        t.keys("F6")
        t.wait(lambda s: "plan mode" in s, "the mode key: plan")
        t.keys("F6")
        t.wait(lambda s: "plan mode" not in s and "edits mode" not in s, "the mode key: back to ask")
        t.type("/plan write out.txt")
        t.keys("Enter")
        screen = t.wait(lambda s: "The model's plan" in s and "Step list" in s, "the plan screen")
        assert "a accept" in screen and "r refine" in screen and "n / Esc reject" in screen
        assert "plan mode" in screen  # the status bar, behind the screen
        assert not (ws / "out.txt").exists()
        t.keys("e")
        t.wait(lambda s: "All written as planned." in s and " idle" in s, "the run goes on")
        screen = t.screen()
        assert "edits mode" in screen and "plan accepted" in screen, screen
        assert (ws / "out.txt").read_text() == "planned\n"
        refused = str(server.requests[1]["messages"])
        assert "plan mode" in refused and "exit_plan" in refused
        t.quit()
    finally:
        t.close()
        server.close()
