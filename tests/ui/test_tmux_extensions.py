"""Custom commands and hooks in the TUI launched the way a user launches it (the ``owltui`` console
script on the demo model, in a real terminal): ``/review a.txt``, its last keys and Enter in one burst
(as a paste or tmux delivers them), sends the command's template, and a user hook's run is one line
on screen."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from tests.ui.test_tmux_first_screen import TRY, _answered, _demo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_a_custom_command_and_a_hook_line_in_tmux(tmp_path: Path) -> None:
    commands = tmp_path / "ws" / ".owltui" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: review a file\n---\nread $1")
    cfg = tmp_path / "cfg" / "owltui"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text(
        '[[hooks.PostToolUse]]\nmatcher = "read"\nhooks = [{ type = "command", command = "true" }]\n'
    )
    t = _demo(tmp_path, (100, 30))  # its workspace is tmp_path/ws (a.txt, b.txt)
    try:
        status = t.wait(lambda s: TRY in s and " idle" in s, "the welcome").splitlines()[-2]
        t.type("/")
        t.wait(lambda s: "/followup" in s, "every command offered")
        t.keys("review a.txt", "Enter")  # the rest and Enter in one burst, the list still the one for "/"
        screen = t.wait(functools.partial(_answered, status), "the answer")
        assert "▎ you read a.txt" in screen, screen  # the template, with its argument, was the message
        assert "hook PostToolUse [read]" in screen, screen  # the hook's run, one line
    finally:
        t.close()
