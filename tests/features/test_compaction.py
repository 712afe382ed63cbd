"""Compaction: summary by the same loop, model view changed, items kept. ``/compact`` cuts at a user
prompt; automatic compaction (a scripted model whose reported usage grows past 80 % of a 5,000-token
window) cuts between rounds inside one long turn, keeps the request word for word, and persists."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.context import item_chars
from owltui.agent.history import History, MemoryHistory
from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult, Usage, UserMessage
from owltui.agent.model import ModelRequest
from owltui.agent.pause import PauseGate
from owltui.features.compaction import (
    SUMMARY_PROMPT,
    CompactionError,
    compact,
    compact_for_loop,
    cut_point,
    round_cut,
    round_cuts,
)
from owltui.session.store.store import SessionStore
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.agent.helpers import Echo, check_history

pytestmark = pytest.mark.anyio


def convo() -> list:
    return [
        UserMessage(text="fix the bug"),
        AssistantMessage(
            text="reading", tool_calls=[ToolCall(id="c1", name="read", arguments={"path": "a.py"})]
        ),
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
    assert [getattr(i, "text", None) for i in view[1:]] == [
        "now the tests",
        "tests pass",
        "thanks",
        "welcome",
    ]
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


# ---- automatic compaction on the loop (issue 13 item 3) ----------------------------------------
FILES = 12
REQUEST = "Read files 1 to 12 one by one with `echo`, then say how many there were. Don't skip any."


def _usage(req: ModelRequest) -> Usage:
    """What a provider reports: the whole request (system, 200 tokens of tools, the messages)."""
    return Usage(
        input_tokens=(len(req.system) + sum(map(item_chars, req.messages))) // 4 + 200, output_tokens=20
    )


def done_files(messages: Sequence[Item]) -> set[int]:
    """The files the model can see were read: in results, or listed as done by a summary."""
    seen: set[int] = set()
    for m in messages:
        text = m.content if isinstance(m, ToolResult) else m.text if isinstance(m, UserMessage) else ""
        seen |= {int(n) for n in re.findall(r"contents of file (\d+)", text)}
        for listed in re.findall(r"Done: read files ([\d,]+)", text):
            seen |= {int(n) for n in listed.split(",")}
    return seen


def worker(
    files: int = FILES, size: int = 1500, summaries: list[str] | None = None, fail_summaries: bool = False
):
    """A scripted model that reads the next file it cannot see was read, and a summariser that lists
    the files done: whatever is not in the view is read again, so a lossy summary shows."""

    def step(req: ModelRequest) -> Step:
        if req.system == SUMMARY_PROMPT:
            if fail_summaries:
                return Step(error="HTTP 500 from the summariser")
            transcript = req.messages[0].text
            assert isinstance(transcript, str)
            if summaries is not None:
                summaries.append(transcript)
            done = ",".join(map(str, sorted(done_files([UserMessage(text=transcript)]))))
            pending = f"read the files after {done.rsplit(',', 1)[-1]}" if done else "all of them"
            return Step(text=f"Done: read files {done}. Pending: {pending}.", usage=_usage(req))
        nxt = next((n for n in range(1, files + 1) if n not in done_files(req.messages)), None)
        if nxt is None:
            return Step(text=f"All {files} files read.", usage=_usage(req))
        return Step(
            calls=[Call("echo", {"text": f"contents of file {nxt}: " + "x" * size})], usage=_usage(req)
        )

    return step


def auto_agent(model: ScriptedModel, history: History | None = None, **cfg: Any) -> tuple[Agent, Echo, list]:
    echo = Echo()
    agent = Agent(
        LoopConfig(
            model=model, tools=[echo], context_window=5000, compactor=compact_for_loop, max_rounds=100, **cfg
        ),
        history,
        gate=PauseGate(),
    )
    events: list = []
    agent.emitter.subscribe(events.append)
    return agent, echo, events


def main_views(model: ScriptedModel) -> list[list[Any]]:
    return [v for r, v in zip(model.requests, model.views, strict=True) if r.system != SUMMARY_PROMPT]


def paired(view: Sequence[Item]) -> bool:
    """Every call in the view has its result right after its message, and no result is orphaned."""
    open_calls: set[str] = set()
    for item in view:
        if isinstance(item, ToolResult):
            if item.call_id not in open_calls:
                return False
            open_calls.discard(item.call_id)
        else:
            if open_calls:
                return False
            if isinstance(item, AssistantMessage):
                open_calls = {c.id for c in item.tool_calls}
    return True


async def test_usage_past_80_percent_of_a_5000_token_window_compacts_and_the_work_finishes() -> None:
    model = ScriptedModel(worker())
    agent, echo, events = auto_agent(model)
    out = await agent.run(REQUEST)
    assert out.reason == "done" and out.text == f"All {FILES} files read."
    # nothing was re-executed, nothing skipped
    assert [int(re.findall(r"file (\d+)", t)[0]) for t in echo.ran] == list(range(1, FILES + 1))
    done = [e for e in events if e.type == "compaction"]
    assert done and all(e.reason == "auto" for e in done)
    assert all(e.tokens_before >= 4000 > e.tokens_after for e in done)
    views = main_views(model)
    first_after = next(i for i, v in enumerate(views) if len(v) > 1 and isinstance(v[1], UserMessage))
    for view in views[first_after:]:  # the request word for word, the summary, the recent rounds
        assert view[0] == UserMessage(text=REQUEST)
        assert view[1].lane == "notice" and view[1].text.startswith("Summary of the earlier conversation:")
        assert "Done: read files 1," in view[1].text and "Pending:" in view[1].text
        assert "do not run them again" in view[1].text
        assert isinstance(view[2], AssistantMessage) and paired(view)
    assert max(_usage_of(model)) < 5000  # no request over the window
    check_history(agent)
    assert len(agent.history.items()) == 2 * FILES + 2  # every item kept; only the view changed


def _usage_of(model: ScriptedModel) -> list[int]:
    return [
        _usage(ModelRequest(system=r.system, messages=v)).input_tokens
        for r, v in zip(model.requests, model.views, strict=True)
    ]


async def test_a_long_single_turn_of_30_rounds_compacts_between_rounds() -> None:
    summaries: list[str] = []
    model = ScriptedModel(worker(files=30, size=900, summaries=summaries))
    agent, echo, events = auto_agent(model)
    out = await agent.run(REQUEST.replace("12", "30"))
    assert out.reason == "done" and len(echo.ran) == 30
    assert [int(re.findall(r"file (\d+)", t)[0]) for t in echo.ran] == list(range(1, 31))
    compactions = [e for e in events if e.type == "compaction"]
    assert len(compactions) >= 3 and len(summaries) == len(compactions)
    assert all(paired(v) for v in main_views(model))  # never a call without its result
    # each compaction sits between rounds: after a turn_start, before that round's model call
    seq = [e.type for e in events]
    for i, t in enumerate(seq):
        if t == "compaction":
            assert seq[i - 2 : i] == ["turn_start", "compaction_start"] and seq[i + 1] == "message_start"
    # a later summary reads the earlier one (not the whole session again) and the kept request
    assert "[summary of the conversation before]" in summaries[1]
    assert "contents of file 1:" not in summaries[1]
    assert f"[user request, kept word for word] {REQUEST.replace('12', '30')}" in summaries[1]
    mark = agent.history.compaction()  # type: ignore[attr-defined]
    assert mark is not None and mark.pinned == (0,)
    check_history(agent)


async def test_three_failed_compactions_stop_trying_with_a_notice() -> None:
    model = ScriptedModel(worker(files=8, fail_summaries=True))
    agent, echo, events = auto_agent(model)
    out = await agent.run(REQUEST)
    assert out.reason == "done" and len(echo.ran) == 8  # the run still finishes its work
    failed = [e for e in events if e.type == "compaction_failed"]
    assert [e.stopped for e in failed] == [False, False, True]
    assert all("HTTP 500 from the summariser" in e.error for e in failed)
    assert sum(r.system == SUMMARY_PROMPT for r in model.requests) == 3  # then it stops trying
    notice = [e for e in events if e.type == "input" and e.lane == "notice"]
    assert len(notice) == 1 and "Automatic compaction failed 3 times in a row" in notice[0].text
    assert not [e for e in events if e.type == "compaction"]
    assert agent.history.model_view() is agent.history.items()  # nothing was replaced


async def test_queued_input_is_delivered_after_the_summary() -> None:
    dry, _, seen = auto_agent(ScriptedModel(worker()))
    await dry.run(REQUEST)
    first = next(i for i, e in enumerate(seen) if e.type == "compaction")
    last_batch = [e for e in seen[:first] if e.type == "tool_start"][-1].arguments["text"].split(":")[0]
    model = ScriptedModel(worker())
    agent, _, events = auto_agent(model)
    sent = [False]

    def steer_once(event: Any) -> None:  # queued while the batch before the compaction runs
        if (
            event.type == "tool_start"
            and event.arguments["text"].startswith(last_batch + ":")
            and not sent[0]
        ):
            sent[0] = True
            agent.steer("also count the lines")

    agent.emitter.subscribe(steer_once)
    await agent.run(REQUEST)
    seq = [(e.type, getattr(e, "text", None)) for e in events]
    first = next(i for i, (t, _) in enumerate(seq) if t == "compaction")
    steer = seq.index(("input", "also count the lines"))
    assert first < steer  # the summary first, then the queued message
    view = next(v for v in main_views(model) if UserMessage(text="also count the lines", lane="steer") in v)
    where = view.index(UserMessage(text="also count the lines", lane="steer"))
    assert view[1].lane == "notice" and where == len(view) - 1  # after the summary and the kept rounds


async def test_a_resumed_session_starts_from_the_summary(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "scripted")
    model = ScriptedModel(worker())
    agent, _, events = auto_agent(model, history=store)
    await agent.run(REQUEST)
    assert any(e.type == "compaction" for e in events)
    live = list(store.model_view())
    store.close()
    resumed = SessionStore.open(store.path)
    assert list(resumed.model_view()) == live
    assert (
        resumed.model_view()[0] == UserMessage(text=REQUEST)
        and "Done: read files" in resumed.model_view()[1].text
    )
    assert resumed.compaction() == store.compaction()
    resumed.close()


async def test_manual_compact_emits_nothing_itself_and_reads_only_what_came_after_the_summary() -> None:
    history = MemoryHistory(convo())
    await compact(history, ScriptedModel([Step(text="first summary")]), keep_turns=1)
    history.append(UserMessage(text="one more"))
    history.append(AssistantMessage(text="sure"))
    model = ScriptedModel([Step(text="second summary")])
    done = await compact(history, model, keep_turns=0)
    prompt = model.views[0][0].text
    assert "[summary of the conversation before]\nfirst summary" in prompt and "fix the bug" not in prompt
    assert "one more" in prompt and done.first_kept == len(history.items())
    assert [getattr(i, "text", "") for i in history.model_view()] == [
        "Summary of the earlier conversation:\nsecond summary"
    ]


def test_round_cuts_never_split_a_call_from_its_result() -> None:
    items = convo()
    cuts = round_cuts(items)
    assert 2 not in cuts and cuts == [1, 3, 4, 5, 6, 7, 8]
    assert round_cut(items, 0, keep_chars=0) == 8  # nothing fits: summarise it all
    assert round_cut(items, 0, keep_chars=10_000) == 1  # everything after the request fits
    assert round_cut(items, 4, keep_chars=50) == 6
