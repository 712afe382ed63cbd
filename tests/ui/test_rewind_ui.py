"""Pilot tests: the /rewind picker (labels and note, then files / conversation / both) restores a
file; /undo says what it restored; the interrupt notice lists a background job and kills it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from textual.widgets import OptionList

from owltui.testing.scripted import Call, Step
from owltui.ui.control.interrupt import InterruptNotice
from owltui.ui.widgets.blocks import NoticeBlock
from owltui.ui.widgets.picker import PickerScreen
from tests.ui.conftest import SIZE, wait_for
from tests.ui.test_freeze_banner import runtime_app
from tests.ui.test_input import type_text

pytestmark = pytest.mark.anyio


def notes(app: Any) -> list[str]:
    return [b.text for b in app.conversation.query(NoticeBlock)]


async def send(pilot: Any, app: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    model = app.agent.config.model
    await wait_for(pilot, lambda: len(model.requests) >= 2 and not app.agent.running, "turn done", limit=4000)


def options(app: Any) -> list[str]:
    ol = app.screen.query_one(OptionList)
    return [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]


async def test_rewind_picker_restores_a_file(tmp_path: Path) -> None:
    app = runtime_app(
        tmp_path, [Step(calls=[Call("write", {"path": "a.txt", "content": "new\n"})]), Step(text="wrote it")]
    )
    ws = tmp_path / "ws"
    (ws / "a.txt").write_text("old\n")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, app, "change a")
        assert (ws / "a.txt").read_text() == "new\n"
        await type_text(pilot, "/rewind")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "checkpoint picker", limit=2000)
        shown = options(app)
        assert shown and "change a" in shown[0]  # a label (the prompt), not a bare id
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, PickerScreen) and "Restore what" in app.screen.title_text,
            "what picker",
        )
        assert options(app)[:2] == ["files and conversation", "files only (the conversation stays)"]
        await pilot.press("down", "enter")  # files only
        await wait_for(pilot, lambda: (ws / "a.txt").read_text() == "old\n", "restored", limit=2000)
        await wait_for(pilot, lambda: any("restored" in n and "a.txt" in n for n in notes(app)), "notice")
        await app.action_quit()


async def test_undo_says_what_it_restored(tmp_path: Path) -> None:
    app = runtime_app(
        tmp_path, [Step(calls=[Call("write", {"path": "b.txt", "content": "x\n"})]), Step(text="ok")]
    )
    ws = tmp_path / "ws"
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, app, "write b")
        assert (ws / "b.txt").exists()
        await app.run_line("/undo")
        await wait_for(
            pilot,
            lambda: any(n.startswith("undone: 1 file") and "b.txt" in n for n in notes(app)),
            "undo notice",
            limit=2000,
        )
        assert not (ws / "b.txt").exists()
        await app.action_quit()


async def test_interrupt_notice_lists_a_job_and_kills_it(tmp_path: Path) -> None:
    never = anyio.Event()
    app = runtime_app(
        tmp_path,
        [
            Step(calls=[Call("bash", {"command": "sleep 300", "timeout": 0.5})]),
            Step(text="waiting", gate=never),
        ],
    )
    rt: Any = app.runtime
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "start it")
        await pilot.press("enter")
        with anyio.fail_after(10):
            while not (rt.jobs is not None and rt.jobs.still_running()):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        await wait_for(pilot, lambda: len(rt.agent.config.model.requests) >= 2, "second call")
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: bool(app.conversation.query(InterruptNotice)), "interrupt notice", limit=2000
        )
        notice = app.conversation.query_one(InterruptNotice)
        assert "still running" in notice.text and "sleep 300" in notice.text
        assert notice.has_focus
        await pilot.press("k")
        await wait_for(
            pilot, lambda: notice.decided == "killed" and "killed:" in notice.text, "killed", limit=2000
        )
        with anyio.fail_after(10):
            while rt.jobs.still_running():  # noqa: ASYNC110
                await anyio.sleep(0.02)
        assert app.input.has_focus
        await app.action_quit()
