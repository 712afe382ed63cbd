"""A long turn on an app launched the way ``owltui`` launches it: hundreds of tool rounds keep as
widgets the blocks that fill a few views (never more than the cap) and nothing in the presenter
grows with the rounds; scrolled back,
PageUp draws the earlier blocks again from the session's history, up to the first message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import ToolResult
from owltui.agent.model import ModelRequest
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.boot import Boot, Started
from owltui.ui.widgets.blocks import InputBlock
from owltui.ui.widgets.conversation import KEEP_SCREENS
from owltui.ui.widgets.tool_block import ToolBlock
from tests.ui.conftest import SIZE, owl_app, wait_for
from tests.ui.test_launched_keys import attached, env_for

pytestmark = pytest.mark.anyio

ROUNDS = 300
CAP = 60
SCROLLED = 150  # the rounds scrolled back through
PAGES = 150  # PageUp presses allowed to reach the first message (one page draws ~20 rounds again)


def rounds(n: int) -> Any:
    """``n`` rounds of one ``ls`` call each, then an answer."""

    def step(request: ModelRequest) -> Step:
        calls = sum(1 for m in request.messages if isinstance(m, ToolResult))
        return Step(text="all done") if calls >= n else Step(calls=[Call("ls", {"path": "."})])

    return step


def launched(workspace: Path, env: dict[str, str], n: int = ROUNDS) -> tuple[OwlApp, Boot]:
    def start() -> Started:
        options = Options(no_session=True, workspace=workspace, max_rounds=n + 5)
        runtime = build_runtime(options, model=ScriptedModel(rounds(n), record=False), env=env)
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, workspace)
    return owl_app(boot, max_blocks=CAP), boot


def first_prompt_in_view(app: OwlApp) -> bool:
    conv = app.conversation
    first = next(iter(conv.query(InputBlock)), None)
    return first is not None and first.text == "go" and conv.scroll_y == 0


async def long_turn(pilot: Any, app: OwlApp, boot: Boot) -> None:
    await attached(pilot, app, boot)
    app.agent.prompt("go")
    await app.agent.wait_idle()
    await wait_for(pilot, lambda: app.agent.last_outcome is not None and app.life.drawn, "the turn drawn")
    await pilot.pause()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    return ws


async def test_a_long_turn_keeps_the_cap_and_no_map_grows(workspace: Path, tmp_path: Path) -> None:
    app, boot = launched(workspace, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await long_turn(pilot, app, boot)
        assert len(app.agent.history.items()) > 2 * ROUNDS
        conv = app.conversation
        kept = conv.blocks()
        assert len(kept) < CAP  # small blocks: those that fill the views kept, fewer than the cap
        filled = sum(b.outer_size.height + b.styles.margin.top for b in kept)
        assert filled >= KEEP_SCREENS * conv.scrollable_content_region.height  # PageUp scrolls first
        assert conv.pruned >= ROUNDS - CAP
        p = app.presenter
        assert p is not None
        assert len(p._tools) <= CAP  # the presenter forgets the blocks the conversation dropped
        assert len(p._echoed) <= 1
        assert all(b.parent is conv for b in p._tools.values())


async def test_page_up_reaches_the_first_message_again_and_again(workspace: Path, tmp_path: Path) -> None:
    app, boot = launched(workspace, env_for(tmp_path), n=SCROLLED)
    async with app.run_test(size=SIZE) as pilot:
        await long_turn(pilot, app, boot)
        conv = app.conversation
        assert not any(b.text == "go" for b in conv.query(InputBlock))
        for _ in range(2):
            for _ in range(PAGES):
                if first_prompt_in_view(app):
                    break
                await pilot.press("pageup")
                await pilot.pause()
            assert first_prompt_in_view(app)
            assert conv._marker() is None
            calls = [b.call_id for b in conv.query(ToolBlock)]
            assert len(calls) == len(set(calls)) == SCROLLED  # every call once, none missing
            app.action_follow()
            await pilot.pause()
            await wait_for(pilot, lambda: conv.max_scroll_y > 0 and conv.scroll_y == conv.max_scroll_y)
            await app.presenter.notice("back at the bottom")  # type: ignore[union-attr]
            await pilot.pause()
            assert len(conv.blocks()) <= CAP  # back at the bottom, the cap holds again
