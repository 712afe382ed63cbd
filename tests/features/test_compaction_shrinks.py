"""Automatic compaction always shrinks, by the provider's own count: a scripted provider that counts
tokens more densely than characters / 4 (tiny items, a high reported usage), huge items, a 20,000-token
window, and a user message that alone is over the target (said once, not compacted again and again).
Each asserts, by the provider's count, that the first request after a summary is smaller than the one
before it and at most half the window."""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

import pytest

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.context import TARGET_SHARE, item_chars
from owltui.agent.messages import AssistantMessage, Usage, UserMessage
from owltui.agent.model import ModelRequest
from owltui.agent.pause import PauseGate
from owltui.features.compaction import SUMMARY_PROMPT, compact_for_loop
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.agent.helpers import Echo, check_history
from tests.features.test_compaction import done_files

pytestmark = pytest.mark.anyio

ASK = "Read files 1 to {n} one by one with `echo`, then say how many there were. Don't skip any."


def provider_count(req: ModelRequest, density: float) -> int:
    """The provider's input tokens: ``density`` tokens a character of the whole request."""
    tools = sum(len(s.description) + len(json.dumps(s.parameters)) for s in req.tools)
    return math.ceil(density * (len(req.system) + tools + sum(map(item_chars, req.messages))))


def reader(files: int, size: int, density: float):
    """Reads the next file it cannot see was read; the summariser lists the files done."""

    def step(req: ModelRequest) -> Step:
        usage = Usage(input_tokens=provider_count(req, density), output_tokens=10)
        if req.system == SUMMARY_PROMPT:
            done = ",".join(map(str, sorted(done_files([req.messages[0]]))))
            return Step(text=f"Done: read files {done}. Pending: the rest.", usage=usage)
        nxt = next((n for n in range(1, files + 1) if n not in done_files(req.messages)), None)
        if nxt is None:
            return Step(text=f"All {files} files read.", usage=usage)
        return Step(calls=[Call("echo", {"text": f"contents of file {nxt}: " + "x" * size})], usage=usage)

    return step


async def run(
    files: int, size: int, density: float, window: int = 5000, ask: str = ""
) -> tuple[Agent, ScriptedModel, Echo, list[Any], list[int | None]]:
    """The run, its events, and the provider's count of each main request (None: a summary call)."""
    model = ScriptedModel(reader(files, size, density))
    echo = Echo()
    agent = Agent(
        LoopConfig(
            model=model, tools=[echo], context_window=window, compactor=compact_for_loop, max_rounds=300
        ),
        gate=PauseGate(),
    )
    events: list[Any] = []
    agent.emitter.subscribe(events.append)
    out = await agent.run(ask or ASK.format(n=files))
    assert out.reason == "done" and out.text == f"All {files} files read."
    assert [int(re.findall(r"file (\d+)", t)[0]) for t in echo.ran] == list(range(1, files + 1))
    counts = [
        None
        if r.system == SUMMARY_PROMPT
        else provider_count(ModelRequest(system=r.system, messages=v, tools=r.tools), density)
        for r, v in zip(model.requests, model.views, strict=True)
    ]
    check_history(agent)
    return agent, model, echo, events, counts


def around_summaries(counts: list[int | None]) -> list[tuple[int, int]]:
    """(the main request before a summary call, the first one after it), by the provider's count."""
    pairs = []
    for i, c in enumerate(counts):
        if c is None:
            before = next(x for x in reversed(counts[:i]) if x is not None)
            after = next(x for x in counts[i + 1 :] if x is not None)
            pairs.append((before, after))
    return pairs


def assert_shrinks(counts: list[int | None], window: int) -> list[tuple[int, int]]:
    pairs = around_summaries(counts)
    assert pairs, "no compaction happened"
    for before, after in pairs:
        assert after < before and after <= window * TARGET_SHARE, (before, after, window)
    return pairs


async def test_tiny_items_with_a_dense_provider_count_shrink_under_half_the_window() -> None:
    *_, events, counts = await run(files=60, size=20, density=0.75)
    pairs = assert_shrinks(counts, 5000)
    # not again and again: every compaction is followed by several rounds of work
    summary_calls = [i for i, c in enumerate(counts) if c is None]
    assert all(b - a > 5 for a, b in itertools.pairwise(summary_calls))
    assert not [e for e in events if e.type == "compaction_failed"]
    assert len(pairs) == len([e for e in events if e.type == "compaction"])


async def test_huge_items_shrink_under_half_the_window() -> None:
    *_, events, counts = await run(files=8, size=5000, density=0.3)
    assert_shrinks(counts, 5000)
    assert not [e for e in events if e.type == "compaction_failed"]


async def test_a_20000_token_window_keeps_only_what_fits_half_of_it() -> None:
    agent, *_, events, counts = await run(files=30, size=1200, density=1.0, window=20_000)
    assert_shrinks(counts, 20_000)
    mark = agent.history.compaction()  # type: ignore[attr-defined]
    assert mark is not None


async def test_a_user_message_over_the_target_is_said_once_not_compacted_again_and_again() -> None:
    ask = ASK.format(n=40) + " Context: " + "y" * 12_000  # about 3,000 tokens of a 5,000-token window
    agent, _, _, events, counts = await run(files=40, size=20, density=0.25, ask=ask)
    assert counts.count(None) == 1  # one summary, then no more tries
    (failed,) = [e for e in events if e.type == "compaction_failed"]
    assert failed.stopped and "cannot bring" in failed.error and "the user's own messages" in failed.error
    notices = [e for e in events if e.type == "input" and e.lane == "notice"]
    assert len(notices) == 1 and "cannot bring the conversation under 50%" in notices[0].text
    assert agent.context.stopped
    first = agent.history.model_view()[0]
    assert isinstance(first, UserMessage) and first.text == ask  # the request stays word for word
    assert isinstance(agent.history.model_view()[-1], AssistantMessage)
