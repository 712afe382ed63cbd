"""Pilot test: an MCP server's question in the TUI, against the real runtime and server-everything.
The form is drawn in the conversation; typing stays in the prompt (a question never takes a key
typed there); Ctrl+G reaches the form, a wrong value is refused on the form, Enter sends the answer,
and the server's tool result carries it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import ToolResult
from owltui.testing.scripted import Call, Step
from owltui.ui.widgets.elicit_prompt import ElicitPrompt, FieldInput
from tests.tools.mcp_resources.helpers import mcp_file
from tests.ui.conftest import SIZE, make_runtime_app
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio
ELICIT = "mcp__everything__trigger-elicitation-request"


async def until(pilot: Any, cond: Any, seconds: float = 60) -> None:
    """Let the app run until ``cond()`` holds (the server is a real process: bounded by time)."""
    with anyio.fail_after(seconds):
        while not cond():
            await pilot.pause()


async def test_a_form_is_answered_in_the_tui(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = [Step(calls=[Call(ELICIT, {}, id="e1")]), Step(text="thanks")]
    options = {"mcp_config": mcp_file(tmp_path), "yes": True}
    app = make_runtime_app(steps, ws, env_for(tmp_path), options=options)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ready)
        await type_text(pilot, "ask me")
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.conversation.query(ElicitPrompt)))
        prompt = app.conversation.query_one(ElicitPrompt)
        assert "MCP server everything asks" in prompt.text and "Your full, legal name" in prompt.text
        fields = {i.field.name: i for i in prompt.query(FieldInput)}
        assert fields["integer"].value == "42" and fields["firstLine"].value.startswith("It was")
        await type_text(pilot, "yn")  # letters typed go to the prompt, not to the question
        assert app.input.text == "yn" and app.focused is app.input
        await pilot.press("ctrl+g")
        assert app.focused is fields["name"]
        await type_text(pilot, "Ada")
        fields["integer"].value = "500"
        await pilot.press("enter")
        await pilot.pause()
        assert "at most 100" in prompt.text and app.conversation.query(ElicitPrompt)  # still open
        fields["integer"].value = "7"
        fields["name"].focus()
        await pilot.press("enter")
        await until(pilot, lambda: not app.conversation.query(ElicitPrompt))
        await until(pilot, lambda: not app.agent.running)
        assert app.focused is app.input
        results = [r for r in app.agent.history.items() if isinstance(r, ToolResult)]
        assert "Ada" in results[0].content and '"integer": 7' in results[0].content
        await app.action_quit()
