"""The first screen of ``owltui`` on the offline demo model, launched the way ``owltui`` launches it
(the boot frame, then the real runtime attached), at 120x40 and 80x24: the welcome says what to
type, the model is named once, no price or round is shown while idle, and the footer drops whole
keys rather than cutting one mid-word. The conversation starts at the top while it fits the view (the
welcome on the first line, not under blank lines), follows its end once it overflows, and goes back to
the top when the view grows to fit it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from textual.widgets._footer import FooterKey

from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.ui.app import OwlApp
from owltui.ui.boot import Boot, Started
from owltui.ui.widgets.blocks import NoticeBlock
from owltui.ui.widgets.main_screen import FittingFooter
from tests.ui.conftest import owl_app
from tests.ui.test_launched_keys import attached, env_for

pytestmark = pytest.mark.anyio


def launched_demo(tmp_path: Path) -> tuple[OwlApp, Boot]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = env_for(tmp_path)

    def start() -> Started:
        runtime = build_runtime(Options(no_session=True, workspace=workspace, provider="demo"), env=env)
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, workspace)
    return owl_app(boot), boot


def screen_lines(app: OwlApp) -> list[str]:
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip).rstrip() for strip in strips]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_first_screen_says_what_to_type(tmp_path: Path, size: tuple[int, int]) -> None:
    app, boot = launched_demo(tmp_path)
    async with app.run_test(size=size) as pilot:
        await attached(pilot, app, boot)
        await pilot.pause()
        text = " ".join(line.strip() for line in screen_lines(app))
        assert "Try:" in text and '"list the files"' in text and '"read README.md"' in text
        status = str(app.screen.query_one("#status").render())
        assert status.startswith("demo (offline)  idle") and "(demo)" not in status
        assert "$" not in status and "round" not in status


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_footer_drops_whole_keys(tmp_path: Path, size: tuple[int, int]) -> None:
    app, boot = launched_demo(tmp_path)
    async with app.run_test(size=size) as pilot:
        await attached(pilot, app, boot)
        await pilot.pause()
        await pilot.pause()
        footer = app.screen.query_one(FittingFooter)
        keys = [k for k in footer.query(FooterKey) if k.display]
        palette = [k for k in keys if k.has_class("-command-palette")]
        others = [k for k in keys if not k.has_class("-command-palette")]
        assert others and palette
        edge = palette[0].region.x
        assert all(k.region.right <= edge for k in others), [(k.description, k.region) for k in others]
        assert others[0].description.startswith("Send")  # the first keys stay
        last = screen_lines(app)[-1]
        for key in others:
            assert key.description in last  # each shown key whole


async def test_status_shows_no_round_once_idle(tmp_path: Path) -> None:
    app, boot = launched_demo(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await attached(pilot, app, boot)
        bar: Any = app.screen.query_one("#status")
        bar.state.running, bar.state.round, bar.state.cost = True, 3, 0.25
        bar.redraw()
        assert "round 3/40" in str(bar.render()) and "$0.2500" in str(bar.render())
        bar.state.running = False
        bar.redraw()
        assert "round" not in str(bar.render())


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_short_conversation_starts_at_the_top(tmp_path: Path, size: tuple[int, int]) -> None:
    app, boot = launched_demo(tmp_path)
    async with app.run_test(size=size) as pilot:
        await attached(pilot, app, boot)
        await pilot.pause()
        lines = screen_lines(app)
        assert lines[0].strip().startswith("OwlTUI · demo (offline)"), lines[:3]
        assert app.conversation.scroll_y == 0 and app.conversation.following


async def test_conversation_follows_its_end_once_it_overflows(tmp_path: Path) -> None:
    app, boot = launched_demo(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await attached(pilot, app, boot)
        conv = app.conversation
        for n in range(12):
            await conv.add(NoticeBlock(f"note {n}"))
            await pilot.pause()
        assert conv.max_scroll_y > 0 and conv.scroll_y == conv.max_scroll_y and conv.following
        assert "note 11" in " ".join(screen_lines(app))
        await pilot.resize_terminal(80, 60)  # the view grows to fit it all: back to the top
        await pilot.pause()
        await pilot.pause()
        assert conv.max_scroll_y == 0 and conv.scroll_y == 0 and conv.following
        assert screen_lines(app)[0].strip().startswith("OwlTUI · demo (offline)")
        await pilot.resize_terminal(80, 24)  # and overflowing again, the end is in view
        await pilot.pause()
        await pilot.pause()
        assert conv.scroll_y == conv.max_scroll_y > 0 and "note 11" in " ".join(screen_lines(app))


async def test_the_demo_answers_stay_in_view_as_they_overflow(tmp_path: Path) -> None:
    """Four demo answers (a prompt, a folded ``ls`` block, the reply) overflow 24 lines; after each
    the reply is in view and the view still follows the end."""
    app, boot = launched_demo(tmp_path)
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    (tmp_path / "ws" / "b.txt").write_text("b\n")
    async with app.run_test(size=(80, 24)) as pilot:
        await attached(pilot, app, boot)
        conv = app.conversation
        for n in range(6):
            app.input.text = "list the files"
            await pilot.press("enter")
            await app.agent.wait_idle()
            for _ in range(3):
                await pilot.pause()
            assert conv.following and conv.scroll_y == conv.max_scroll_y, n
            lines = screen_lines(app)
            box = max(i for i, line in enumerate(lines) if line.strip().startswith("╭"))
            above = [line.strip() for line in lines[:box] if line.strip()]
            assert above[-1] == "The directory has 2 entries: a.txt, b.txt.", (n, lines)
