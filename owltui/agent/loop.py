"""THE loop: one run of an agent, for every feature.

Inner loop: model call -> tool calls -> results -> next model call, while the model calls tools or
outside input is pending. Outer loop: when the agent would stop, run the before-yield hook, drain
late steering, asides and follow-ups, and go round again if any arrived.

The rules live here once: one result for every call on every path, the round limit with a
non-empty wrap-up, failure detection (tools off via tool choice ``none``, list unchanged), the
pre-execution checks in order (cap -> expansion -> validation -> refusals -> permission), the pause
gate's two parking spots, soft tool requirements, large results to file, and cancellation.
Feature differences arrive only as config: system prompt, tools, hooks, history.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ValidationError

from .cancel import CancelToken
from .events import (
    AgentEnd,
    AgentStart,
    Emitter,
    EndReason,
    Event,
    InputEvent,
    MessageDelta,
    MessageEnd,
    MessageStart,
    RequirementEvent,
    Retry,
    ToolEnd,
    ToolStart,
    ToolUpdate,
    TurnEnd,
    TurnStart,
    WireToolCall,
)
from .history import History
from .hooks import Directive, Expansion, Hooks, Permission, Refusal
from .inbox import LANES, Inbox
from .messages import AssistantMessage, Item, ToolCall, ToolResult, ToolStatus, Usage, UserMessage
from .model import (
    ForceTool,
    MessageAssembler,
    Model,
    ModelRequest,
    RetryNotice,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolChoice,
    ToolSpec,
)
from .pause import GATE, PauseGate
from .requirement import MAX_ESCALATIONS, RequirementSlot, SoftRequirement
from .results import ReadResult, ResultStore, is_large
from .tool import Tool, ToolContext, ToolError, ToolOutput, tool_spec

USER_LANES = frozenset({"user", "steer", "follow_up"})


@dataclass
class LoopConfig:
    """Everything a feature chooses. Only prompt, tools, hooks (and checks) and history differ."""

    model: Model
    system_prompt: str = ""
    tools: Sequence[Tool] = ()
    hooks: Hooks = field(default_factory=Hooks)
    max_rounds: int = 40
    failure_limit: int = 5
    steering: Literal["batch", "immediate"] = "batch"
    call_cap: int | None = None
    expand: Expansion | None = None
    refusals: Sequence[Refusal] = ()
    permission: Permission | None = None
    results: ResultStore | None = None
    workspace: Path = field(default_factory=Path.cwd)
    services: dict[str, Any] = field(default_factory=dict)
    time_limit: float | None = None
    name: str = "main"
    max_output_tokens: int | None = None

    def __post_init__(self) -> None:
        self._specs: list[ToolSpec] | None = None
        self._by_name: dict[str, Tool] | None = None

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Change the tool list (between runs only: within a session every round sends one list)."""
        self.tools = tools
        self._by_name = None
        self._specs = None

    def all_tools(self) -> dict[str, Tool]:
        """The feature's tools plus ``read_result`` (any run carrying a tool can reread results)."""
        if self._by_name is None:
            tools: dict[str, Tool] = {t.name: t for t in self.tools}
            if tools and "read_result" not in tools:
                if self.results is None:
                    self.results = ResultStore()
                tools["read_result"] = ReadResult(self.results)
            self._by_name = tools
        return self._by_name

    def specs(self) -> list[ToolSpec]:
        """Tool specs sorted by name, computed once: the same list on every round."""
        if self._specs is None:
            self._specs = [tool_spec(t) for _, t in sorted(self.all_tools().items())]
        return self._specs


@dataclass
class RunState:
    """What hooks can read about the run in progress."""

    run_id: str
    config: LoopConfig
    history: History
    cancel: CancelToken
    round: int = 0  # rounds in the current logical turn
    total_rounds: int = 0
    calls_made: int = 0
    usage: Usage = field(default_factory=Usage)
    failures: dict[str, int] = field(default_factory=dict)
    seen_calls: dict[str, int] = field(default_factory=dict)
    seen_results: set[int] = field(default_factory=set)
    stale_rounds: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    tools_off: bool = False
    last_message: AssistantMessage | None = None
    requirement: SoftRequirement | None = None
    escalations: int = 0

    @staticmethod
    def call_key(call: ToolCall) -> str:
        return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


@dataclass
class RunOutcome:
    reason: EndReason
    text: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0


class _Aborted(Exception):
    pass


class _EndRun(Exception):
    def __init__(self, reason: EndReason, error: str | None = None) -> None:
        self.reason = reason
        self.error = error


def _result(call: ToolCall, content: str, status: ToolStatus) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, content=content, status=status,
                      is_error=status != "ok")


def _describe(model: type[BaseModel]) -> str:
    schema = model.model_json_schema()
    req = set(schema.get("required", ()))
    parts = [f"{k}{'' if k in req else '?'}: {v.get('type', 'any')}"
             for k, v in schema.get("properties", {}).items()]
    return "{" + ", ".join(parts) + "}"


def _validation_message(call: ToolCall, tool: Tool, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5]
    )
    return (f"Invalid arguments for `{call.name}`: {problems}. "
            f"Expected {call.name} {_describe(tool.params)}.")


class Loop:
    """One run. Create, then ``await run(initial)``; the host owns the cancel scope."""

    def __init__(self, config: LoopConfig, history: History, *, inbox: Inbox, emitter: Emitter,
                 gate: PauseGate = GATE, requirement: RequirementSlot | None = None,
                 cancel: CancelToken | None = None) -> None:
        self.cfg = config
        self.history = history
        self.inbox = inbox
        self.emitter = emitter
        self.gate = gate
        self.slot = requirement or RequirementSlot()
        self.cancel = cancel or CancelToken()
        self.tools = config.all_tools()
        self.state = RunState(run_id=uuid.uuid4().hex[:12], config=config, history=history,
                              cancel=self.cancel)
        self._outstanding: dict[str, ToolCall] = {}  # calls in the history still without a result
        self._pending: list[UserMessage | Item] = []
        self._force_next: str | None = None
        self._off_once = False
        self._tripped: str | None = None
        self._agent = None if config.name == "main" else config.name
        self._done: dict[str, ToolResult] = {}  # results of the running batch not yet recorded
        self._ended: set[str] = set()  # calls whose tool_end was already emitted

    # ---- small helpers -------------------------------------------------------------------
    def _emit(self, cls: type[Event], **fields: Any) -> None:
        """Build (validated: faster than any shortcut, see events.py) and emit one event."""
        self.emitter.emit(cls(agent=self._agent, **fields))

    def _aborted(self) -> bool:
        return self.cancel.cancelled

    def _apply(self, d: Directive | None) -> Directive | None:
        if d is None:
            return None
        self._pending.extend(d.append)
        if d.tools_off:
            self.state.tools_off = True
        if d.force_tool:
            self._force_next = d.force_tool
        if d.end_with is not None:
            self._emit(MessageStart)
            self._emit(MessageDelta, text=d.end_with)
            self._end_message(AssistantMessage(text=d.end_with, model=self.cfg.model.name), keep=True)
            raise _EndRun("done")
        return d

    def _append(self, item: Item) -> None:
        self.history.append(item)
        if isinstance(item, AssistantMessage):
            for call in item.tool_calls:
                self._outstanding[call.id] = call
        elif isinstance(item, ToolResult):
            self._outstanding.pop(item.call_id, None)

    def _record(self, call: ToolCall, result: ToolResult) -> ToolResult:
        if call.id not in self._outstanding:
            return result  # already has its result
        self._append(result)
        if call.id not in self._ended:
            self._emit_end(call, result)
        self._ended.discard(call.id)
        st = self.state
        if result.status == "error":
            st.failures[call.name] = st.failures.get(call.name, 0) + 1
            if st.failures[call.name] >= self.cfg.failure_limit and self._tripped is None:
                self._tripped = call.name
                st.failures[call.name] = 0
        elif result.status == "ok":
            st.failures[call.name] = 0
        return result

    def _emit_end(self, call: ToolCall, result: ToolResult) -> None:
        self._emit(ToolEnd, call_id=call.id, name=call.name, is_error=result.is_error,
                           output=result.content, status=result.status)

    def _close_outstanding(self, content: str, status: ToolStatus) -> None:
        for call in list(self._outstanding.values()):
            self._record(call, self._done.pop(call.id, None) or _result(call, content, status))

    def _deliver_pending(self) -> None:
        st = self.state
        for item in self._pending:
            self._append(item)
            if isinstance(item, UserMessage):
                self._emit(InputEvent, lane=item.lane, text=item.text)
                if item.lane in USER_LANES and item.source == "user":
                    st.round = 1  # the user spoke: the round limit counts again from here
        self._pending.clear()

    def _rescue_pending(self) -> None:
        """On abort: the user's own prompt is kept in the history; queued input taken from the
        inbox but not yet delivered goes back to the inbox, so nothing is stranded."""
        back = [m for m in self._pending if isinstance(m, UserMessage) and m.lane in LANES]
        keep = [m for m in self._pending if isinstance(m, UserMessage) and m.lane == "user"]
        self._pending = keep
        self._deliver_pending()
        if back:
            self.inbox.requeue(back)

    def _poll(self, *lanes: Literal["steer", "follow_up", "aside"]) -> bool:
        """Move queued input to pending. Skipped entirely when the run was aborted."""
        if self._aborted():
            return False
        got = False
        for lane in lanes:
            msgs = self.inbox.take(lane)
            if msgs:
                got = True
                self._pending.extend(msgs)
        return got

    def _check_abort(self) -> None:
        if self._aborted():
            raise _Aborted

    async def _park(self, where: str) -> None:
        if self.gate.paused:
            await self.gate.wait_until_resumed(self.cancel, self.cfg.name, where)
        self._check_abort()

    # ---- requirement ---------------------------------------------------------------------
    def _resolve_requirement(self) -> None:
        req = self.slot.current
        st = self.state
        if req is None or (st.requirement is not None and st.requirement.id != req.id):
            st.escalations = 0
        st.requirement = req
        if req is not None and req.id not in self.slot.reminded:
            self.slot.reminded.add(req.id)
            self._pending.append(UserMessage(text=req.reminder(), lane="reminder", source="system"))
            self._emit(RequirementEvent, tool=req.tool, escalation=0)

    def _enforce_requirement(self, calls: list[ToolCall]) -> tuple[list[ToolCall], bool]:
        """Returns (calls to execute, go round again). Skips every call when the model did not comply."""
        st = self.state
        req = st.requirement
        if req is None or self.slot.current is None or self.slot.current.id != req.id:
            st.requirement = None
            return calls, False
        if calls and all(req.accepts(c.name) for c in calls):
            st.requirement = None
            st.escalations = 0
            self.slot.clear("satisfied")
            return calls, False
        for call in calls:
            self._record(call, _result(call, f"Not executed: call `{req.tool}` first"
                                       f"{f' ({req.reason})' if req.reason else ''}.", "skipped"))
        if st.escalations >= MAX_ESCALATIONS:
            self.slot.clear("failed")
            raise _EndRun("error", f"The model did not call the required tool `{req.tool}` after "
                                   f"{MAX_ESCALATIONS} forced turns.")
        st.escalations += 1
        self._emit(RequirementEvent, tool=req.tool, escalation=st.escalations)
        self._force_next = req.tool
        if not calls:
            self._pending.append(UserMessage(text=f"You must call the `{req.tool}` tool now.",
                                             lane="reminder", source="system"))
        return [], True

    # ---- the model call ------------------------------------------------------------------
    def _choice(self, wrapup: bool) -> ToolChoice:
        if not self.tools:
            return "auto"
        if wrapup or self._off_once or self.state.tools_off:
            return "none"
        if self._force_next:
            return ForceTool(tool=self._force_next)
        return "auto"

    async def _call_model(self, choice: ToolChoice, fallback: str | None) -> AssistantMessage:
        cfg = self.cfg
        req = ModelRequest(system=cfg.system_prompt, messages=self.history.model_view(),
                           tools=cfg.specs() if self.tools else (), tool_choice=choice,
                           max_output_tokens=cfg.max_output_tokens)
        asm = MessageAssembler(cfg.model.name)
        self._emit(MessageStart)
        error: str | None = None
        try:
            async for ev in cfg.model.stream(req):
                if isinstance(ev, TextDelta):
                    asm.feed(ev)
                    self._emit(MessageDelta, text=ev.text)
                elif isinstance(ev, ThinkingDelta):
                    asm.feed(ev)
                    if ev.text:
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
        if fallback is not None and not msg.text.strip():
            msg.text = fallback
        self._end_message(msg, keep=True)
        return msg

    def _end_message(self, msg: AssistantMessage, keep: bool) -> None:
        if keep:
            self._append(msg)
            self.state.last_message = msg
            self.state.usage = self.state.usage + msg.usage
        self._emit(MessageEnd, text=msg.text, thinking=msg.thinking_text, stop_reason=msg.stop_reason,
                              usage=msg.usage, error=msg.error,
                              tool_calls=[WireToolCall(id=c.id, name=c.name, arguments=c.arguments)
                                          for c in msg.tool_calls])

    # ---- tools ---------------------------------------------------------------------------
    async def _precheck(self, call: ToolCall, no_tools: str | None) -> tuple[Tool, BaseModel] | ToolResult:
        st = self.state
        cfg = self.cfg
        if no_tools is not None:
            return _result(call, no_tools, "skipped")
        if cfg.call_cap is not None and st.calls_made >= cfg.call_cap:
            return _result(call, f"Not executed: this run reached its cap of {cfg.call_cap} tool calls.",
                           "refused")
        st.calls_made += 1
        real = cfg.expand(call) if cfg.expand is not None else call
        tool = self.tools.get(real.name)
        if tool is None:
            return _result(call, f"Unknown tool `{real.name}`. Available tools: "
                                 f"{', '.join(sorted(self.tools))}.", "error")
        if real.parse_error is not None:
            return _result(call, f"Invalid arguments for `{real.name}`: {real.parse_error}. "
                                 f"Expected {real.name} {_describe(tool.params)}.", "error")
        try:
            args = tool.params.model_validate(real.arguments)
        except ValidationError as exc:
            return _result(call, _validation_message(real, tool, exc), "error")
        if cfg.refusals:
            key = st.call_key(real)
            st.seen_calls[key] = st.seen_calls.get(key, 0) + 1
        for check in cfg.refusals:
            why = await check(st, real)
            if why:
                return _result(call, why, "refused")
        if cfg.permission is not None:
            why = await cfg.permission(real, bool(tool.read_only))
            if why:
                return _result(call, why, "refused")
        return tool, args

    async def _run_tool(self, call: ToolCall, tool: Tool, args: BaseModel) -> None:
        def progress(text: str) -> None:
            self._emit(ToolUpdate, call_id=call.id, name=call.name, text=text)

        self._emit(ToolStart, call_id=call.id, name=call.name, arguments=call.arguments)
        ctx = ToolContext(workspace=self.cfg.workspace, cancel=self.cancel, call_id=call.id,
                          progress=progress, services=self.cfg.services)
        try:
            out = await tool.run(args, ctx)
        except ToolError as exc:
            out = ToolOutput(str(exc), is_error=True)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            out = ToolOutput(f"Tool `{call.name}` crashed: {type(exc).__name__}: {exc}", is_error=True)
        content = self._spill(call.name, out)
        result = self._done[call.id] = _result(call, content, "error" if out.is_error else "ok")
        self._ended.add(call.id)
        self._emit_end(call, result)  # as it finishes; the history still records in call order

    def _spill(self, name: str, out: ToolOutput) -> str:
        if out.full_output is None and not is_large(out.content):
            return out.content
        store = self.cfg.results
        assert store is not None  # all_tools() creates it for any run that carries a tool
        rid, path = store.save(out.content, out.full_output)
        return store.preview(rid, path, name)

    async def _execute(self, calls: list[ToolCall], no_tools: str | None) -> list[ToolResult]:
        """Run a batch: consecutive read-only calls together, others alone; results in call order."""
        self._done.clear()
        results: list[ToolResult] = []
        i = 0
        while i < len(calls):
            if self.cfg.steering == "immediate" and self.inbox.has("steer"):
                first = self.inbox.peek("steer")[0]
                src = getattr(first, "source", "user")
                for call in calls[i:]:
                    results.append(self._record(call, _result(
                        call, f"Not executed: a new message from the {src} arrived before this call "
                              "started. It may be retried if still needed.", "skipped")))
                break
            group: list[ToolCall] = [calls[i]]
            tool0 = self.tools.get(calls[i].name)
            if tool0 is not None and tool0.read_only:
                while i + len(group) < len(calls):
                    nxt = self.tools.get(calls[i + len(group)].name)
                    if nxt is None or not nxt.read_only:
                        break
                    group.append(calls[i + len(group)])
            i += len(group)
            ready: list[tuple[ToolCall, Tool, BaseModel]] = []
            for call in group:
                checked = await self._precheck(call, no_tools)
                if isinstance(checked, ToolResult):
                    self._done[call.id] = checked
                else:
                    ready.append((call, *checked))
            if ready:
                await self._park("tool")
                if len(ready) == 1:
                    await self._run_tool(*ready[0])
                else:
                    async with anyio.create_task_group() as tg:
                        for item in ready:
                            tg.start_soon(self._run_tool, *item)
            for call in group:
                results.append(self._record(call, self._done.pop(call.id)))
        return results

    def _note_staleness(self, results: list[ToolResult]) -> None:
        st = self.state
        hashes = [hash((r.name, r.content)) for r in results]
        if hashes and all(h in st.seen_results for h in hashes):
            st.stale_rounds += 1
        else:
            st.stale_rounds = 0
        st.seen_results.update(hashes)

    # ---- the run -------------------------------------------------------------------------
    async def run(self, initial: Sequence[UserMessage] = (), *, wake: bool = False) -> RunOutcome:
        """One run to its end. ``wake``: started by queued input, so every lane is deliverable."""
        self._pending.extend(initial)
        self._poll("steer", "aside", "follow_up") if wake else self._poll("steer")
        st = self.state
        if not self._pending:
            return RunOutcome("done")
        if self.cfg.time_limit is not None:
            self.cancel.deadline = time.monotonic() + self.cfg.time_limit
        self._emit(AgentStart, run_id=st.run_id)
        reason: EndReason = "done"
        error: str | None = None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + (self.cfg.time_limit or float("inf"))) \
                    as scope:
                try:
                    reason = await self._outer()
                except _EndRun as end:
                    reason, error = end.reason, end.error
            if scope.cancelled_caught:
                reason, error = "error", f"The run's time limit of {self.cfg.time_limit:g} s was reached."
                self._close_outstanding("Cancelled: the run's time limit was reached.", "cancelled")
        except (anyio.get_cancelled_exc_class(), _Aborted) as exc:
            self._close_outstanding("Cancelled: the user aborted the run before this call finished.",
                                    "cancelled")
            self._rescue_pending()
            self._emit(AgentEnd, reason="aborted")
            if not isinstance(exc, _Aborted):
                raise
            return RunOutcome("aborted", usage=st.usage, rounds=st.total_rounds)
        except Exception as exc:  # a bug below the loop: keep every call answered, end clearly
            reason, error = "error", f"{type(exc).__name__}: {exc}"
            self._close_outstanding(f"Not completed: internal error ({error}).", "cancelled")
        self._close_outstanding("Not executed: the run ended.", "skipped")
        self._emit(AgentEnd, reason=reason, error=error)
        last = st.last_message
        return RunOutcome(reason, text=last.text if last else "", error=error, usage=st.usage,
                          rounds=st.total_rounds)

    async def _outer(self) -> EndReason:
        """The nested pair: rounds while there is work, then the stop boundary's drain."""
        st = self.state
        self._resolve_requirement()
        more = False
        while True:
            while more or self._pending:
                more, ended = await self._round()
                if ended is not None:
                    await self._turn_end()
                    return ended
            # the agent would stop here: the stop boundary
            self._apply(await self.cfg.hooks.before_yield(st))
            self._check_abort()
            if not (self._poll("steer", "aside", "follow_up") or self._pending):
                await self._turn_end()
                return "done"
            if any(isinstance(m, UserMessage) and m.lane in USER_LANES for m in self._pending):
                st.round = 0  # a new logical turn
                self._resolve_requirement()

    async def _round(self) -> tuple[bool, EndReason | None]:
        """One model call and its tool calls. Returns (more work follows, why the run ends)."""
        st = self.state
        cfg = self.cfg
        st.round += 1
        st.total_rounds += 1
        self._emit(TurnStart, round=st.total_rounds)
        await self._park("model")
        self._apply(await cfg.hooks.round_start(st))
        self._deliver_pending()  # outside input only here: every earlier call has its result
        wrapup = st.round > cfg.max_rounds
        self._apply(await cfg.hooks.before_model(st))
        tripped, self._tripped = self._tripped, None
        self._off_once = tripped is not None
        choice = self._choice(wrapup)
        self._force_next = None
        msg = await self._call_model(choice, self._fallback(wrapup, tripped))
        if msg.stop_reason == "error":
            self._close_outstanding(f"Not executed: the model's response failed ({msg.error}).", "skipped")
            raise _EndRun("error", msg.error)
        calls = self._replace_calls(msg, self._apply(await cfg.hooks.after_response(st, msg)))
        more = False
        no_tools = None
        if wrapup:
            no_tools = "Not executed: the round limit was reached."
        elif choice == "none":
            no_tools = "Not executed: tools are off for this answer."
        else:
            calls, more = self._enforce_requirement(calls)
        if calls:
            results = await self._execute(calls, no_tools)
            self._note_staleness(results)
            self._apply(await cfg.hooks.after_tools(st, results))
            self._check_abort()
            more = no_tools is None
            if more:
                self._poll("steer", "aside")  # asides ride along: a model call follows anyway
        if more and self._tripped is not None:
            self._pending.append(UserMessage(
                text=f"The `{self._tripped}` tool failed {cfg.failure_limit} times in a row. Tools are off "
                     "for your next answer: tell the user what you tried, why it failed, and what they "
                     "could do.", lane="notice", source="system"))
        self._emit(TurnEnd, round=st.total_rounds)
        if wrapup:
            return False, "round_limit"
        if tripped is not None:
            return False, "failure_limit"
        return more, None

    def _fallback(self, wrapup: bool, tripped: str | None) -> str | None:
        """The answer used if a tools-off call (wrap-up, failure stop) comes back empty."""
        if wrapup:
            return (f"I stopped after {self.cfg.max_rounds} rounds (the round limit) before finishing. "
                    "Ask me to continue if you want me to go on.")
        if tripped:
            return f"I stopped because the `{tripped}` tool failed {self.cfg.failure_limit} times in a row."
        return None

    def _replace_calls(self, msg: AssistantMessage, d: Directive | None) -> list[ToolCall]:
        """Apply an after-response hook's replacement list; withdrawn calls still get a result."""
        if d is None or d.calls is None:
            return list(msg.tool_calls)
        keep = {c.id for c in d.calls}
        for call in msg.tool_calls:
            if call.id not in keep:
                self._record(call, _result(call, "Not executed: withdrawn before it ran.", "skipped"))
        return [c for c in d.calls if c.id in self._outstanding]

    async def _turn_end(self) -> None:
        self._apply(await self.cfg.hooks.turn_end(self.state))
