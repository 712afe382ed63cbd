"""Compaction: summary by the same loop, cut at a user prompt, model view changed, items kept."""

from __future__ import annotations

import pytest

from owltui.agent.history import MemoryHistory
from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from owltui.agent.scripted import ScriptedModel, Step
from owltui.features.compaction import CompactionError, compact, cut_point

pytestmark = pytest.mark.anyio


def convo() -> list:
    return [
        UserMessage(text="fix the bug"),
        AssistantMessage(text="reading", tool_calls=[ToolCall(id="c1", name="read", arguments={"path": "a.py"})]),
        ToolResult(call_id="c1", name="read", content="x" * 5000),
        AssistantMessage(text="fixed a.py"),
        UserMessage(text="now the tests"),
        AssistantMessage(text="tests pass"),
        UserMessage(text="thanks"),
        AssistantMessage(text="welcome"),
    ]


async def test_compact_summarises_older_turns_and_keeps_recent_ones() -> None:
    history = MemoryHistory(convo())
    model = ScriptedModel([Step(text="Goal: fix bug in a.py. Done: fixed.")])
    result = await compact(history, model, keep_turns=2)
    assert result.first_kept == 4
    view = history.model_view()
    assert isinstance(view[0], UserMessage) and "Goal: fix bug" in view[0].text
    assert [getattr(i, "text", None) for i in view[1:]] == ["now the tests", "tests pass", "thanks", "welcome"]
    assert len(history.items()) == 8  # nothing is thrown away
    prompt = model.views[0][0].text
    assert "[user] fix the bug" in prompt and "[tool call] read" in prompt and "[...]" in prompt
    assert "now the tests" not in prompt
    assert model.requests[0].tools == ()
    history.append(UserMessage(text="more"))
    assert history.model_view()[-1].text == "more"


async def test_cut_never_separates_call_and_result_and_short_sessions_refuse() -> None:
    items = convo()
    assert isinstance(items[cut_point(items, 1)], UserMessage)
    with pytest.raises(CompactionError, match="too short"):
        await compact(MemoryHistory(items[:4]), ScriptedModel([]), keep_turns=2)


async def test_failed_summary_changes_nothing() -> None:
    history = MemoryHistory(convo())
    with pytest.raises(CompactionError, match="could not be written"):
        await compact(history, ScriptedModel([Step(text="", error="HTTP 500")]))
    assert history.model_view() is history.items()
