"""The user's hooks on the loop's own hook points, as directives (no hook-specific code in the loop).

- ``PreToolUse``: the after-response hook asks the hooks about each call before the batch starts. A
  rewrite (``updatedInput``) replaces the call's arguments there, so validation, the refusal checks,
  the permission rules and the sandbox judge the rewritten call; a block (exit 2, ``deny``,
  ``decision: block``) becomes that call's refusal result, with the hook's reason. ``ask`` makes the
  permission check ask about the call in every mode (refused where nobody can answer); ``allow``
  leaves it to the normal check (it never skips it).
- ``PostToolUse``: the after-tools hook; ``decision: block`` with ``reason``, an exit 2's stderr and
  ``additionalContext`` reach the model as a reminder at the next safe point.
- ``UserPromptSubmit``: just before the prompt is delivered; context joins it, a block ends the run
  before the prompt is sent (the hook's ``hook_end`` tells the user why).
- ``Stop`` / ``SubagentStop``: the before-yield hook (``SubagentStop`` in a ``task`` subagent's
  loop, which ``install_subagent`` gives the tool hooks and the stop); a refusal's reason goes to the
  model and the run goes on, at most ``max_escalations`` times per turn (the soft requirement's cap,
  config ``max_escalations``), with ``stop_hook_active`` true after the first; past the cap the run
  ends and the hook's ``hook_end`` names the hook and the cap.
- ``SessionStart``: before the first run; its context is delivered with the first prompt.
- ``SessionEnd``: when the session closes, after its run ended (``reason`` ``other``).
"""

from __future__ import annotations

from typing import Any

from owltui.agent.config import LoopConfig
from owltui.agent.hooks import Directive, Hook, Refusal, ResponseHook, ResultsHook
from owltui.agent.messages import USER_LANES, AssistantMessage, ToolCall, ToolResult, UserMessage
from owltui.agent.state import EndRun, RunState
from owltui.features.hooks.config import ConfiguredHook, Dialect
from owltui.features.hooks.engine import HookRunner, Ran
from owltui.features.hooks.names import claude_input, claude_name, owltui_input, tool_response
from owltui.features.hooks.outcome import Outcome

SOURCE = "hook"


def _note(text: str) -> UserMessage:
    return UserMessage(text=text, lane="reminder", source=SOURCE)


def _merge(first: Directive | None, second: Directive | None) -> Directive | None:
    if first is None or second is None:
        return first or second
    first.append.extend(second.append)
    if second.calls is not None:
        first.calls = second.calls
    first.end_with = first.end_with if first.end_with is not None else second.end_with
    return first


def _stopped(ran: list[Ran]) -> Directive | None:
    """``continue: false`` from any hook ends the run with its ``stopReason``."""
    for r in ran:
        if r.outcome.stop:
            return Directive(end_with=r.outcome.stop_reason or f"Stopped by the hook `{r.hook.command}`.")
    return None


class LoopHooks:
    """One session's user hooks, bound to one loop configuration (``install``)."""

    def __init__(self, runner: HookRunner) -> None:
        self.runner = runner
        self.denied: dict[str, str] = {}  # call id -> why a PreToolUse hook blocked it
        self.calls: dict[str, ToolCall] = {}  # call id -> the call as it runs (rewritten or not)
        self.stop_refusals = 0
        self.stop_turn: object = None  # the user's message the refusals were counted for
        self.session_context: list[str] = []
        self.stopping: list[Ran] = []  # PreToolUse answers with ``continue: false`` in this response

    # ---- tools -----------------------------------------------------------------------------
    def _tool_payload(self, call: ToolCall, extra: dict[str, Any] | None = None) -> Any:
        ws = self.runner.workspace

        def payload(dialect: Dialect) -> dict[str, Any]:
            claude = dialect == "claude"
            args = claude_input(call.name, call.arguments, ws) if claude else dict(call.arguments)
            data: dict[str, Any] = {
                "tool_name": claude_name(call.name) if claude else call.name,
                "tool_input": args,
                "tool_use_id": call.id,
            }
            if extra is not None:
                res = extra["result"]
                data["tool_response"] = tool_response(
                    call.name, args, res.content, res.status == "ok", claude
                )
            return data

        return payload

    def _subject(self, call: ToolCall) -> Any:
        return lambda dialect: claude_name(call.name) if dialect == "claude" else call.name

    async def pre_tool(self, state: RunState, call: ToolCall) -> ToolCall:
        agent = None if state.config.name == "main" else state.config.name
        ran = await self.runner.fire("PreToolUse", self._tool_payload(call), self._subject(call), agent)
        self.stopping.extend(r for r in ran if r.outcome.stop)
        for r in ran:
            o = r.outcome
            if o.decision in ("deny", "block"):
                why = o.reason or "no reason given"
                self.denied[call.id] = f"Refused by the PreToolUse hook `{r.hook.command}`: {why}"
                return call
            if o.decision == "ask" and self.runner.ask_for is not None:
                why = f"the PreToolUse hook `{r.hook.command}` asks: {o.reason or 'approve this call?'}"
                self.runner.ask_for(call.id, why)
            if o.updated_input is not None:
                new = o.updated_input
                if r.hook.source.dialect == "claude":
                    new = owltui_input(call.name, new)
                call = call.model_copy(update={"arguments": {**call.arguments, **new}})
        return call

    def after_response(self, prev: ResponseHook) -> ResponseHook:
        async def hook(state: RunState, msg: AssistantMessage) -> Directive | None:
            d = await prev(state, msg)
            calls = d.calls if d is not None and d.calls is not None else list(msg.tool_calls)
            if not calls or not self.runner.configured("PreToolUse"):
                return d
            self.stopping = []
            rewritten = [await self.pre_tool(state, c) for c in calls]
            self.calls.update((c.id, c) for c in rewritten)
            return _merge(_merge(d, Directive(calls=rewritten)), _stopped(self.stopping))

        return hook

    def refusal(self) -> Refusal:
        async def check(_state: RunState, call: ToolCall) -> str | None:
            return self.denied.pop(call.id, None)

        return check

    def after_tools(self, prev: ResultsHook) -> ResultsHook:
        async def hook(state: RunState, results: list[ToolResult]) -> Directive | None:
            d = await prev(state, results)
            if not self.runner.configured("PostToolUse"):
                return d
            agent = None if state.config.name == "main" else state.config.name
            known = {c.id: c for c in (state.last_message.tool_calls if state.last_message else [])}
            notes: list[UserMessage] = []
            every: list[Ran] = []
            for res in results:
                call = self.calls.pop(res.call_id, None) or known.get(res.call_id)
                if call is None or res.status != "ok":
                    continue  # Claude Code runs PostToolUse only for a call that completed
                payload = self._tool_payload(call, {"result": res})
                ran = await self.runner.fire("PostToolUse", payload, self._subject(call), agent)
                every.extend(ran)
                for r in ran:
                    o = r.outcome
                    if o.decision == "block":
                        why = o.reason or "no reason given"
                        notes.append(_note(f"PostToolUse hook `{r.hook.command}` on `{call.name}`: {why}"))
                    if o.context:
                        notes.append(_note(o.context))
            d = _merge(d, _stopped(every))
            return _merge(d, Directive(append=list(notes))) if notes else d

        return hook

    # ---- prompts and stops ---------------------------------------------------------------
    async def prompt(self, message: UserMessage) -> Directive | None:
        if not self.runner.configured("UserPromptSubmit"):
            return None

        def judge(hook: ConfiguredHook, o: Outcome) -> None:
            if o.decision == "block":
                o.error = f"prompt blocked by the hook `{hook.command}`: {o.reason or 'no reason given'}"

        ran = await self.runner.fire("UserPromptSubmit", lambda _d: {"prompt": message.text}, judge=judge)
        if any(r.outcome.decision == "block" or r.outcome.stop for r in ran):
            raise EndRun("done")  # the prompt is not sent; hook_end said why
        notes = [_note(r.outcome.context) for r in ran if r.outcome.context]
        return Directive(append=list(notes)) if notes else None

    def _turn_marker(self, state: RunState) -> object:
        for item in reversed(state.history.items()):
            if isinstance(item, UserMessage) and item.lane in USER_LANES and item.source == "user":
                return item
        return None

    def before_yield(self, prev: Hook) -> Hook:
        async def hook(state: RunState) -> Directive | None:
            d = await prev(state)
            if d is not None and (d.append or d.end_with is not None):
                return d  # something else goes on already: not a stop
            event = "Stop" if state.config.name == "main" else "SubagentStop"
            if not self.runner.configured(event):
                return d
            marker = self._turn_marker(state)
            if marker is not self.stop_turn:
                self.stop_turn, self.stop_refusals = marker, 0
            active = self.stop_refusals > 0
            cap = state.config.max_escalations
            over = self.stop_refusals >= cap

            def judge(hook: ConfiguredHook, o: Outcome) -> None:
                if o.decision == "block" and over:
                    o.error = (
                        f"the {event} hook `{hook.command}` refused the stop {cap} times this "
                        "turn already (the cap): the run ends"
                    )

            agent = None if event == "Stop" else state.config.name
            ran = await self.runner.fire(
                event, lambda _d: {"stop_hook_active": active}, agent=agent, judge=judge
            )
            refusals = [r for r in ran if r.outcome.decision == "block"]
            if not refusals or over:
                return d
            self.stop_refusals += 1
            notes = [
                _note(f"{event} hook `{r.hook.command}`: {r.outcome.reason or 'do not stop yet'}")
                for r in refusals
            ]
            return _merge(d, Directive(append=list(notes)))

        return hook

    def round_start(self, prev: Hook) -> Hook:
        async def hook(state: RunState) -> Directive | None:
            d = await prev(state)
            if not self.session_context:
                return d
            notes, self.session_context = [_note(t) for t in self.session_context], []
            return _merge(d, Directive(append=list(notes)))

        return hook

    async def session_start(self, source: str = "startup") -> None:
        ran = await self.runner.fire("SessionStart", lambda _d: {"source": source})
        self.session_context.extend(r.outcome.context for r in ran if r.outcome.context)

    async def session_end(self, reason: str = "other") -> None:
        """When the session closes (its run is over): nothing it says can change anything now."""
        await self.runner.fire("SessionEnd", lambda _d: {"reason": reason})


def install(cfg: LoopConfig, runner: HookRunner) -> LoopHooks:
    """Compose the user's hooks onto ``cfg``'s hook points (after whatever is there already)."""
    hooks = LoopHooks(runner)
    h = cfg.hooks
    h.after_response = hooks.after_response(h.after_response)
    h.after_tools = hooks.after_tools(h.after_tools)
    h.before_yield = hooks.before_yield(h.before_yield)
    h.round_start = hooks.round_start(h.round_start)
    cfg.refusals = (*cfg.refusals, hooks.refusal())
    earlier = cfg.before_user_turn

    async def before_turn(message: UserMessage) -> Directive | None:
        d = await earlier(message) if earlier is not None else None
        return _merge(d, await hooks.prompt(message))

    cfg.before_user_turn = before_turn
    return hooks


def install_subagent(cfg: LoopConfig, runner: HookRunner) -> LoopHooks:
    """A subagent's loop (``task``): its calls go through ``PreToolUse`` and ``PostToolUse`` and its
    stop through ``SubagentStop`` (capped as the main stop); prompts and sessions are the main loop's."""
    hooks = LoopHooks(runner)
    h = cfg.hooks
    h.after_response = hooks.after_response(h.after_response)
    h.after_tools = hooks.after_tools(h.after_tools)
    h.before_yield = hooks.before_yield(h.before_yield)
    cfg.refusals = (*cfg.refusals, hooks.refusal())
    return hooks
