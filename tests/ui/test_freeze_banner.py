"""Pilot test: the pause banner says what the pause froze (a running command) and what is parked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.testing.scripted import Call, Step
from owltui.ui.app import OwlApp
from owltui.ui.widgets.pause_banner import PauseBanner
from tests.ui.conftest import SIZE, make_runtime_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio


def runtime_app(tmp_path: Path, steps: list[Step]) -> OwlApp:
    """The real runtime with --yes (tools run without asking) in ``tmp_path/ws``."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return make_runtime_app(steps, ws, env_for(tmp_path), options={"yes": True}, elapsed=lambda: 3.0)


async def test_banner_names_the_frozen_command(tmp_path: Path) -> None:
    app = runtime_app(
        tmp_path, [Step(calls=[Call("bash", {"command": "sleep 2; echo woke"})]), Step(text="done")]
    )
    rt: Any = app.runtime
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: rt.freezer is not None and bool(rt.jobs is not None), "runtime")
        # the command is running once the batch started it and its process is the freezer's
        await wait_for(
            pilot,
            lambda: (
                rt.agent.running
                and app.status.state.running
                and bool(app.conversation.children)
                and bool(rt.freezer._commands)
            ),
            "the command running",
            limit=4000,
        )
        await pilot.press("f2")
        await wait_for(pilot, lambda: rt.gate.frozen, "frozen")
        banner = app.query_one(PauseBanner)
        await wait_for(pilot, lambda: rt.freezer.describe() == "1 command frozen", "command frozen")
        banner.redraw()
        text = str(banner.render())
        assert banner.display and "⏸ paused" in text and "1 command frozen" in text
        assert "running work continues" not in text
        await pilot.press("f2")
        await wait_for(pilot, lambda: not rt.gate.paused, "resumed")
        with anyio.fail_after(15):
            await rt.agent.wait_idle()
        await app.action_quit()


async def test_banner_says_parked_and_park_only(tmp_path: Path) -> None:
    app = runtime_app(tmp_path, [Step(text="after the pause")])
    rt: Any = app.runtime
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await app.run_line("/pause")
        await type_text(pilot, "start while paused")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "main" in rt.gate.parked, "parked")
        banner = app.query_one(PauseBanner)
        banner.redraw()
        text = str(banner.render())
        assert "parked: main (before model)" in text and "frozen" not in text
        await pilot.press("f2")
        with anyio.fail_after(10):
            await rt.agent.wait_idle()
        await app.action_quit()
