"""The conversation's blocks in a real terminal (tmux), on the ``owltui`` console script against a
loopback OpenAI-compatible server: a prompt whose ``@mention`` Tab completed is drawn once, its
attachments once; a finished bash call shows its first lines under its folded block, with how many
more there are, and config ``bash_output_lines`` sets how many."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.ui.test_tmux import Tmux, _env, _launched, first_request_retried

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TWELVE = "for i in $(seq 1 12); do echo out-line$i; done"


def _run_bash(tmp_path: Path, config: str) -> str:
    """The screen after the model's bash call printed 12 lines and the run ended."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "cfg" / "owltui").mkdir(parents=True)
    (tmp_path / "cfg" / "owltui" / "config.toml").write_text(config)
    server = FakeOpenAI().add(Turn(calls=[("bash", {"command": TWELVE})]), Turn(text="Counted to twelve."))
    t = Tmux([*_launched(server.url), "--no-session", "--yes"], _env(tmp_path), ws)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.type("count")
        t.keys("Enter")
        screen = t.wait(lambda s: "Counted to twelve." in s and " idle" in s, "the answer")
        t.quit()
        return screen
    finally:
        t.close()
        server.close()


@first_request_retried
def test_bash_first_lines_in_tmux(tmp_path: Path) -> None:
    screen = _run_bash(tmp_path, "")
    below = screen.split("✓ bash", 1)[1].split("Counted to twelve.", 1)[0]
    shown = [line.strip(" ▎") for line in below.splitlines()[1:] if line.strip(" ▎")]
    assert shown == ["out-line1", "out-line2", "out-line3", "out-line4", "out-line5", "… 7 more lines"]


@first_request_retried
def test_bash_output_lines_in_tmux(tmp_path: Path) -> None:
    screen = _run_bash(tmp_path, "bash_output_lines = 2\n")
    below = screen.split("✓ bash", 1)[1].split("Counted to twelve.", 1)[0]
    shown = [line.strip(" ▎") for line in below.splitlines()[1:] if line.strip(" ▎")]
    assert shown == ["out-line1", "out-line2", "… 10 more lines"]


@first_request_retried
def test_mention_prompt_drawn_once_in_tmux(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    server = FakeOpenAI().add(Turn(text="Read the notes."))
    t = Tmux([*_launched(server.url), "--no-session"], _env(tmp_path), ws)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.type("what is in @no")
        t.wait(lambda s: "notes.txt" in s, "the completion")
        t.keys("Tab")  # completes to "@notes.txt " (a space after it)
        t.wait(lambda s: "│ what is in @notes.txt" in s, "the mention completed")
        t.keys("Enter")
        screen = t.wait(lambda s: "Read the notes." in s and " idle" in s, "the answer")
        assert screen.count("what is in @notes.txt") == 1, screen
        assert screen.count("notes.txt") == 2, screen  # the prompt, then its folded attachment
        assert "attached: notes.txt" in screen
        assert "beta" in str(server.requests[0]["messages"][-1]["content"])
        t.quit()
    finally:
        t.close()
        server.close()


@first_request_retried
def test_keys_typed_during_a_long_turn_show_while_it_runs_in_tmux(tmp_path: Path) -> None:
    """A turn of 300 tool rounds on the launched TUI: what is typed meanwhile is drawn in the input
    before the turn ends, and the turn is drawn to its end (the drawing worker on the user's path;
    ``test_drawing`` holds the cases that tell it from a drawing that keys wait behind)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    rounds = [Turn(calls=[("ls", {"path": "."})]) for _ in range(300)]
    server = FakeOpenAI().add(*rounds, Turn(text="All rounds done."))
    t = Tmux([*_launched(server.url), "--no-session", "--yes", "--max-rounds", "400"], _env(tmp_path), ws)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.type("go")
        t.keys("Enter")
        t.wait(lambda s: "✓ ls" in s, "the first rounds")
        t.type("typed meanwhile")
        screen = t.wait(lambda s: "│ typed meanwhile" in s, "the keys drawn")
        assert "All rounds done." not in screen  # drawn while the rounds go on
        t.wait(lambda s: "All rounds done." in s and " idle" in s, "the end of the turn", timeout=60)
        t.keys("C-c")  # clears the input; then Ctrl+C twice quits
        t.wait(lambda s: "│ typed meanwhile" not in s, "the input cleared")
        t.quit()
    finally:
        t.close()
        server.close()
