"""Keys typed in one burst with Enter (tmux ``send-keys``, a paste-like terminal read): the edits' own
``Changed`` messages reach the input after Enter, so the completion list on screen is still the one
for ``/`` alone. Enter must act on the text in the editor, never on that stale list (which offered
``/followup`` first and replaced the typed line with it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from owltui.testing.scripted import Step
from tests.ui.conftest import SIZE, make_runtime_app, wait_for
from tests.ui.test_daily import inputs
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio


async def test_enter_right_after_a_burst_sends_the_typed_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    app = make_runtime_app([Step(text="noted")], ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("slash")
        comp = app.main.completions
        await wait_for(pilot, lambda: comp.display and comp.current is not None, "every command offered")
        inp = app.main.input
        inp.insert("/hello there")  # its Changed message is queued, not handled yet
        inp._send()  # what Enter runs, ahead of that message
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: bool(inputs(app)), "the message")
        assert inputs(app) == [("user", "/hello there")]
        assert inp.text == "" and not comp.display
        await app.action_quit()


async def test_tab_right_after_a_burst_completes_the_typed_stem(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    app = make_runtime_app([], ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("slash")
        comp = app.main.completions
        await wait_for(pilot, lambda: comp.display and comp.current is not None, "every command offered")
        inp = app.main.input
        inp.insert("resu")  # its Changed message is queued, not handled yet
        inp.on_key(events.Key("tab", None))  # the input's own handler for Tab, ahead of that message
        assert inp.text.rstrip() == "/resume"
        await app.action_quit()
