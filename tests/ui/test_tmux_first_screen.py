"""The first screen of the ``owltui`` console script on the offline demo model in a real terminal (tmux):
at 120x40 and 80x24 the welcome is at the top (not under a wall of blank lines) and the footer shows
whole keys, none cut mid-word; once the conversation overflows the view, the end stays in view."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from owltui.ui.app import OwlApp
from owltui.ui.widgets.main_screen import MainScreen
from owltui.ui.widgets.prompt_input import PromptInput
from tests.ui.test_tmux import Tmux, _env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TRY = 'Try: "list the files"'
SIZES = [(120, 40), (80, 24)]


class SizedTmux(Tmux):
    """``Tmux`` with a terminal of the given size from the start (the size the app first sees)."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int]) -> None:
        self.sock = f"owltui-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        line = " ".join(subprocess.list2cmdline([c]) for c in cmd)
        width, height = size
        self._tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), "-c", str(cwd), line)


def _demo(tmp_path: Path, size: tuple[int, int]) -> SizedTmux:
    """``owltui --provider demo`` (the console script) in a workspace with two files."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("a\n")
    (ws / "b.txt").write_text("b\n")
    owltui = str(Path(sys.executable).parent / "owltui")
    return SizedTmux([owltui, "--provider", "demo", "--no-session"], _env(tmp_path), ws, size)


def _shown_labels() -> set[str]:
    """The descriptions of the keys the footer may show (the input's, the screen's, the palette)."""
    bindings = [*PromptInput.BINDINGS, *MainScreen.BINDINGS, *OwlApp.BINDINGS]
    return {b.description for b in bindings if not isinstance(b, tuple) and b.description}


def _settled(t: Tmux, what: str, captures: int = 5) -> str:
    """The screen once the footer shows the palette key and ``captures`` captures in a row are the
    same: the footer fits its keys after a refresh, so its first frames on the main screen are
    unfitted (a key cut mid-word, for a moment) - that transient is not what this checks."""
    seen: list[str] = []

    def same(screen: str) -> bool:
        seen[:] = [*seen[-(captures - 1) :], screen]
        return "▏^p palette" in screen and " idle" in screen and seen == [screen] * captures

    return t.wait(same, what)


def _longest_blank_run(lines: list[str]) -> int:
    longest = run = 0
    for line in lines:
        run = run + 1 if not line.strip() else 0
        longest = max(longest, run)
    return longest


@pytest.mark.parametrize("size", SIZES)
def test_welcome_at_the_top_in_tmux(tmp_path: Path, size: tuple[int, int]) -> None:
    t = _demo(tmp_path, size)
    try:
        screen = t.wait(lambda s: TRY in s and " idle" in s, "the welcome")
        lines = screen.splitlines()
        (at,) = [i for i, line in enumerate(lines) if line.strip().startswith(TRY)]
        assert at <= 2, screen  # the welcome's header and its Try: line within the first 3 lines
        assert _longest_blank_run(lines[:at]) <= 2, screen
        assert lines[0].strip().startswith("OwlTUI · demo (offline)"), screen
    finally:
        t.close()


@pytest.mark.parametrize("size", SIZES)
def test_footer_keys_are_whole_in_tmux(tmp_path: Path, size: tuple[int, int]) -> None:
    t = _demo(tmp_path, size)
    try:
        screen = _settled(t, "the footer")
        footer = screen.rstrip("\n").splitlines()[-1]
        keys, _, palette = footer.partition("▏")
        assert palette.strip() == "^p palette", footer
        items = re.split(r"\s{2,}", keys.strip())
        labels = [item.partition(" ")[2] for item in items]
        assert labels[0] == "Send / steer", footer
        assert set(labels) <= _shown_labels(), footer  # every label whole: none cut mid-word
    finally:
        t.close()


def _answered(before: str, screen: str) -> bool:
    """The status line changed from ``before`` and says idle: the run ended."""
    status = screen.splitlines()[-2]
    return status != before and " idle" in status


def test_overflowing_conversation_shows_its_end_in_tmux(tmp_path: Path) -> None:
    t = _demo(tmp_path, (80, 24))
    try:
        status = t.wait(lambda s: TRY in s and " idle" in s, "the welcome").splitlines()[-2]
        for _ in range(4):  # four answers overflow 24 lines
            t.type("list the files")
            t.keys("Enter")
            screen = t.wait(functools.partial(_answered, status), "the answer")
            status = screen.splitlines()[-2]
        lines = screen.splitlines()
        box = max(i for i, line in enumerate(lines) if line.strip().startswith("╭"))
        above = [line.strip() for line in lines[:box] if line.strip()]
        assert TRY not in screen, screen  # scrolled: the welcome went up
        assert above[-1] == "The directory has 2 entries: a.txt, b.txt.", screen  # the end in view
    finally:
        t.close()
