"""The run's limits, each a small object the loop asks the same questions at the same points.

A limit can say three things: the tool choice for the next model call, the fallback answer if
that call comes back empty, and the reason the run ends. It may also listen at a few fixed points
(run start, turn start, round start, a response's calls, the end of a batch). The base class
answers "no say" everywhere, so a limit overrides only what its rule needs, and a new limit (a cost
budget, say) is one new subclass added to ``standard_limits``. Limits get what they use (emitter,
ledger, the requirement slot, a way to post input) when built and never see the loop.

Order is precedence, for the tool choice and every other first-answer-wins question: tools off
(the round limit's wrap-up, the failure breaker, a hook's ``tools_off``) beats a forced tool, and a
hook's ``force_tool`` beats the soft requirement's forced call. Every limit is asked ``choice`` once
per model call, so a one-shot choice is used up even when an earlier limit decides.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio

from owltui.agent.cancel import CancelToken
from owltui.agent.config import LoopConfig
from owltui.agent.events import Emit, RequirementEvent
from owltui.agent.ledger import Ledger
from owltui.agent.messages import ToolCall, ToolResult, UserMessage
from owltui.agent.model import ForceTool, ToolChoice
from owltui.agent.requirement import MAX_ESCALATIONS, RequirementSlot, SoftRequirement
from owltui.agent.state import End, EndRun, RunState

Post = Callable[[UserMessage], None]  # input for the next round (delivered before its model call)
Said = TypeVar("Said")
Screen = Callable[[list[ToolCall]], tuple[list[ToolCall], bool]]  # a response's calls -> (may run, go again)


class Limit:
    """One rule that bounds a run. Every answer defaults to "no say"."""

    def start(self, cancel: CancelToken) -> float | None:
        """The run starts: when (``anyio.current_time()`` clock) it must be over, if ever."""
        return None

    def turn(self) -> None:
        """A turn begins: the run starts, or input in a user lane opens one at the stop boundary."""

    def round(self, st: RunState) -> None:
        """A round begins: its outside input is in the history, its model call is next."""

    def choice(self) -> ToolChoice | None:
        """Tool choice for the next model call."""
        return None

    def skip(self) -> str | None:
        """Why none of the next response's calls may run (each gets this as its result)."""
        return None

    def fallback(self) -> str | None:
        """The answer to use if the next model call comes back empty."""
        return None

    def screen(self, calls: list[ToolCall]) -> tuple[list[ToolCall], bool]:
        """A response's calls: (those that may run, go round again). Dropped calls need a result."""
        return calls, False

    def refuse(self, st: RunState, call: ToolCall) -> str | None:
        """The first pre-execution check, per call: a refusal, or None."""
        return None

    def settle(self, more: bool) -> None:
        """The round's calls all have results; ``more``: another model call follows."""

    def end(self) -> End | None:
        """Why the run ends after this round."""
        return None

    def cut(self) -> End | None:
        """Why the run ends when the deadline from ``start`` cut it mid-round."""
        return None


class RoundLimit(Limit):
    """N rounds per turn (counted again when the user steers), then one more round, the wrap-up:
    tools off, never empty."""

    def __init__(self, max_rounds: int) -> None:
        self.max_rounds = max_rounds
        self.wrapping_up = False

    def round(self, st: RunState) -> None:
        self.wrapping_up = st.round > self.max_rounds

    def choice(self) -> ToolChoice | None:
        return "none" if self.wrapping_up else None

    def skip(self) -> str | None:
        return "Not executed: the round limit was reached." if self.wrapping_up else None

    def fallback(self) -> str | None:
        if not self.wrapping_up:
            return None
        return (
            f"I stopped after {self.max_rounds} rounds (the round limit) before finishing. "
            "Ask me to continue if you want me to go on."
        )

    def end(self) -> End | None:
        return End("round_limit") if self.wrapping_up else None


class FailureBreaker(Limit):
    """The same tool failing ``limit`` times in a row (other tools in between do not reset it, a
    success of that tool does) turns tools off for the next call, which explains; then the run ends."""

    def __init__(self, limit: int, ledger: Ledger, post: Post) -> None:
        self.limit = limit
        self.post = post
        self.failures: dict[str, int] = {}
        self.tripped: str | None = None  # tripped by the last batch
        self.stopping: str | None = None  # this round's call is the explanation
        ledger.watch(self._count)

    def _count(self, call: ToolCall, result: ToolResult) -> None:
        if result.status == "error":
            n = self.failures[call.name] = self.failures.get(call.name, 0) + 1
            if n >= self.limit and self.tripped is None:
                self.tripped = call.name
                self.failures[call.name] = 0
        elif result.status == "ok":
            self.failures[call.name] = 0

    def round(self, st: RunState) -> None:
        self.stopping, self.tripped = self.tripped, None

    def choice(self) -> ToolChoice | None:
        return "none" if self.stopping is not None else None

    def settle(self, more: bool) -> None:
        if more and self.tripped is not None:
            self.post(
                UserMessage(
                    text=f"The `{self.tripped}` tool failed {self.limit} times in a row. Tools are off for "
                    "your next answer: tell the user what you tried, why it failed, and what they "
                    "could do.",
                    lane="notice",
                    source="system",
                )
            )

    def fallback(self) -> str | None:
        if self.stopping is None:
            return None
        return f"I stopped because the `{self.stopping}` tool failed {self.limit} times in a row."

    def end(self) -> End | None:
        return End("failure_limit") if self.stopping is not None else None


class Directed(Limit):
    """What hooks asked for: ``tools_off`` (for the rest of the run), ``force_tool`` (the next call)."""

    def __init__(self) -> None:
        self.tools_off = False
        self.force: str | None = None

    def choice(self) -> ToolChoice | None:
        force, self.force = self.force, None
        if self.tools_off:
            return "none"
        return ForceTool(tool=force) if force else None


class Requirement(Limit):
    """The soft requirement: a reminder once per requirement, then up to ``cap`` (the loop's
    ``max_escalations``, default ``MAX_ESCALATIONS``) forced calls for responses that call anything
    else (their calls skipped), then the run fails."""

    def __init__(
        self, slot: RequirementSlot, emit: Emit, ledger: Ledger, post: Post, cap: int = MAX_ESCALATIONS
    ) -> None:
        self.slot = slot
        self.cap = cap
        self.emit = emit
        self.ledger = ledger
        self.post = post
        self.current: SoftRequirement | None = None
        self.escalations = 0
        self.forced: str | None = None  # the next call is forced to this tool

    def turn(self) -> None:
        req = self.slot.current
        if req is None or (self.current is not None and self.current.id != req.id):
            self.escalations = 0
        self.current = req
        if req is not None and req.id not in self.slot.reminded:
            self.slot.reminded.add(req.id)
            self.post(UserMessage(text=req.reminder(), lane="reminder", source="system"))
            self.emit(RequirementEvent, tool=req.tool, escalation=0)

    def choice(self) -> ToolChoice | None:
        forced, self.forced = self.forced, None
        return ForceTool(tool=forced) if forced else None

    def screen(self, calls: list[ToolCall]) -> tuple[list[ToolCall], bool]:
        req = self.current
        if req is None or self.slot.current is None or self.slot.current.id != req.id:
            self.current = None
            return calls, False
        if calls and all(req.accepts(c.name) for c in calls):
            self.current = None
            self.escalations = 0
            self.slot.clear("satisfied")
            return calls, False
        why = f" ({req.reason})" if req.reason else ""
        for call in calls:
            self.ledger.skip(call, f"Not executed: call `{req.tool}` first{why}.")
        if self.escalations >= self.cap:
            self.slot.clear("failed")
            raise EndRun(
                "error",
                f"The model did not call the required tool `{req.tool}` after {self.cap} forced turns.",
            )
        self.escalations += 1
        self.emit(RequirementEvent, tool=req.tool, escalation=self.escalations)
        self.forced = req.tool
        if not calls:
            self.post(
                UserMessage(
                    text=f"You must call the `{req.tool}` tool now.", lane="reminder", source="system"
                )
            )
        return [], True


class CallCap(Limit):
    """At most ``cap`` tool calls per run; calls past it are refused (the loop goes on)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap

    def refuse(self, st: RunState, call: ToolCall) -> str | None:
        if st.calls_made >= self.cap:
            return f"Not executed: this run reached its cap of {self.cap} tool calls."
        return None


class Deadline(Limit):
    """A time limit for the whole run: tools see it on the cancel token; reaching it ends the run."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = math.inf

    def start(self, cancel: CancelToken) -> float | None:
        cancel.deadline = time.monotonic() + self.seconds
        if not self.seconds:
            return None  # 0: tools see an expired deadline, the run itself is not cut
        self.at = anyio.current_time() + self.seconds
        return self.at

    def cut(self) -> End | None:
        if self.at == math.inf:
            return None
        return End(
            "error",
            f"The run's time limit of {self.seconds:g} s was reached.",
            unfinished="Cancelled: the run's time limit was reached.",
        )


def standard_limits(
    cfg: LoopConfig, *, slot: RequirementSlot, emit: Emit, ledger: Ledger, post: Post
) -> tuple[list[Limit], Directed]:
    """Every run's limits in precedence order, and the one that carries the hooks' directives."""
    directed = Directed()
    limits: list[Limit] = [
        RoundLimit(cfg.max_rounds),
        FailureBreaker(cfg.failure_limit, ledger, post),
        directed,
        Requirement(slot, emit, ledger, post, cfg.max_escalations),
    ]
    if cfg.call_cap is not None:
        limits.append(CallCap(cfg.call_cap))
    if cfg.time_limit is not None:
        limits.append(Deadline(cfg.time_limit))
    return limits, directed


class Limits:
    """The limits of one run, asked in order; each question goes only to those that answer it."""

    def __init__(self, limits: Sequence[Limit]) -> None:
        self.all = tuple(limits)

        def answering(name: str) -> tuple[Any, ...]:
            base = getattr(Limit, name)
            return tuple(getattr(lim, name) for lim in self.all if getattr(type(lim), name) is not base)

        self._start: tuple[Callable[[CancelToken], float | None], ...] = answering("start")
        self._turn: tuple[Callable[[], None], ...] = answering("turn")
        self._round: tuple[Callable[[RunState], None], ...] = answering("round")
        self._choice: tuple[Callable[[], ToolChoice | None], ...] = answering("choice")
        self._skip: tuple[Callable[[], str | None], ...] = answering("skip")
        self._fallback: tuple[Callable[[], str | None], ...] = answering("fallback")
        self._screen: tuple[Screen, ...] = answering("screen")
        self._refuse: tuple[Callable[[RunState, ToolCall], str | None], ...] = answering("refuse")
        self._settle: tuple[Callable[[bool], None], ...] = answering("settle")
        self._end: tuple[Callable[[], End | None], ...] = answering("end")
        self._cut: tuple[Callable[[], End | None], ...] = answering("cut")

    def start(self, cancel: CancelToken) -> float:
        times = [t for fn in self._start if (t := fn(cancel)) is not None]
        return min(times, default=math.inf)

    def turn(self) -> None:
        for fn in self._turn:
            fn()

    def round(self, st: RunState) -> None:
        for fn in self._round:
            fn(st)

    def choice(self) -> ToolChoice | None:
        said: ToolChoice | None = None
        for fn in self._choice:  # every one is asked: one-shot choices are used up
            c = fn()
            if said is None:
                said = c
        return said

    def skip(self) -> str | None:
        return _first(self._skip)

    def fallback(self) -> str | None:
        return _first(self._fallback)

    def screen(self, calls: list[ToolCall]) -> tuple[list[ToolCall], bool]:
        more = False
        for fn in self._screen:
            calls, again = fn(calls)
            more = more or again
        return calls, more

    def refuse(self, st: RunState, call: ToolCall) -> str | None:
        for fn in self._refuse:
            why = fn(st, call)
            if why:
                return why
        return None

    def settle(self, more: bool) -> None:
        for fn in self._settle:
            fn(more)

    def end(self) -> End | None:
        return _first(self._end)

    def cut(self) -> End | None:
        return _first(self._cut)


def _first(fns: Sequence[Callable[[], Said | None]]) -> Said | None:
    """The first answer that is not "no say"."""
    for fn in fns:
        said = fn()
        if said is not None:
            return said
    return None
