"""The todo list in a real terminal (tmux), the ``owltui`` console script against a loopback
OpenAI-compatible server: the pinned checklist fills as the model updates it, F8 collapses it to one
line, and after a quit, ``-c`` draws it again; after ``/compact`` the next request carries it word for
word and it is still on screen."""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.ui.test_tmux import Tmux, _env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

FIRST = [
    {"content": "Read the parser", "status": "in_progress"},
    {"content": "Fix split()", "status": "pending"},
    {"content": "Run the tests", "status": "pending"},
]
SECOND = [
    {"content": "Read the parser", "status": "done"},
    {"content": "Fix split()", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
]


def _owltui(url: str, *extra: str) -> list[str]:
    script = str(Path(sys.executable).parent / "owltui")
    return [
        script,
        "--provider",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        url,
        "--sandbox",
        "off",
        *extra,
    ]


def test_the_checklist_fills_survives_continue_and_a_compaction_in_tmux(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path)
    hold = threading.Event()
    server = FakeOpenAI().add(
        Turn(calls=[("todo", {"items": FIRST})]),
        Turn(text="Reading.", calls=[("todo", {"items": SECOND})], hold=hold),
        Turn(text="Fixing split now."),
    )
    t = Tmux(_owltui(server.url), env, ws)
    try:
        t.wait(lambda s: "Send / steer" in s, "the TUI")
        t.type("fix the parser")
        t.keys("Enter")
        t.wait(lambda s: "▶ Read the parser" in s and "☐ Fix split()" in s, "the first list")
        hold.set()
        t.wait(
            lambda s: "☑ Read the parser" in s and "▶ Fix split()" in s and "Fixing split now." in s, "update"
        )
        t.keys("F8")
        t.wait(lambda s: "todo 1/3 · now: Fix split()" in s and "☑ Read the parser" not in s, "collapsed")
        t.keys("F8")
        t.wait(lambda s: "☑ Read the parser" in s, "expanded")
        t.quit()
    finally:
        hold.set()
        t.close()

    server.add(Turn(text="Goals: fix the parser. Done: read it."), Turn(text="Going on with split."))
    t = Tmux(_owltui(server.url, "-c"), env, ws)
    try:
        t.wait(lambda s: "resumed session" in s and "▶ Fix split()" in s and "☑ Read the parser" in s, "-c")
        t.type("/compact")
        t.keys("Enter")
        t.wait(lambda s: len(server.requests) == 4 and "compacted on request" in s, "the compaction")
        t.type("go on")
        t.keys("Enter")
        t.wait(lambda s: "Going on with split." in s, "the next answer")
        summary = str(server.requests[4]["messages"][1]["content"])
        for item in SECOND:
            assert f"- [{item['status']}] {item['content']}" in summary, summary
        assert "▶ Fix split()" in t.screen()
        t.quit()
    finally:
        t.close()
        server.close()
