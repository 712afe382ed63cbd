"""The ledger: one result for every tool call, on every path.

Everything the loop puts in the history goes through ``append``, so the ledger knows which calls
still lack a result. A call gets its result from ``record`` (which also emits ``tool_end`` unless
the running tool already did) and never a second one; ``close`` answers every call still open when a
run is cut short. Results of a running batch wait in ``done`` so they are recorded in call order even
when read-only tools finish out of order; each is handed to the history's ``record_result_early``
before its ``tool_end`` (the session file holds every result a front end was told about).
Watchers (the failure breaker) hear every recorded result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from owltui.agent.events import Emit, ToolEnd
from owltui.agent.history import History
from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult, ToolStatus

Watcher = Callable[[ToolCall, ToolResult], None]


def result_for(call: ToolCall, content: str, status: ToolStatus) -> ToolResult:
    """The result a call gets; anything but ``ok`` is an error to the model.

    An ``ok`` result leaves its defaults unset: pydantic keeps a set of the fields given, and a set
    of five names is 728 bytes where one of three is 216, for every result a long turn holds."""
    if status == "ok":
        return ToolResult(call_id=call.id, name=call.name, content=content)
    return ToolResult(call_id=call.id, name=call.name, content=content, status=status, is_error=True)


class Ledger:
    def __init__(self, history: History, emit: Emit) -> None:
        self.history = history
        self.emit = emit
        self.outstanding: dict[str, ToolCall] = {}  # calls in the history still without a result
        self.done: dict[str, ToolResult] = {}  # results of the running batch not yet recorded
        self._ended: set[str] = set()  # calls whose tool_end was already emitted
        self._watchers: list[Watcher] = []

    def watch(self, fn: Watcher) -> None:
        self._watchers.append(fn)

    def append(self, item: Item) -> None:
        """Add an item to the history, tracking the calls it opens or closes."""
        self.history.append(item)
        if isinstance(item, AssistantMessage):
            for call in item.tool_calls:
                self.outstanding[call.id] = call
        elif isinstance(item, ToolResult):
            self.outstanding.pop(item.call_id, None)

    def record(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """Give ``call`` its result (a no-op if it already has one)."""
        if call.id not in self.outstanding:
            return result
        self.append(result)
        if call.id in self._ended:
            self._ended.discard(call.id)
        else:
            self.emit(
                ToolEnd,
                call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                output=result.content,
                status=result.status,
            )
        for fn in self._watchers:
            fn(call, result)
        return result

    def skip(self, call: ToolCall, content: str) -> ToolResult:
        return self.record(call, result_for(call, content, "skipped"))

    def finished(self, call: ToolCall, result: ToolResult, details: dict[str, Any] | None) -> None:
        """A tool of the running batch finished: saved (``record_result_early``) and ``tool_end``
        now, appended to the history later in call order."""
        self.done[call.id] = result
        self._ended.add(call.id)
        self.history.record_result_early(result)  # before tool_end: what was reported is on disk
        self.emit(
            ToolEnd,
            call_id=call.id,
            name=call.name,
            is_error=result.is_error,
            output=result.content,
            status=result.status,
            details=details or None,
        )

    def settle(self, call: ToolCall) -> ToolResult:
        """Record the result a batch left for ``call`` in ``done`` (by a precheck or the tool)."""
        return self.record(call, self.done.pop(call.id))

    def close(self, content: str, status: ToolStatus) -> None:
        """Answer every call still open: with its finished result if it has one, else ``content``."""
        for call in list(self.outstanding.values()):
            done = self.done.pop(call.id, None)
            self.record(call, done if done is not None else result_for(call, content, status))
