"""Pilot tests of plan mode against the real runtime: ``/plan TEXT`` enters it (the status bar says
so), a scripted model reads, tries a write (refused with the plan-mode line), presents a plan with
``exit_plan``; the plan screen shows it; accept switches the mode and the same run goes on with the
write allowed; refine sends the user's words back and stays in plan mode; reject stays too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from owltui.agent.messages import ToolResult
from owltui.testing.scripted import Call, Step
from owltui.ui.app import OwlApp
from owltui.ui.control.plan_review import PlanScreen
from tests.ui.conftest import SIZE, make_runtime_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio

PLAN = "# Plan\n\n1. write `out.txt`\n2. say done"


def planning_steps(after: list[Step]) -> list[Step]:
    return [
        Step(calls=[Call("read", {"path": "notes.txt"}, id="r1")]),
        Step(calls=[Call("write", {"path": "out.txt", "content": "early\n"}, id="w1")]),
        Step(calls=[Call("bash", {"command": "ls"}, id="b1")]),
        Step(calls=[Call("exit_plan", {"plan": PLAN}, id="p1")]),
        *after,
    ]


def results(app: OwlApp) -> dict[str, ToolResult]:
    return {i.call_id: i for i in app.agent.history.items() if isinstance(i, ToolResult)}


def status_text(app: OwlApp) -> str:
    return str(app.main.status.render())


async def start_planning(pilot: Pilot[Any], app: OwlApp) -> PlanScreen:
    await wait_for(pilot, lambda: app.ready)
    await type_text(pilot, "/plan add out.txt")
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), "the plan screen")
    screen = app.screen
    assert isinstance(screen, PlanScreen)
    return screen


async def test_accept_switches_the_mode_and_the_run_goes_on(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    steps = planning_steps(
        [
            Step(calls=[Call("write", {"path": "out.txt", "content": "done\n"}, id="w2")]),
            Step(text="finished"),
        ]
    )
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_planning(pilot, app)
        assert app.runtime.permissions is not None and app.runtime.permissions.mode == "plan"
        assert "plan mode" in status_text(app)
        shown = str(screen.query_one("#plan-text").source)  # type: ignore[attr-defined]
        assert "write `out.txt`" in shown
        got = results(app)
        assert not got["r1"].is_error
        assert got["w1"].is_error and "plan mode" in got["w1"].content and "exit_plan" in got["w1"].content
        assert got["b1"].is_error and "plan mode" in got["b1"].content
        assert not (ws / "out.txt").exists()
        await pilot.press("e")  # accept into edits: the write runs without asking
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run ends")
        await app.agent.wait_idle()
        assert app.runtime.permissions.mode == "edits"
        got = results(app)
        assert not got["p1"].is_error and "permission mode is now edits" in got["p1"].content
        assert not got["w2"].is_error
        assert (ws / "out.txt").read_text() == "done\n"
        await wait_for(pilot, lambda: "plan mode" not in status_text(app), "status bar")
        assert "edits mode" in status_text(app)
        await app.action_quit()


async def test_refine_sends_the_words_back_and_stays_in_plan_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    steps = planning_steps([Step(text="I will revise it")])
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await start_planning(pilot, app)
        await pilot.press("r")
        await type_text(pilot, "also add tests")
        assert isinstance(app.screen, PlanScreen), "letters typed while refining are not answers"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run ends")
        await app.agent.wait_idle()
        got = results(app)["p1"]
        assert got.is_error and "also add tests" in got.content and "still in plan mode" in got.content
        assert app.runtime.permissions is not None and app.runtime.permissions.mode == "plan"
        assert not (ws / "out.txt").exists()
        await app.action_quit()


async def test_reject_stays_in_plan_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    steps = planning_steps([Step(text="stopping")])
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await start_planning(pilot, app)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run ends")
        await app.agent.wait_idle()
        got = results(app)["p1"]
        assert got.is_error and "rejected" in got.content
        assert app.runtime.permissions is not None and app.runtime.permissions.mode == "plan"
        assert not isinstance(app.screen, PlanScreen)
        await app.action_quit()


async def test_exit_plan_outside_plan_mode_is_a_short_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = [Step(calls=[Call("exit_plan", {"plan": PLAN}, id="p1")]), Step(text="ok")]
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run ends")
        await app.agent.wait_idle()
        got = results(app)["p1"]
        assert got.is_error and "Not in plan mode" in got.content
        assert not isinstance(app.screen, PlanScreen)
        await app.action_quit()


def test_plain_mode_prints_the_plan_and_how_to_answer() -> None:
    from owltui.agent import events as ev
    from owltui.ui.plain import PlainPrinter

    out: list[str] = []
    PlainPrinter(out.append)(ev.PlanProposed(call_id="p1", plan="# Plan\n1. step \x1b[2Jone"))
    assert "  │ 1. step one" in out and any("/plan-answer accept" in line for line in out)


async def test_an_aborted_run_closes_the_plan_screen(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    app = make_runtime_app(planning_steps([Step(text="unused")]), ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await start_planning(pilot, app)
        app.commands.call("abort")
        await wait_for(pilot, lambda: not isinstance(app.screen, PlanScreen), "the plan screen closed")
        await app.agent.wait_idle()
        assert app.runtime.plans is not None and app.runtime.plans.pending() == []
        assert app.runtime.plans.mode == "plan"
        await app.action_quit()
