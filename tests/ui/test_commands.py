"""Pilot tests: slash commands (/model /sessions /new /compact /theme /help /quit, unknown), completion
after '/', the command palette, pruning of old blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.testing.scripted import Step
from owltui.ui.widgets.blocks import AssistantBlock, InputBlock, NoticeBlock
from owltui.ui.widgets.picker import PickerScreen
from owltui.ui.widgets.prompt_input import CompletionList
from tests.ui.conftest import SIZE, make_app, make_runtime_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio


def notes(app) -> list[str]:
    return [b.text for b in app.conversation.query(NoticeBlock)]


async def run(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def test_help_model_compact_unknown() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await run(pilot, "/help")
        assert any("/require [TOOL [reason]]" in n and "Alt+Enter" in n for n in notes(app))
        await run(pilot, "/model")
        assert "model: scripted:scripted" in notes(app)
        await run(pilot, "/model other")
        assert "switching models is not available here" in notes(app)
        await run(pilot, "/compact")
        assert "/compact is not available in this build" in notes(app)
        await run(pilot, "/frobnicate")
        assert any(n.startswith("unknown command /frobnicate") for n in notes(app))
        await app.action_quit()


async def test_double_slash_sends_literal() -> None:
    app = make_app([Step(text="ok")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await run(pilot, "//etc/hosts")
        await wait_for(pilot, lambda: bool(app.conversation.query(InputBlock)))
        assert app.conversation.query_one(InputBlock).text == "/etc/hosts"
        await app.action_quit()


async def test_completion_after_slash() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        comp = app.query_one(CompletionList)
        await type_text(pilot, "/")
        assert comp.display and comp.matches == app.commands.slash_list
        await type_text(pilot, "re")
        names = [c.name for c in comp.matches]
        assert names[:2] == ["resume", "require"] and all(n.startswith("re") for n in names)
        await pilot.press("down", "tab")
        assert app.input.text == "/require "
        assert not comp.display
        await pilot.press("ctrl+c")
        await type_text(pilot, "/pa")
        await pilot.press("enter")  # accepts the completion and runs it (no arguments)
        assert app.runtime.gate.paused
        await type_text(pilot, "/th")
        await pilot.press("escape")
        assert not comp.display
        await app.action_quit()


async def test_quit_command() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await run(pilot, "/quit")
        await wait_for(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0


async def test_theme_command_and_picker_save() -> None:
    saved: list[str] = []
    app = make_app(save_theme=saved.append)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.theme == "owl-dark"
        await run(pilot, "/theme owl-light")
        await wait_for(pilot, lambda: saved == ["owl-light"])
        assert app.theme == "owl-light"
        await run(pilot, "/theme nope")
        assert any(n.startswith("unknown theme 'nope'") for n in notes(app))
        await run(pilot, "/theme")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PickerScreen))
        assert app.theme == "owl-light"
        await app.action_quit()


async def test_command_palette_lists_commands() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for name in (
            "pause",
            "resume",
            "require",
            "model",
            "sessions",
            "new",
            "compact",
            "theme",
            "help",
            "quit",
        ):
            assert f"/{name}" in titles
        palette_pause = next(c for c in app.get_system_commands(app.screen) if c.title == "/pause")
        palette_pause.callback()
        await pilot.pause()
        assert app.runtime.gate.paused
        await app.action_quit()


async def test_sessions_and_new_with_runtime(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options
    from owltui.testing.scripted import ScriptedModel
    from owltui.ui.app import OwlApp
    from owltui.ui.app_options import AppOptions
    from owltui.ui.themes.loader import PACKAGE_THEMES

    env = env_for(tmp_path)
    runtime = build_runtime(Options(workspace=ws), model=ScriptedModel([Step(text="one")]), env=env)
    app = OwlApp(runtime, AppOptions(theme_dirs=[PACKAGE_THEMES], elapsed=lambda: 1.0))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        first = runtime.session_id
        await run(pilot, "hello")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: bool(app.conversation.query(AssistantBlock)))
        await run(pilot, "/sessions")
        assert any(f"current session: {first}" in n and "hello" in n for n in notes(app))
        await run(pilot, "/new")
        assert runtime.session_id != first
        assert not app.conversation.query(AssistantBlock)
        assert len(app.agent.history.items()) == 0
        await app.action_quit()


async def test_new_without_session() -> None:
    app = make_app([Step(text="one")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await run(pilot, "hi")
        await app.agent.wait_idle()
        await run(pilot, "/new")
        assert len(app.agent.history.items()) == 0
        assert notes(app) == ["new session"]
        await app.action_quit()


async def test_old_blocks_are_pruned() -> None:
    app = make_app([Step(text=f"answer {i}") for i in range(8)], max_blocks=6)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        for i in range(8):
            await run(pilot, f"q{i}")
            await app.agent.wait_idle()
        await wait_for(pilot, lambda: app.conversation.pruned >= 10)
        assert len(app.conversation.children) <= 7
        assert any("earlier blocks pruned" in n for n in notes(app))
        await app.action_quit()


async def test_compact_with_runtime_says_what_happened(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    app = make_runtime_app([], ws, env_for(tmp_path), options={"no_session": False}, elapsed=lambda: 1.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await run(pilot, "/compact")
        await wait_for(pilot, lambda: len(notes(app)) == 2, "the outcome")
        assert notes(app) == [
            "compacting: summarising the older part of the conversation",
            "compaction failed: The conversation is too short to compact.",
        ]
        await app.action_quit()


async def test_compact_is_said_once_in_the_words_the_automatic_one_uses(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = [
        Step(text="answer one " * 50),
        Step(text="answer two " * 50),
        Step(text="They asked two things."),
    ]
    app = make_runtime_app(steps, ws, env_for(tmp_path), elapsed=lambda: 1.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        for prompt in ("question one " * 50, "question two " * 50):
            await run(pilot, prompt)
            await app.agent.wait_idle()
        await run(pilot, "/compact")
        await wait_for(
            pilot, lambda: any(n.startswith("compacted") for n in notes(app)), f"the outcome {notes(app)}"
        )
        await pilot.pause()
        said = [n for n in notes(app) if "compact" in n]
        assert said[0] == "compacting: summarising the older part of the conversation"
        assert len(said) == 2 and said[1].startswith("compacted on request: ~"), said
        await app.action_quit()
