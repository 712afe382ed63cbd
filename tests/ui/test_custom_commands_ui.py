"""Pilot tests: the workspace's custom commands in the TUI - completion after '/', the command
palette, /help, running one (its template is the message), and a file named like a built-in
command shown as a notice at start (the built-in stays)."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.testing.scripted import Step
from owltui.ui.app import OwlApp
from owltui.ui.widgets.blocks import InputBlock, NoticeBlock
from owltui.ui.widgets.prompt_input import CompletionList
from tests.ui.conftest import SIZE, make_app, wait_for
from tests.ui.test_input import type_text

pytestmark = pytest.mark.anyio


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    commands = ws / ".owltui" / "commands"
    (commands / "git").mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: review a file\nargument-hint: FILE\n---\nReview $1 now"
    )
    (commands / "git" / "log.md").write_text("Summarize the git log")
    (commands / "quit.md").write_text("not the built-in")
    return ws


def notes(app: OwlApp) -> list[str]:
    return [b.text for b in app.conversation.query(NoticeBlock)]


async def test_completion_palette_help_and_running_one(tmp_home: Path) -> None:
    app = make_app([Step(text="reviewed")], workspace=_workspace(tmp_home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert any("quit.md is named like the built-in command /quit" in n for n in notes(app)), notes(app)
        comp = app.query_one(CompletionList)
        await type_text(pilot, "/rev")
        assert [c.name for c in comp.matches] == ["review"]
        await pilot.press("escape", "ctrl+c")
        palette = {c.title: c for c in app.get_system_commands(app.screen)}
        assert {"/review", "/git:log", "/quit"} <= set(palette)
        assert palette["/review"].help == "review a file (project)"
        palette["/review"].callback()  # it takes an argument: the input is filled, nothing runs
        await pilot.pause()
        assert app.input.text == "/review "
        await type_text(pilot, "a.py")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(InputBlock)), "the message")
        assert app.conversation.query(InputBlock).first().text == "Review a.py now"
        await pilot.press("ctrl+c")
        await type_text(pilot, "/help")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Custom commands" in n for n in notes(app)), "help")
        shown = next(n for n in notes(app) if "Custom commands" in n)
        assert "/git:log" in shown and "/review FILE" in shown
        await app.action_quit()


def test_plain_mode_says_what_was_left_out_and_lists_the_rest(tmp_home: Path) -> None:
    from owltui.testing.host import LocalRuntime
    from owltui.testing.scripted import ScriptedModel
    from owltui.ui.plain import PlainRepl

    ws = _workspace(tmp_home)
    (ws / ".owltui" / "commands" / "bad.md").write_text(
        "---\ndescription: ok\nthis is not a field\n---\nbody"
    )
    out: list[str] = []
    repl = PlainRepl(LocalRuntime(ScriptedModel([]), workspace=ws), write=out.append)
    assert out == [
        "! the custom command file .owltui/commands/quit.md is named like the built-in command /quit; "
        "rename the file",
        "! custom command .owltui/commands/bad.md left out: line 3: expected 'key: value'",
    ]
    assert "/git:log" in repl.commands.help_text() and "/review FILE" in repl.commands.help_text()
