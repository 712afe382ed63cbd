"""What OwlTUI says about an event, worded once for every front end.

``describe(event)`` returns a ``Notice`` (one line of text and a kind) or None when the event is not
worth a line of its own (streamed text, tool blocks, a run that ended normally). The TUI draws it as
a notice block, plain mode prints it after ``·`` (``!`` for errors), print mode writes some of them
to stderr as progress. Wording about things that are not events (the requirement slot's outcome, the
model's name) lives here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from owltui.agent import events as ev
from owltui.agent.requirement import MAX_ESCALATIONS

Kind = Literal["info", "warning", "error", "success"]


@dataclass(frozen=True)
class Notice:
    text: str
    kind: Kind = "info"


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def model_display(label: str) -> str:
    """The model as the status bar and ``/model`` name it (the offline demo says so, once)."""
    if not label.startswith("demo") or "offline" in label:
        return label
    return f"{label} (offline)"


def first_steps(label: str) -> str:
    """What to type first, for the welcome: the offline demo model names requests it understands
    (other models understand anything, and say nothing here)."""
    if not label.startswith("demo"):
        return ""
    from owltui.providers.demo import try_saying

    return f"Try: {try_saying()}. For real work, set ANTHROPIC_API_KEY or OPENAI_API_KEY (see README)."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


# ---- one function per event type; each gets the event and the number of queued messages -------
def _message_end(e: ev.MessageEnd, _queued: int) -> Notice | None:
    return Notice(f"model error: {e.error}", "error") if e.error else None


def _requirement(e: ev.RequirementEvent, _queued: int) -> Notice:
    if e.escalation == 0:
        return Notice(f"requirement: reminded the model to call `{e.tool}`")
    return Notice(
        f"requirement escalated ({e.escalation}/{MAX_ESCALATIONS}): the next call is forced to `{e.tool}`",
        "warning",
    )


def _job_started(e: ev.JobStarted, _queued: int) -> Notice:
    return Notice(f"background job {e.job_id} started: {e.command}")


def _job_finished(e: ev.JobFinished, _queued: int) -> Notice:
    return Notice(f"background job {e.job_id} finished (exit {e.exit_code}): {e.command}")


def _hook_end(e: ev.HookEnd, _queued: int) -> Notice:
    """One compact line per hook run: event, matcher, decision, time (and what went wrong)."""
    matcher = f" [{e.matcher}]" if e.matcher else ""
    said = f": {e.decision}" if e.decision else ""
    line = f"hook {e.hook_event}{matcher}{said} ({format_duration(e.duration_s)})"
    if e.error:
        return Notice(f"{line}: {e.error}", "warning")
    return Notice(line, "warning" if e.decision in ("block", "deny") else "info")


def _retry(e: ev.Retry, _queued: int) -> Notice:
    return Notice(f"retrying in {e.delay_s:.1f} s (attempt {e.attempt}): {e.reason}", "warning")


def _paused(_e: ev.Paused, _queued: int) -> Notice:
    return Notice("paused: agents park before their next model call or tool start")


def _resumed(e: ev.Resumed, _queued: int) -> Notice:
    return Notice(f"resumed after {format_duration(e.paused_ms / 1000)}")


def _agent_end(e: ev.AgentEnd, queued: int) -> Notice | None:
    if e.reason == "aborted":
        kept = f"; {_plural(queued, 'queued message')} kept" if queued else ""
        return Notice(f"aborted{kept}", "warning")
    if e.reason == "error":
        return Notice(f"error: {e.error or 'the run failed'}", "error")
    if e.reason in ("round_limit", "failure_limit"):
        return Notice(f"stopped: {e.reason.replace('_', ' ')}", "warning")
    return None


def _tokens(n: int | None) -> str:
    return "?" if n is None else (f"{n / 1000:.1f}k" if n >= 1000 else str(n))


COMPACTING = "summarising the older part of the conversation"  # automatic or asked for, one wording


def _compaction_start(e: ev.CompactionStart, _queued: int) -> Notice | None:
    if e.reason != "auto":
        return None  # /compact says it as it starts
    return Notice(f"compacting: {COMPACTING} (~{_tokens(e.tokens_before)} tokens, near the context window)")


def _compaction(e: ev.Compaction, _queued: int) -> Notice:
    how = "automatically" if e.reason == "auto" else "on request"
    return Notice(
        f"compacted {how}: ~{_tokens(e.tokens_before)} → ~{_tokens(e.tokens_after)} tokens; "
        "the model sees a summary of the earlier conversation",
        "success",
    )


def _compaction_failed(e: ev.CompactionFailed, _queued: int) -> Notice:
    if e.stopped:
        return Notice(
            f"compaction failed {_plural(e.failures, 'time')} in a row ({e.error}); automatic "
            "compaction is off for the rest of this session (/compact still works)",
            "error",
        )
    return Notice(f"compaction failed ({e.error}); will try again", "warning")


_WORDING: dict[type[ev.Event], Callable[[Any, int], Notice | None]] = {
    ev.CompactionStart: _compaction_start,
    ev.Compaction: _compaction,
    ev.CompactionFailed: _compaction_failed,
    ev.MessageEnd: _message_end,
    ev.RequirementEvent: _requirement,
    ev.JobStarted: _job_started,
    ev.JobFinished: _job_finished,
    ev.Retry: _retry,
    ev.HookEnd: _hook_end,
    ev.Paused: _paused,
    ev.Resumed: _resumed,
    ev.AgentEnd: _agent_end,
}


def describe(event: ev.Event, *, queued: int = 0) -> Notice | None:
    """The notice for ``event``, or None. ``queued``: steering and follow-up messages still waiting
    (an aborted run says how many it kept)."""
    wording = _WORDING.get(type(event))
    return wording(event, queued) if wording is not None else None


def requirement_outcome(what: str, tool: str) -> Notice | None:
    """The requirement slot's news: ``satisfied`` or ``failed`` (other changes say nothing)."""
    if what == "satisfied":
        return Notice(f"requirement satisfied: `{tool}` was called", "success")
    if what == "failed":
        return Notice(
            f"requirement failed: the model did not call `{tool}` after {MAX_ESCALATIONS} forced turns",
            "error",
        )
    return None
