"""The one place OwlTUI's events become ACP output: ``Updates.event(wire_event(ev))`` returns the
``session/update`` payloads (and extension notifications, ``Notice``) one event means.

Message deltas are agent message and thought chunks (a message that streamed nothing is sent whole
at its end); delivered steering, follow-ups and asides are user message chunks. Each tool call is
announced at the ``message_end`` that carries it (pending: title, kind, ``rawInput``, absolute
locations, a write's or edit's diff), runs (``in_progress``, its output so far) and ends
``completed`` or ``failed`` (refused, skipped and cancelled say which and why); a call first seen at
its end is announced there. Command output is text, or with ``terminal_output`` Zed's ``_meta``
terminal convention (``terminal_info``/``terminal_output``/``terminal_exit``). Each model call's
usage is a ``usage_update``; the todo list is a ``plan`` update, a permission mode change (an
accepted plan) a ``config_option_update``; pause, jobs and the queue (an inbox listener: ``queue``) are
``_owltui/*`` notices; ``agent_end`` sets ``stop_reason()``. Events come as ``wire_event`` dicts,
sanitised already (arguments excepted); a subagent's own events are left out, its approvals kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.helpers import (
    ToolCallContentVariant,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    Cost,
    CurrentModeUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionInfoUpdate,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from owltui.modes.acp.plans import todo_update
from owltui.modes.acp.tool_calls import (
    OpenCall,
    announce,
    call_name,
    end_content,
    terminal_meta,
    text_content,
    tool_diff,
)

SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean

DELIVERED_LANES = frozenset({"steer", "follow_up", "aside"})
STREAMED_OUTPUT_CHARS = 64 * 1024  # a running command's output shown as text: its last this many
END_REASONS = {"done": "end_turn", "aborted": "cancelled", "round_limit": "max_turn_requests"}


@dataclass(frozen=True)
class Notice:
    """An extension notification: ``conn.ext_notification(method, params)``."""

    method: str  # "_owltui/queue" | "_owltui/paused" | "_owltui/job"
    params: dict[str, Any]


Outgoing = SessionUpdate | Notice


class Updates:
    """One ACP session's translator; keeps what it needs between events (open tool calls...).

    ``context_window``: the model's window in tokens, asked at each usage (None: not known);
    ``options``: the session's config options, asked when they may have changed."""

    def __init__(
        self,
        workspace: Path,
        *,
        terminal_output: bool = False,
        context_window: Callable[[], int | None] | None = None,
        options: Callable[[], list[ConfigOption]] | None = None,
    ) -> None:
        self.workspace = workspace
        self.terminal_output = terminal_output
        self._window = context_window
        self._options = options
        self._calls: dict[str, OpenCall] = {}
        self._streamed_text = False
        self._streamed_thinking = False
        self._last_stop: str | None = None
        self._stop_reason: str | None = None
        self._error: str | None = None
        self._cost = 0.0
        self._shown_options: list[dict[str, Any]] | None = None
        self._shown_queue: dict[str, Any] | None = None
        self.ends = 0  # agent_end events seen
        self.hold_options = False  # set_config_option is changing them: its response tells them

    # ---- what the server asks ------------------------------------------------------------
    def stop_reason(self) -> str | None:
        """The ACP stopReason of the last agent_end seen (``END_REASONS``, max_tokens), or None."""
        return self._stop_reason

    def error(self) -> str | None:
        """The error of the last run, when it ended with one."""
        return self._error

    def tool_call(self, call_id: str) -> ToolCallUpdate | None:
        """Call ``call_id`` as ``session/request_permission`` shows it (None: not seen)."""
        call = self._calls.get(call_id)
        if call is None:
            return None
        start = self._start(call_id, call, "pending")
        return ToolCallUpdate.model_validate(start.model_dump(exclude={"session_update"}))

    def queue(self, snapshot: Mapping[str, Any]) -> list[Outgoing]:
        """The inbox changed: ``snapshot`` is ``inbox.snapshot()`` (``get_state``'s ``queue``)."""
        queue = {lane: [dict(item) for item in items] for lane, items in snapshot.items()}
        if queue == self._shown_queue:
            return []
        self._shown_queue = queue
        return [Notice("_owltui/queue", {"queue": queue})]

    def options_changed(self) -> list[Outgoing]:
        """A ``config_option_update`` when the options differ from the ones last shown."""
        if self._options is None or self.hold_options:
            return []
        options = self._options()
        dumped = [o.model_dump(by_alias=True, exclude_none=True) for o in options]
        if dumped == self._shown_options:
            return []
        first = self._shown_options is None
        self._shown_options = dumped
        if first:  # the session/new (or load) answer carried them
            return []
        return [ConfigOptionUpdate(session_update="config_option_update", config_options=list(options))]

    def options_shown(self, options: list[ConfigOption]) -> None:
        """The client was given ``options`` (in a response): later changes are told against them."""
        self._shown_options = [o.model_dump(by_alias=True, exclude_none=True) for o in options]

    # ---- events --------------------------------------------------------------------------
    def event(self, event: Mapping[str, Any]) -> list[Outgoing]:
        """``event`` is a wire_event(ev) dict (what RPC mode writes)."""
        kind = event.get("type")
        if not isinstance(kind, str):
            return []
        if event.get("agent") is not None and kind != "approval_request":
            return []
        handler = _HANDLERS.get(kind)
        return handler(self, event) if handler is not None else []

    def _message_delta(self, e: Mapping[str, Any]) -> list[Outgoing]:
        out: list[Outgoing] = []
        thinking, text = e.get("thinking"), e.get("text")
        if isinstance(thinking, str) and thinking:
            self._streamed_thinking = True
            out.append(update_agent_thought_text(thinking))
        if isinstance(text, str) and text:
            self._streamed_text = True
            out.append(update_agent_message_text(text))
        return out

    def _message_end(self, e: Mapping[str, Any]) -> list[Outgoing]:
        out: list[Outgoing] = []
        thinking, text = e.get("thinking"), e.get("text")
        if isinstance(thinking, str) and thinking and not self._streamed_thinking:
            out.append(update_agent_thought_text(thinking))
        if isinstance(text, str) and text and not self._streamed_text:
            out.append(update_agent_message_text(text))
        self._streamed_text = self._streamed_thinking = False
        stop = e.get("stop_reason")
        self._last_stop = stop if isinstance(stop, str) else None
        for tc in e.get("tool_calls") or []:
            if isinstance(tc, Mapping) and isinstance(tc.get("id"), str) and tc["id"] not in self._calls:
                call = self._remember(tc["id"], tc.get("name"), tc.get("arguments"))
                out.append(self._announce(tc["id"], call, "pending"))
        usage = e.get("usage")
        if isinstance(usage, Mapping):
            out.append(self._usage(usage))
        return out

    def _input(self, e: Mapping[str, Any]) -> list[Outgoing]:
        text = e.get("text")
        if e.get("lane") in DELIVERED_LANES and isinstance(text, str) and text:
            return [update_user_message_text(text)]
        return []

    def _named_call(self, e: Mapping[str, Any]) -> tuple[str, OpenCall, bool] | None:
        """The call an event names (remembered from it when it is the first to: True), or None."""
        call_id = e.get("call_id")
        if not isinstance(call_id, str):
            return None
        call = self._calls.get(call_id)
        if call is not None:
            return call_id, call, False
        return call_id, self._remember(call_id, e.get("name"), e.get("arguments")), True

    def _approval_request(self, e: Mapping[str, Any]) -> list[Outgoing]:
        named = self._named_call(e)
        if named is None:
            return []
        call_id, call, first = named
        if first or not call.announced:
            return [self._announce(call_id, call, "pending")]
        diff = tool_diff(call.name, call.arguments, self.workspace)
        if diff == call.diff:
            return []
        call.diff = diff
        return [update_tool_call(call_id, content=list(diff))]

    def _tool_start(self, e: Mapping[str, Any]) -> list[Outgoing]:
        named = self._named_call(e)
        if named is None:
            return []
        call_id, call, _first = named
        call.running = True
        call.terminal = self.terminal_output and call.name == "bash"
        if not call.announced:
            return [self._announce(call_id, call, "in_progress")]
        content: list[ToolCallContentVariant] | None = None
        diff = tool_diff(call.name, call.arguments, self.workspace)
        if diff != call.diff:
            call.diff = diff
            content = list(diff)
        if call.terminal:
            content = [TerminalToolCallContent(type="terminal", terminal_id=call_id)]
        update = update_tool_call(call_id, status="in_progress", content=content)
        if call.terminal:
            update.field_meta = terminal_meta("terminal_info", call_id, cwd=str(self.workspace))
        return [update]

    def _tool_update(self, e: Mapping[str, Any]) -> list[Outgoing]:
        call_id, text = e.get("call_id"), e.get("text")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None or not isinstance(call_id, str) or not isinstance(text, str) or not text:
            return []
        call.output = (call.output + text)[-STREAMED_OUTPUT_CHARS:]
        if call.terminal:
            update = update_tool_call(call_id)
            update.field_meta = terminal_meta("terminal_output", call_id, data=text)
            return [update]
        return [update_tool_call(call_id, content=[text_content(call.output)])]

    def _tool_end(self, e: Mapping[str, Any]) -> list[Outgoing]:
        call_id = e.get("call_id")
        if not isinstance(call_id, str):
            return []
        out: list[Outgoing] = []
        call = self._calls.pop(call_id, None) or OpenCall(call_name(e.get("name")), {})
        output = e["output"] if isinstance(e.get("output"), str) else ""
        status = e.get("status")
        details = e.get("details") if isinstance(e.get("details"), Mapping) else None
        final, content = end_content(status, e.get("is_error") is True, output, call.diff)
        meta: dict[str, Any] | None = None
        if call.terminal and call.running:
            if not call.output and output:
                stream = update_tool_call(call_id)
                stream.field_meta = terminal_meta("terminal_output", call_id, data=output)
                out.append(stream)
            code = details.get("exit_code") if details is not None else None
            meta = terminal_meta("terminal_exit", call_id, exit_code=code, signal=None)
            if status == "ok" or content is None:
                content = None
        raw = dict(details) if details is not None else None
        if not call.announced:
            start = self._start(call_id, call, final)
            start.content = content if content is not None else start.content
            start.raw_output = raw
            start.field_meta = meta
            return [*out, start]
        update = update_tool_call(call_id, status=final, content=content, raw_output=raw)
        update.field_meta = meta
        return [*out, update]

    def _paused(self, _e: Mapping[str, Any]) -> list[Outgoing]:
        return [Notice("_owltui/paused", {"paused": True}), *self.options_changed()]

    def _resumed(self, e: Mapping[str, Any]) -> list[Outgoing]:
        params: dict[str, Any] = {"paused": False}
        if isinstance(e.get("paused_ms"), int):
            params["paused_ms"] = e["paused_ms"]
        return [Notice("_owltui/paused", params), *self.options_changed()]

    def _todo(self, e: Mapping[str, Any]) -> list[Outgoing]:
        items = e.get("items")
        return [todo_update(items)] if isinstance(items, list) else []

    def _job(self, e: Mapping[str, Any]) -> list[Outgoing]:
        params: dict[str, Any] = {"job_id": e.get("job_id"), "command": e.get("command")}
        if e.get("type") == "job_finished":
            params.update(state="finished", exit_code=e.get("exit_code"))
        else:
            params["state"] = "started"
        return [Notice("_owltui/job", params)]

    def _agent_start(self, _e: Mapping[str, Any]) -> list[Outgoing]:
        self._error = None
        return []

    def _agent_end(self, e: Mapping[str, Any]) -> list[Outgoing]:
        reason = e.get("reason")
        stop = END_REASONS.get(reason, "end_turn") if isinstance(reason, str) else "end_turn"
        if reason == "done" and self._last_stop == "length":
            stop = "max_tokens"
        self._stop_reason = stop
        self.ends += 1
        out: list[Outgoing] = []
        error = e.get("error")
        if reason == "error":
            self._error = error if isinstance(error, str) and error else "the run failed"
            out.append(update_agent_message_text(f"\n\nerror: {self._error}"))
        # calls left open (a crash of the loop): the client must not show them running forever
        for call_id in list(self._calls):
            call = self._calls.pop(call_id)
            if call.announced:
                out.append(update_tool_call(call_id, status="failed", content=[text_content("cancelled")]))
        return [*out, *self.options_changed()]

    # ---- pieces --------------------------------------------------------------------------
    def _remember(self, call_id: str, name: object, arguments: object) -> OpenCall:
        call = OpenCall(call_name(name), dict(arguments) if isinstance(arguments, Mapping) else {})
        self._calls[call_id] = call
        return call

    def _start(self, call_id: str, call: OpenCall, status: ToolCallStatus) -> ToolCallStart:
        if call.name in ("write", "edit"):
            call.diff = tool_diff(call.name, call.arguments, self.workspace)
        start = announce(call_id, call.name, call.arguments, self.workspace, status, call.diff)
        if call.terminal and status == "in_progress":
            start.content = [TerminalToolCallContent(type="terminal", terminal_id=call_id)]
            start.field_meta = terminal_meta("terminal_info", call_id, cwd=str(self.workspace))
        return start

    def _announce(self, call_id: str, call: OpenCall, status: ToolCallStatus) -> ToolCallStart:
        call.announced = True
        return self._start(call_id, call, status)

    def _usage(self, usage: Mapping[str, Any]) -> UsageUpdate:
        counts = {
            k: v
            for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
            if isinstance(v := usage.get(k), int) and v >= 0
        }
        cost = usage.get("cost")
        if isinstance(cost, int | float) and cost > 0:
            self._cost += float(cost)
        used = sum(counts.values())
        window = self._window() if self._window is not None else None
        update = UsageUpdate(
            session_update="usage_update",
            used=used,
            size=window if window is not None and window > 0 else 0,
            cost=Cost(amount=self._cost, currency="USD") if self._cost > 0 else None,
        )
        update.field_meta = {"owltui": {"usage": counts}}
        return update


_HANDLERS: dict[str, Callable[[Updates, Mapping[str, Any]], list[Outgoing]]] = {
    "agent_start": Updates._agent_start,
    "message_delta": Updates._message_delta,
    "message_end": Updates._message_end,
    "input": Updates._input,
    "approval_request": Updates._approval_request,
    "tool_start": Updates._tool_start,
    "tool_update": Updates._tool_update,
    "tool_end": Updates._tool_end,
    "paused": Updates._paused,
    "resumed": Updates._resumed,
    "todo": Updates._todo,
    "permission_mode": lambda u, _e: u.options_changed(),
    "job_started": Updates._job,
    "job_finished": Updates._job,
    "agent_end": Updates._agent_end,
}
