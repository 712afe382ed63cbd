"""THE loop: one run of an agent, for every feature.

Inner loop: model call -> tool calls -> results -> next model call, while the model calls tools or
outside input is pending. Outer loop: when the agent would stop, run the before-yield hook, take
queued steering and asides — or, when no steering is queued, the first follow-up (all of them with
``follow_up_mode = "all"``) — and go round again if any arrived: steering is answered before a
follow-up is delivered, and each follow-up is its own turn.

Two words: a *round* is one model request and its tool calls; a *turn* is one user input until the
stop boundary (a run holds one or more turns, a turn one or more rounds). The ``turn_start`` and
``turn_end`` events, older than these words, mark rounds: every ``turn_start`` has its
``turn_end``, when a round is cut by an abort, a model error or a limit too. ``RunState.round``
counts rounds since the turn began or the user last spoke (the round limit's count).

Lane timing: outside input waits in the intake (``intake.py``, its contract) and queued input is
taken from the inbox at the last moment before it goes into the history, after the pause gate's
parking spot, so a message stays listed and editable while the run is parked.

The rules live once, in named pieces the loop asks at fixed points: the ledger (one result for
every call on every path), the batch (pre-execution checks in order: cap -> expansion ->
validation -> refusals -> permission; read-only calls together; large results to file), the
limits (round limit with its non-empty wrap-up, failure breaker, soft requirement, call cap,
deadline: each can say the next call's tool choice, a fallback answer, why the run ends) and the
context budget (``context.py``: compact before a model call once the conversation nears the
model's window, between rounds, before the round's queued input is delivered). The loop
itself keeps the order of things: the pause gate's parking spot before the model call, outside
input delivered only where every call has its result, hooks and their directives, cancellation.
Feature differences arrive only as config: system prompt, tools, hooks, history.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import anyio

from owltui.agent.batch import Batch
from owltui.agent.cancel import CancelToken
from owltui.agent.config import LoopConfig
from owltui.agent.context import ContextBudget
from owltui.agent.events import (
    AgentEnd,
    AgentStart,
    Emitter,
    Event,
    InputEvent,
    MessageDelta,
    MessageEnd,
    MessageStart,
    Retry,
    TurnEnd,
    TurnStart,
    WireToolCall,
)
from owltui.agent.history import History
from owltui.agent.hooks import Directive
from owltui.agent.inbox import Inbox
from owltui.agent.intake import Intake
from owltui.agent.ledger import Ledger
from owltui.agent.limits import Limits, standard_limits
from owltui.agent.messages import USER_LANES, AssistantMessage, Item, ToolCall, UserMessage
from owltui.agent.model import (
    MessageAssembler,
    ModelRequest,
    RetryNotice,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolChoice,
)
from owltui.agent.pause import GATE, PauseGate, park
from owltui.agent.requirement import RequirementSlot
from owltui.agent.state import Aborted, End, EndRun, RunOutcome, RunState

__all__ = ["Loop"]


class Loop:
    """One run. Create, then ``await run(initial)``; the host owns the cancel scope."""

    def __init__(
        self,
        config: LoopConfig,
        history: History,
        *,
        inbox: Inbox,
        emitter: Emitter,
        gate: PauseGate = GATE,
        requirement: RequirementSlot | None = None,
        cancel: CancelToken | None = None,
        budget: ContextBudget | None = None,
    ) -> None:
        self.cfg = config
        self.history = history
        self.inbox = inbox
        self.emitter = emitter
        self.gate = gate
        self.slot = requirement or RequirementSlot()
        self.cancel = cancel or CancelToken()
        self.tools = config.all_tools()
        self.state = RunState(
            run_id=uuid.uuid4().hex[:12], config=config, history=history, cancel=self.cancel
        )
        self._agent = None if config.name == "main" else config.name
        self.intake = Intake(inbox, self.cancel, all_follow_ups=config.follow_up_mode == "all")
        self._round_open = False  # a round's turn_start without its turn_end yet
        self._turn_from = 0  # index in the history where the current turn began
        # automatic compaction, when the feature gave a window and a compactor
        self.budget = (budget or ContextBudget()) if config.context_window and config.compactor else None
        self.ledger = Ledger(history, self._emit)
        limits, self.directed = standard_limits(
            config, slot=self.slot, emit=self._emit, ledger=self.ledger, post=self.intake.post
        )
        self.limits = Limits(limits)
        self.batch = Batch(
            config,
            self.state,
            ledger=self.ledger,
            limits=self.limits,
            emit=self._emit,
            gate=gate,
            inbox=inbox,
            cancel=self.cancel,
        )

    # ---- small helpers -------------------------------------------------------------------
    def _emit(self, cls: type[Event], /, **fields: Any) -> None:
        """Build one event (tagged with this agent) and emit it."""
        self.emitter.emit(cls(agent=self._agent, **fields))

    def _apply(self, d: Directive | None) -> Directive | None:
        if d is None:
            return None
        self.intake.post(*d.append)
        if d.tools_off:
            self.directed.tools_off = True
        if d.force_tool:
            self.directed.force = d.force_tool
        if d.end_with is not None:
            self._emit(MessageStart)
            self._emit(MessageDelta, text=d.end_with)
            self._end_message(AssistantMessage(text=d.end_with, model=self.cfg.model.name), keep=True)
            raise EndRun("done")
        return d

    def _deliver(self, items: Sequence[Item]) -> None:
        """Outside input into the history, each message announced; the user's own words restart the
        round count."""
        for item in items:
            self.ledger.append(item)
            if isinstance(item, UserMessage):
                self._emit(InputEvent, lane=item.lane, text=item.text)
                if item.lane in USER_LANES and item.source == "user":
                    self._restart_count()

    def _restart_count(self) -> None:
        """The one place the round count restarts (the user spoke, or a turn begins): the round
        under way is round 1 of the count; between rounds, the next one will be."""
        self.state.round = 1 if self._round_open else 0

    def _begin_turn(self) -> None:
        """A turn begins (the run starts, or input at the stop boundary opens one)."""
        self._restart_count()
        self._turn_from = len(self.history.items())
        self.limits.turn()

    def _close_round(self) -> None:
        """The round's ``turn_end`` event, once."""
        if self._round_open:
            self._round_open = False
            self._emit(TurnEnd, round=self.state.total_rounds)

    def _check_abort(self) -> None:
        if self.cancel.cancelled:
            raise Aborted

    # ---- the model call ------------------------------------------------------------------
    def _choice(self) -> ToolChoice:
        said = self.limits.choice()  # asked even without tools: one-shot choices are used up
        return said if said is not None and self.tools else "auto"

    async def _call_model(self, choice: ToolChoice) -> AssistantMessage:
        cfg = self.cfg
        req = ModelRequest(
            system=cfg.system_prompt,
            messages=self.history.model_view(),
            tools=cfg.specs() if self.tools else (),
            tool_choice=choice,
            max_output_tokens=cfg.max_output_tokens,
        )
        asm = MessageAssembler(cfg.model.name)
        self._emit(MessageStart)
        deltas = getattr(self.emitter, "wants_deltas", True)  # no listener draws them: none built
        error: str | None = None
        try:
            async for ev in cfg.model.stream(req):
                if isinstance(ev, TextDelta):
                    asm.feed(ev)
                    if deltas:
                        self._emit(MessageDelta, text=ev.text)
                elif isinstance(ev, ThinkingDelta):
                    asm.feed(ev)
                    if ev.text and deltas:
                        self._emit(MessageDelta, thinking=ev.text)
                elif isinstance(ev, StreamError):
                    error = ev.message
                    break
                elif isinstance(ev, RetryNotice):
                    self._emit(Retry, attempt=ev.attempt, delay_s=ev.delay_s, reason=ev.reason)
                else:
                    asm.feed(ev)
        except anyio.get_cancelled_exc_class():
            msg = asm.finish_error("aborted", aborted=True)
            self._end_message(msg, keep=asm.has_content)
            raise
        except Exception as exc:  # a provider bug must not kill the run without a message
            error = f"{cfg.model.name}: {type(exc).__name__}: {exc}"
        msg = asm.finish() if error is None else asm.finish_error(error)
        if not msg.text.strip():  # a tools-off answer (wrap-up, failure stop) is never empty
            fallback = self.limits.fallback()
            if fallback is not None:
                msg.text = fallback
        self._end_message(msg, keep=True)
        return msg

    def _end_message(self, msg: AssistantMessage, keep: bool) -> None:
        if keep:
            self.ledger.append(msg)
            self.state.last_message = msg
            self.state.usage = self.state.usage + msg.usage
            if self.budget is not None:
                self.budget.observe(msg, self.history.model_view())
        self._emit(
            MessageEnd,
            text=msg.text,
            thinking=msg.thinking_text,
            stop_reason=msg.stop_reason,
            usage=msg.usage,
            error=msg.error,
            tool_calls=[WireToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in msg.tool_calls],
        )

    # ---- the run -------------------------------------------------------------------------
    async def run(self, initial: Sequence[UserMessage] = (), *, wake: bool = False) -> RunOutcome:
        """One run to its end. ``wake``: started by queued input (an idle agent is at a stop: steering
        and asides, else a follow-up)."""
        if not self.intake.start(initial, wake=wake, gate_closed=self.gate.paused):
            return RunOutcome("done")
        st = self.state
        deadline = self.limits.start(self.cancel)
        self._emit(AgentStart, run_id=st.run_id)
        end = End("done")
        try:
            with anyio.CancelScope(deadline=deadline) as scope:
                try:
                    end = await self._outer()
                except EndRun as stop:
                    end = End(stop.reason, stop.error)
            if scope.cancelled_caught and (cut := self.limits.cut()) is not None:
                end = cut
                self.ledger.close(cut.unfinished, "cancelled")
        except (anyio.get_cancelled_exc_class(), Aborted) as exc:
            self.ledger.close("Cancelled: the user aborted the run before this call finished.", "cancelled")
            self.intake.rescue(self._deliver)
            self._close_round()
            self._emit(AgentEnd, reason="aborted")
            if not isinstance(exc, Aborted):
                raise
            return RunOutcome("aborted", usage=st.usage, rounds=st.total_rounds)
        except Exception as exc:  # a bug below the loop: keep every call answered, end clearly
            end = End("error", f"{type(exc).__name__}: {exc}")
            self.ledger.close(f"Not completed: internal error ({end.error}).", "cancelled")
        self.ledger.close("Not executed: the run ended.", "skipped")
        self._close_round()
        self._emit(AgentEnd, reason=end.reason, error=end.error)
        last = st.last_message
        return RunOutcome(
            end.reason,
            text=last.text if last else "",
            error=end.error,
            usage=st.usage,
            rounds=st.total_rounds,
        )

    async def _outer(self) -> End:
        """The nested pair: rounds while there is work, then the stop boundary's drain."""
        self._begin_turn()
        more = False
        while True:
            while more or self.intake.waiting():
                more, end = await self._round(more)
                if end is not None:
                    await self._last_turn_ends()
                    return end
            # the agent would stop here: the stop boundary
            self._apply(await self.cfg.hooks.before_yield(self.state))
            self._check_abort()
            if self.inbox.has():
                await park(self.gate, self.cancel, self.cfg.name, "model")  # queued input stays editable
                self.intake.take_stop()
            if not self.intake.items:
                await self._last_turn_ends()
                return End("done")
            if self.intake.opens_turn():
                self._begin_turn()

    async def _round(self, owed: bool) -> tuple[bool, End | None]:
        """One round: a model call and its tool calls. ``owed``: the last round's results await an
        answer. Returns (more work follows, why the run ends)."""
        st, cfg, limits = self.state, self.cfg, self.limits
        st.round += 1
        st.total_rounds += 1
        self._emit(TurnStart, round=st.total_rounds)
        self._round_open = True
        await park(self.gate, self.cancel, cfg.name, "model")
        # only now: while parked, queued input stayed listed and editable
        if self.intake.take_due() and not (owed or self.intake.items):
            self._close_round()  # all of it was withdrawn meanwhile: nothing to answer
            return False, End("done")
        self._apply(await cfg.hooks.round_start(st))
        if (
            self.budget is not None
            and (over := self.budget.due(cfg, self.history.model_view(), self.intake.items)) is not None
        ):
            await self._compact(over)
        if cfg.before_user_turn is not None and (prompt := self.intake.turn_prompt()) is not None:
            self._apply(await cfg.before_user_turn(prompt))  # a checkpoint first; context joins it
        self._deliver(self.intake.drain())  # outside input only here: every earlier call has its result
        limits.round(st)
        self._apply(await cfg.hooks.before_model(st))
        choice = self._choice()
        msg = await self._call_model(choice)
        if msg.stop_reason == "error":
            self.ledger.close(f"Not executed: the model's response failed ({msg.error}).", "skipped")
            raise EndRun("error", msg.error)
        calls = self._replace_calls(msg, self._apply(await cfg.hooks.after_response(st, msg)))
        more = False
        no_tools = limits.skip() or (
            "Not executed: tools are off for this answer." if choice == "none" else None
        )
        if no_tools is None:
            calls, more = limits.screen(calls)  # the soft requirement may skip them all
        if calls:
            results = await self.batch.run(calls, no_tools)
            st.note_results(results)
            self._apply(await cfg.hooks.after_tools(st, results))
            self._check_abort()
            more = no_tools is None
            if more:
                self.intake.after_batch()
        limits.settle(more)
        self._close_round()
        end = limits.end()
        return (False, end) if end is not None else (more, None)

    async def _compact(self, before: int) -> None:
        """The context budget said compact (``before``: its estimate): now, before this round's
        input and model call - between rounds, every call has its result - so the queued input is
        delivered after the summary."""
        assert self.budget is not None
        await self.budget.compact(
            self.cfg,
            self.history,
            before=before,
            turn_from=self._turn_from,
            pending=self.intake.items,
            emit=self._emit,
            gate=self.gate,
            cancel=self.cancel,
            post=self.intake.post,
        )

    def _replace_calls(self, msg: AssistantMessage, d: Directive | None) -> list[ToolCall]:
        """Apply an after-response hook's replacement list; withdrawn calls still get a result."""
        if d is None or d.calls is None:
            return list(msg.tool_calls)
        keep = {c.id for c in d.calls}
        for call in msg.tool_calls:
            if call.id not in keep:
                self.ledger.skip(call, "Not executed: withdrawn before it ran.")
        return [c for c in d.calls if c.id in self.ledger.outstanding]

    async def _last_turn_ends(self) -> None:
        """The ``turn_end`` hook: the run's last turn is over (not after an abort, an error or a
        hook's ``end_with``)."""
        self._apply(await self.cfg.hooks.turn_end(self.state))
