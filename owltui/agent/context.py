"""The context budget: when the conversation must be compacted before the next model call.

The decision lives here, in one piece the loop asks at one point of a round - after its park and
before its outside input is delivered, so queued input lands after the summary. ``ContextBudget``
estimates the next request: the provider-reported input tokens of the last response plus its output
tokens, plus characters / 4 of what was appended since and of the input about to be delivered
(without a reported figure - the first call of a resumed session, right after a compaction - the
whole request by characters / 4). Past ``compact_at`` (80 %) of ``LoopConfig.context_window`` it
runs the feature's compactor (``LoopConfig.compactor``; ``owltui.features.compaction`` writes the
summary on the same loop machinery as ``/compact``) as a visible step: ``compaction_start``, the
pause gate when ``compaction_confirm`` asks for a look first, then ``compaction`` with the estimates
before and after. The loop stays one loop: this is the only place that knows compaction exists.

The compactor gets a ``CompactRequest``: where the current turn began (its user messages are kept
word for word), how many tokens of recent rounds to keep, the window. It raises on failure. Three
failures in a row (a summary that leaves the conversation over the threshold counts as one) stop
automatic compaction for the agent's session, with a notice to the model and a
``compaction_failed`` event carrying ``stopped``; a later success (``/compact``) re-arms it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from owltui.agent.cancel import CancelToken
from owltui.agent.events import Compaction, CompactionFailed, CompactionReason, CompactionStart, Emit
from owltui.agent.history import History
from owltui.agent.messages import AssistantMessage, Item, ToolResult, UserMessage
from owltui.agent.model import Model, ToolSpec
from owltui.agent.pause import PauseGate, park
from owltui.agent.state import Aborted

CHARS_PER_TOKEN = 4
KEEP_SHARE = 0.25  # of the window: recent rounds kept word for word after a compaction
MAX_FAILURES = 3
ITEM_OVERHEAD = 16  # characters of framing per item (role, ids) in a request


@dataclass(frozen=True)
class CompactRequest:
    """What a compactor is asked to do: summarise ``history`` for ``model``'s next call.

    - ``turn_from``: index in ``history.items()`` where the current turn began; its user messages
      stay word for word (pinned before the summary) when the cut falls after them
    - ``keep_tokens``: recent rounds up to about this many tokens stay as they are (the cut falls
      between rounds, never between a call and its result)
    - ``window``: the model's context window in tokens, when known (the summary call must fit it)
    """

    history: History
    model: Model
    reason: CompactionReason
    gate: PauseGate
    turn_from: int
    keep_tokens: int
    window: int | None = None


Compactor = Callable[[CompactRequest], Awaitable[object]]  # raises with one sentence on failure
Post = Callable[[UserMessage], None]


class BudgetConfig(Protocol):
    """What the budget reads of the run's ``LoopConfig`` (which imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def context_window(self) -> int | None: ...
    @property
    def compact_at(self) -> float: ...
    @property
    def compactor(self) -> Compactor | None: ...
    @property
    def compaction_confirm(self) -> bool: ...

    def specs(self) -> list[ToolSpec]: ...


def item_chars(item: Item) -> int:
    """Characters an item adds to a request (an estimate: text, thinking, call arguments)."""
    if isinstance(item, ToolResult):
        return len(item.content) + ITEM_OVERHEAD
    if isinstance(item, UserMessage):
        return len(item.text) + ITEM_OVERHEAD
    n = len(item.text) + ITEM_OVERHEAD
    for block in item.thinking:
        n += len(block.text)
    for call in item.tool_calls:
        n += len(call.name) + len(call.raw_arguments or "") + len(json.dumps(call.arguments, default=str))
    return n


def items_chars(items: Sequence[Item]) -> int:
    return sum(map(item_chars, items))


def request_tokens(cfg: BudgetConfig, view: Sequence[Item]) -> int:
    """The whole next request by characters / 4: system prompt, tool specs, the view."""
    tools = sum(len(s.description) + len(json.dumps(s.parameters)) for s in cfg.specs())
    return (len(cfg.system_prompt) + tools + items_chars(view)) // CHARS_PER_TOKEN


class ContextBudget:
    """Per agent (it outlives runs): the last measured request, the failure streak."""

    def __init__(self) -> None:
        self.failures = 0  # failed compactions in a row
        self.stopped = False  # automatic compaction gave up for this session
        self._view: Sequence[Item] | None = None  # the view the last reported figure belongs to
        self._at = 0  # its length right after that response
        self._tokens = 0  # that request's input tokens plus the response's output tokens

    def observe(self, msg: AssistantMessage, view: Sequence[Item]) -> None:
        """A response was appended to ``view``: its reported usage is the new basis."""
        if msg.usage.input_tokens > 0:
            self._view, self._at = view, len(view)
            self._tokens = msg.usage.input_tokens + msg.usage.output_tokens

    def estimate(self, cfg: BudgetConfig, view: Sequence[Item], pending: Sequence[Item] = ()) -> int:
        """Tokens of the next request, ``pending`` input included."""
        if self._view is view and self._at <= len(view):
            chars = 0
            for i in range(self._at, len(view)):  # what came after the response: a few items
                chars += item_chars(view[i])
            tokens = self._tokens + chars // CHARS_PER_TOKEN
        else:  # nothing measured on this view (a new view after a compaction, a resumed session)
            tokens = request_tokens(cfg, view)
        return tokens + items_chars(pending) // CHARS_PER_TOKEN if pending else tokens

    def threshold(self, cfg: BudgetConfig) -> int:
        return int((cfg.context_window or 0) * cfg.compact_at)

    def due(self, cfg: BudgetConfig, view: Sequence[Item], pending: Sequence[Item]) -> int | None:
        """The estimate when it passes the threshold (compact now), else None."""
        if self.stopped or not cfg.context_window or cfg.compactor is None:
            return None
        tokens = self.estimate(cfg, view, pending)
        return tokens if tokens >= cfg.context_window * cfg.compact_at else None

    def succeeded(self) -> None:
        """A compaction (automatic or ``/compact``) worked: automatic compaction is armed again."""
        self.failures = 0
        self.stopped = False

    async def compact(
        self,
        cfg: BudgetConfig,
        history: History,
        *,
        before: int,
        turn_from: int,
        pending: Sequence[Item],
        emit: Emit,
        gate: PauseGate,
        cancel: CancelToken,
        post: Post,
    ) -> None:
        """Compact now, as a visible step; failures are counted, never raised (an abort is)."""
        assert cfg.compactor is not None and cfg.context_window
        window = cfg.context_window
        emit(CompactionStart, reason="auto", tokens_before=before)
        if cfg.compaction_confirm:  # the user looks first; resuming the gate goes on
            gate.pause(freeze=False)
            await park(gate, cancel, cfg.name, "model")
        request = CompactRequest(
            history=history,
            model=cfg.model,
            reason="auto",
            gate=gate,
            turn_from=turn_from,
            keep_tokens=int(window * KEEP_SHARE),
            window=window,
        )
        error: str | None = None
        try:
            await cfg.compactor(request)
        except Aborted:
            raise
        except Exception as exc:
            error = str(exc) or type(exc).__name__
        if cancel.cancelled:
            raise Aborted
        after: int | None = None
        if error is None:
            after = self.estimate(cfg, history.model_view(), pending)
            emit(Compaction, reason="auto", tokens_before=before, tokens_after=after)
            if after < self.threshold(cfg):
                self.failures = 0
                return
            error = (
                f"the conversation is still about {after} tokens after the summary, over "
                f"{cfg.compact_at:.0%} of the {window}-token context window"
            )
        self.failures += 1
        self.stopped = self.failures >= MAX_FAILURES
        emit(CompactionFailed, reason="auto", error=error, failures=self.failures, stopped=self.stopped)
        if self.stopped:
            post(
                UserMessage(
                    text=f"Automatic compaction failed {self.failures} times in a row (last: {error}), so it "
                    "is off for the rest of this session. The conversation is close to the model's "
                    f"{window}-token context window: keep tool output small (narrow reads and searches).",
                    lane="notice",
                    source="system",
                )
            )
