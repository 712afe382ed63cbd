from __future__ import annotations

import pytest

from owltui.testing.scripted import Step
from owltui.ui.widgets.blocks import AssistantBlock, InputBlock
from tests.ui.conftest import SIZE, make_app, wait_for


@pytest.mark.anyio
async def test_prompt_streams_answer() -> None:
    app = make_app([Step(text="Hello **world**, streamed in chunks.", chunk=4)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready, "runtime")
        await pilot.press(*"hi", "enter")
        await wait_for(pilot, lambda: any(b.done for b in app.conversation.query(AssistantBlock)), "answer")
        blocks = list(app.conversation.query(AssistantBlock))
        assert blocks[0].text == "Hello **world**, streamed in chunks."
        assert [b.text for b in app.conversation.query(InputBlock)] == ["hi"]
        await app.action_quit()
