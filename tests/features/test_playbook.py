"""Playbooks: parsing, the step_complete tool, nudges at the stop boundary, limits."""

from __future__ import annotations

import pytest

from owltui.agent.messages import ToolResult
from owltui.features.playbook import (
    PlaybookError,
    Progress,
    StepCompleteTool,
    parse_playbook,
    playbook_hooks,
    playbook_prompt,
)
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Echo, make_agent

pytestmark = pytest.mark.anyio

BOOK = """---
time_limit: 30m
---
# Release check

Run before every release.

## Run the tests
Use pytest.

## Update the changelog
"""


def test_parse_headings_header_and_numbered_list() -> None:
    book = parse_playbook(BOOK, "r.md")
    assert book.title == "Release check" and book.time_limit == 1800
    assert [s.title for s in book.steps] == ["Run the tests", "Update the changelog"]
    assert book.steps[0].body == "Use pytest." and book.max_rounds == 80
    assert "Run before every release." in book.preamble
    listed = parse_playbook("# T\n1. first\n   detail\n2) second\n", "l.md")
    assert [(s.title, s.body) for s in listed.steps] == [("first", "detail"), ("second", "")]


@pytest.mark.parametrize(
    "text,msg",
    [
        ("# nothing here\n", "no steps"),
        ("---\ntime_limit: soon\n---\n1. a\n", "not a duration"),
        ("---\ntime_limit: 1h\n1. a\n", "never closed"),
    ],
)
def test_bad_playbooks_give_one_clear_sentence(text: str, msg: str) -> None:
    with pytest.raises(PlaybookError, match=msg):
        parse_playbook(text, "bad.md")


async def test_steps_completed_in_order_and_run_ends() -> None:
    book = parse_playbook(BOOK, "r.md")
    progress = Progress(book)
    agent, model, _ = make_agent(
        [
            Step(calls=[Call("echo", {"text": "tests"}), Call("step_complete", {"step": 2, "summary": "x"})]),
            Step(calls=[Call("step_complete", {"step": 1, "summary": "tests pass"})]),
            Step(calls=[Call("step_complete", {"step": 2, "summary": "changelog updated"})]),
            Step(text="All done."),
        ],
        [Echo(), StepCompleteTool(progress)],
        system_prompt=playbook_prompt(book),
        hooks=playbook_hooks(progress),
        max_rounds=book.max_rounds,
    )
    out = await agent.run("Run the playbook.")
    assert out.text == "All done." and progress.finished
    rs = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert rs[1].status == "error" and "Finish step 1" in rs[1].content
    assert "All 2 steps are complete" in rs[-1].content
    assert "step_complete" in model.requests[0].system and "1. Run the tests" in model.requests[0].system


async def test_agent_that_stops_early_is_nudged_a_bounded_number_of_times() -> None:
    book = parse_playbook(BOOK, "r.md")
    progress = Progress(book)
    agent, model, events = make_agent(
        [Step(text="I think I'm done.")] * 10, [StepCompleteTool(progress)], hooks=playbook_hooks(progress)
    )
    out = await agent.run("Run the playbook.")
    assert out.reason == "done" and not progress.finished
    assert model.calls == 4  # the first stop and 3 nudges
    notices = [e.text for e in events if e.type == "input" and e.lane == "notice"]
    assert len(notices) == 3 and "Step 1 (Run the tests)" in notices[0]
