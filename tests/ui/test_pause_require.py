"""Pilot tests: /pause, /resume and F2 (banner, parked agents, typing keeps working); /require with an
argument, with the picker (command and Ctrl+T), escalations, and failure after 3 forced turns."""

from __future__ import annotations

import pytest

from owltui.testing.scripted import Call, Step
from owltui.ui.widgets.blocks import InputBlock, NoticeBlock
from owltui.ui.widgets.pause_banner import PauseBanner
from owltui.ui.widgets.picker import PickerScreen
from tests.ui.conftest import SIZE, SlowTool, make_app, wait_for
from tests.ui.test_input import type_text

pytestmark = pytest.mark.anyio


def notes(app) -> list[str]:
    return [b.text for b in app.conversation.query(NoticeBlock)]


async def test_pause_and_resume_commands() -> None:
    app = make_app([Step(text="answer after the pause")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "/pause")
        await pilot.press("enter")
        gate = app.runtime.gate
        assert gate.paused
        banner = app.query_one(PauseBanner)
        await wait_for(pilot, lambda: banner.display, "banner")
        assert "paused 12 s" in str(banner.render())
        assert "PAUSED" in str(app.status.render())
        # typing and prompting keep working while paused: the run parks before its model call
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "main" in gate.parked, "parked")
        banner.redraw()
        assert "parked: main (before model)" in str(banner.render())
        await type_text(pilot, "more")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.inbox.texts("steer") == ["more"])
        await type_text(pilot, "/resume")
        await pilot.press("enter")
        assert not gate.paused
        await wait_for(pilot, lambda: any(n.startswith("resumed after") for n in notes(app)), "resume note")
        await wait_for(pilot, lambda: not banner.display)
        await app.agent.wait_idle()
        await wait_for(
            pilot, lambda: ("steer", "more") in [(b.lane, b.text) for b in app.conversation.query(InputBlock)]
        )
        await app.action_quit()


async def test_f2_toggles_gate_and_is_in_footer() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        keys = {b.binding.key: b.binding.description for b in app.active_bindings.values()}
        assert keys.get("f2") == "Pause/resume"
        await pilot.press("f2")
        assert app.runtime.gate.paused
        await pilot.press("f2")
        assert not app.runtime.gate.paused
        await wait_for(pilot, lambda: any(n.startswith("resumed after") for n in notes(app)))
        await app.action_quit()


async def test_require_with_argument_shows_in_status_until_satisfied() -> None:
    tool = SlowTool()
    app = make_app([Step(calls=[Call("slow", {"text": "x"})]), Step(text="done")], tools=[tool])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "/require slow needed first")
        await pilot.press("enter")
        req = app.runtime.requirement.current
        assert req is not None and req.tool == "slow" and req.reason == "needed first"
        assert "require slow" in str(app.status.render())
        await type_text(pilot, "go")
        await pilot.press("enter")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: any("requirement satisfied" in n for n in notes(app)))
        assert app.runtime.requirement.current is None
        assert "require" not in str(app.status.render())
        assert any(b.lane == "reminder" for b in app.conversation.query(InputBlock))
        await app.action_quit()


async def test_require_unknown_tool_is_an_error_notice() -> None:
    app = make_app(tools=[SlowTool()])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "/require nope")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("unknown tool `nope`" in n for n in notes(app)))
        assert app.runtime.requirement.current is None
        await app.action_quit()


@pytest.mark.parametrize("how", ["command", "ctrl+t"])
async def test_require_picker(how: str) -> None:
    app = make_app(tools=[SlowTool()])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        if how == "command":
            await type_text(pilot, "/require")
            await pilot.press("enter")
        else:
            await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "picker")
        await pilot.press("down")  # read_result, slow (sorted): pick the second
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.requirement.current is not None)
        assert app.runtime.requirement.current.tool == "slow"
        await app.action_quit()


async def test_require_escalations_then_failure_is_shown_not_crash() -> None:
    steps = [Step(text=f"chatting {i}") for i in range(4)]
    app = make_app(steps, tools=[SlowTool()])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "/require slow")
        await pilot.press("enter")
        await type_text(pilot, "go")
        await pilot.press("enter")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: any("requirement failed" in n for n in notes(app)), "failure")
        got = notes(app)
        assert any("requirement escalated (1/3)" in n for n in got)
        assert any("requirement escalated (3/3)" in n for n in got)
        assert any(n.startswith("error: The model did not call the required tool `slow`") for n in got)
        assert app.is_running
        await app.action_quit()
