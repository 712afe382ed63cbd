"""RunStats counts from events (the main agent's only) and the inbox; describe words notices once."""

from __future__ import annotations

from owltui.agent import events as ev
from owltui.agent.inbox import Inbox
from owltui.agent.messages import Usage
from owltui.session.describe import Notice, describe, format_duration, model_display, requirement_outcome
from owltui.session.stats import RunStats


def end(text: str = "", **usage: float) -> ev.MessageEnd:
    return ev.MessageEnd(text=text, thinking="", tool_calls=[], stop_reason="stop", usage=Usage(**usage))


def test_stats_count_usage_rounds_jobs_and_the_queue() -> None:
    emitter, inbox, stats = ev.Emitter(), Inbox(), RunStats()
    stop = stats.follow(emitter, inbox)
    emitter.emit(ev.TurnStart(round=2))
    emitter.emit(end("first", input_tokens=10, output_tokens=3, cache_read_tokens=4, cost=0.5))
    emitter.emit(end("final", input_tokens=1, cache_write_tokens=2))
    emitter.emit(
        ev.MessageEnd(
            agent="task-1",
            text="sub",
            thinking="",
            tool_calls=[],
            stop_reason="stop",
            usage=Usage(input_tokens=1000),
        )
    )
    emitter.emit(ev.RequirementEvent(tool="ls", escalation=2))
    emitter.emit(ev.JobStarted(job_id="1", command="sleep 9"))
    emitter.emit(ev.JobStarted(job_id="2", command="make"))
    emitter.emit(ev.JobFinished(job_id="1", command="sleep 9", exit_code=0))
    inbox.push("steer", "a")
    inbox.push("follow_up", "b")
    inbox.push("aside", "c")
    assert (stats.tokens_in, stats.tokens_out, stats.cache_read, stats.cache_write) == (11, 3, 4, 2)
    assert stats.cost == 0.5 and stats.round == 2 and stats.rounds == 2 and stats.answer == "final"
    assert stats.escalation == 2 and stats.jobs == {"2": "make"}
    assert stats.queued == {"steer": 1, "follow_up": 1, "aside": 1} and stats.waiting == 2
    emitter.emit(ev.AgentEnd(reason="done"))
    assert stats.escalation == 0 and stats.end is not None and stats.end.reason == "done"
    assert stats.usage() == {
        "input_tokens": 11,
        "output_tokens": 3,
        "cache_read_tokens": 4,
        "cache_write_tokens": 2,
        "cost": 0.5,
    }
    stats.new_session()
    assert stats.tokens_in == stats.rounds == stats.round == 0 and stats.jobs == {"2": "make"}
    stop()
    emitter.emit(end("later", input_tokens=5))
    assert stats.tokens_in == 0


def test_describe_words_every_notice() -> None:
    assert describe(end("x")) is None
    assert describe(
        ev.MessageEnd(text="", thinking="", tool_calls=[], stop_reason="error", usage=Usage(), error="boom")
    ) == Notice("model error: boom", "error")
    assert describe(ev.RequirementEvent(tool="ls", escalation=0)) == Notice(
        "requirement: reminded the model to call `ls`"
    )
    assert describe(ev.RequirementEvent(tool="ls", escalation=2)) == Notice(
        "requirement escalated (2/3): the next call is forced to `ls`", "warning"
    )
    assert describe(ev.JobFinished(job_id="3", command="make", exit_code=2)) == Notice(
        "background job 3 finished (exit 2): make"
    )
    assert describe(ev.Retry(attempt=2, delay_s=1.25, reason="429")) == Notice(
        "retrying in 1.2 s (attempt 2): 429", "warning"
    )
    assert describe(ev.Resumed(paused_ms=12_000)).text == "resumed after 12 s"  # type: ignore[union-attr]
    assert describe(ev.AgentEnd(reason="aborted"), queued=1) == Notice(
        "aborted; 1 queued message kept", "warning"
    )
    assert describe(ev.AgentEnd(reason="aborted"), queued=2).text == "aborted; 2 queued messages kept"  # type: ignore[union-attr]
    assert describe(ev.AgentEnd(reason="error")) == Notice("error: the run failed", "error")
    assert describe(ev.AgentEnd(reason="round_limit")) == Notice("stopped: round limit", "warning")
    assert describe(ev.AgentEnd(reason="done")) is None
    assert requirement_outcome("satisfied", "ls") == Notice(
        "requirement satisfied: `ls` was called", "success"
    )
    assert requirement_outcome("set", "ls") is None
    assert model_display("demo") == "demo (offline)" and model_display("openai:x") == "openai:x"
    assert model_display("demo (offline)") == "demo (offline)"  # said once
    assert format_duration(75) == "1m 15s"


def test_compaction_events_are_worded() -> None:
    from owltui.agent import events as ev
    from owltui.session.describe import describe

    start = describe(ev.CompactionStart(reason="auto", tokens_before=4100))
    assert start is not None and "4.1k" in start.text
    assert describe(ev.CompactionStart(reason="manual")) is None
    done = describe(ev.Compaction(reason="auto", tokens_before=4100, tokens_after=900))
    assert done is not None and "automatically" in done.text and "900" in done.text
    stopped = describe(ev.CompactionFailed(reason="auto", error="boom", failures=3, stopped=True))
    assert stopped is not None and stopped.kind == "error" and "off for the rest" in stopped.text
