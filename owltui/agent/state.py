"""What a run knows about itself (``RunState``, read by hooks) and the ways a run stops.

Imported by ``hooks``, ``config``, the loop and its pieces (ledger, batch, limits); imports none of
them, so no two of those modules need each other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from owltui.agent.cancel import CancelToken
from owltui.agent.events import EndReason
from owltui.agent.history import History
from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, Usage
from owltui.agent.model import Model
from owltui.agent.services import Services


class RunConfig(Protocol):
    """The parts of the run's ``LoopConfig`` a hook may read (``LoopConfig`` is the one implementation)."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def max_rounds(self) -> int: ...
    @property
    def max_escalations(self) -> int: ...
    @property
    def failure_limit(self) -> int: ...
    @property
    def call_cap(self) -> int | None: ...
    @property
    def time_limit(self) -> float | None: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def services(self) -> Services: ...


@dataclass
class RunState:
    """What hooks can read about the run in progress."""

    run_id: str
    config: RunConfig
    history: History
    cancel: CancelToken
    round: int = 0  # rounds since the turn began or the user last spoke (what the round limit counts)
    total_rounds: int = 0
    calls_made: int = 0
    usage: Usage = field(default_factory=Usage)
    seen_calls: dict[str, int] = field(default_factory=dict)
    seen_results: set[int] = field(default_factory=set)
    stale_rounds: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    last_message: AssistantMessage | None = None

    @staticmethod
    def call_key(call: ToolCall) -> str:
        return call.name + json.dumps(call.arguments, sort_keys=True, default=str)

    def note_results(self, results: Sequence[ToolResult]) -> None:
        """Count rounds whose results were all seen before (a researcher repeating itself)."""
        hashes = [hash((r.name, r.content)) for r in results]
        if hashes and all(h in self.seen_results for h in hashes):
            self.stale_rounds += 1
        else:
            self.stale_rounds = 0
        self.seen_results.update(hashes)


@dataclass
class RunOutcome:
    reason: EndReason
    text: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0


@dataclass(frozen=True)
class End:
    """Why a run ends: the ``agent_end`` reason, its error text, and, when a limit cuts the run in
    the middle of a round, what each call still without a result is told (status ``cancelled``)."""

    reason: EndReason
    error: str | None = None
    unfinished: str = "Not executed: the run ended."


class EndRun(Exception):
    """Raised anywhere in a round to end the run now (a directive's answer, a failed requirement)."""

    def __init__(self, reason: EndReason, error: str | None = None) -> None:
        self.reason = reason
        self.error = error


class Aborted(Exception):
    """The run was aborted; raised at the next check (a parking spot, after a batch, a stop boundary)."""
