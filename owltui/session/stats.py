"""``RunStats``: the counters every front end shows, kept in one place.

``apply(event)`` is fed every event (``follow`` subscribes it): tokens, cache, cost, the round, the
number of model calls, the requirement's escalation, running background jobs, the last answer and
how the last run ended. ``count_queue(inbox)`` keeps the queue counts (queued messages are not
events). The TUI's status bar, plain mode, print mode and ``Runtime.state()`` (RPC ``get_state``)
read the same object. Events of subagents (``agent`` set) are not counted: the counters describe
the main agent, as the status bar always has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from owltui.agent import events as ev
from owltui.agent.inbox import LANES, Inbox


@dataclass
class RunStats:
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    round: int = 0  # the current (or last) run's round
    rounds: int = 0  # model calls since the session started
    escalation: int = 0  # the requirement's forced calls so far (0: none or only the reminder)
    jobs: dict[str, str] = field(default_factory=dict)  # running background jobs: id -> command
    queued: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LANES, 0))
    answer: str = ""  # the main agent's last message text
    end: ev.AgentEnd | None = None  # how the last run ended

    # ---- feeding -------------------------------------------------------------------------
    def apply(self, event: ev.Event) -> None:
        if event.agent is not None:
            return
        step = _STEPS.get(type(event))
        if step is not None:
            step(self, event)

    def count_queue(self, inbox: Inbox) -> None:
        for lane in LANES:
            self.queued[lane] = len(inbox.peek(lane))

    def follow(self, emitter: ev.Emitter, inbox: Inbox) -> Callable[[], None]:
        """Apply every event of ``emitter`` and recount on every change of ``inbox``; returns the
        function that stops both."""
        self.count_queue(inbox)
        stop_events = emitter.subscribe(self.apply, deltas=False)  # counters: no use for deltas
        stop_inbox = inbox.subscribe(lambda *_: self.count_queue(inbox))

        def stop() -> None:
            stop_events()
            stop_inbox()

        return stop

    def new_session(self) -> None:
        """A fresh conversation (``/new``): usage and rounds start again; jobs and queue stay."""
        self.tokens_in = self.tokens_out = self.cache_read = self.cache_write = 0
        self.cost = 0.0
        self.round = self.rounds = self.escalation = 0

    # ---- reading -------------------------------------------------------------------------
    @property
    def waiting(self) -> int:
        """Queued steering and follow-up messages (asides are background notices)."""
        return self.queued["steer"] + self.queued["follow_up"]

    def usage(self) -> dict[str, Any]:
        """Token and cost totals, named as in ``message_end``'s ``usage``."""
        return {
            "input_tokens": self.tokens_in,
            "output_tokens": self.tokens_out,
            "cache_read_tokens": self.cache_read,
            "cache_write_tokens": self.cache_write,
            "cost": self.cost,
        }

    # ---- one step per event type -----------------------------------------------------------
    def _turn_start(self, e: ev.TurnStart) -> None:
        self.round = e.round

    def _message_end(self, e: ev.MessageEnd) -> None:
        u = e.usage
        self.tokens_in += u.input_tokens
        self.tokens_out += u.output_tokens
        self.cache_read += u.cache_read_tokens
        self.cache_write += u.cache_write_tokens
        self.cost += u.cost
        self.rounds += 1
        self.answer = e.text

    def _requirement(self, e: ev.RequirementEvent) -> None:
        self.escalation = e.escalation

    def _job_started(self, e: ev.JobStarted) -> None:
        self.jobs[e.job_id] = e.command

    def _job_finished(self, e: ev.JobFinished) -> None:
        self.jobs.pop(e.job_id, None)

    def _agent_end(self, e: ev.AgentEnd) -> None:
        self.escalation = 0
        self.end = e


_STEPS: dict[type[ev.Event], Callable[[RunStats, Any], None]] = {
    ev.TurnStart: RunStats._turn_start,
    ev.MessageEnd: RunStats._message_end,
    ev.RequirementEvent: RunStats._requirement,
    ev.JobStarted: RunStats._job_started,
    ev.JobFinished: RunStats._job_finished,
    ev.AgentEnd: RunStats._agent_end,
}
