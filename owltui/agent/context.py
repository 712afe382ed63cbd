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

Compaction must shrink by the provider's count, not by characters: the budget calibrates tokens per
character from the last reported input against that request's characters (never below 1 / 4), and
asks the compactor for a view whose first request is at most ``TARGET_SHARE`` (50 %) of the window by
that rate. The estimate of a view nothing was measured on (right after a compaction) uses the rate.

The compactor gets a ``CompactRequest``: where the current turn began (its user messages are kept
word for word), how many tokens of recent rounds to keep, how many the whole compacted view may take,
the rate, the window. It raises on failure. Three failures in a row (a summary that leaves the
conversation over the threshold counts as one) stop automatic compaction for the agent's session,
with a notice to the model and a ``compaction_failed`` event carrying ``stopped``; a later success
(``/compact``) re-arms it. When it cannot get under the target - what no summary removes (the system
prompt and tools, the user's own messages of this turn, the summary itself) is over it, or the first
request after a compaction is reported over the threshold - it stops at once and says so once, rather
than compacting again every round.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from owltui.agent.cancel import CancelToken
from owltui.agent.events import Compaction, CompactionFailed, CompactionReason, CompactionStart, Emit
from owltui.agent.history import SUMMARY_HEADING, History
from owltui.agent.imagecost import image_cost_for, image_tokens
from owltui.agent.messages import USER_LANES, AssistantMessage, ImageRef, Item, ToolResult, UserMessage
from owltui.agent.model import Model, ToolSpec
from owltui.agent.pause import PauseGate, park
from owltui.agent.state import Aborted

CHARS_PER_TOKEN = 4
KEEP_SHARE = 0.25  # of the window: recent rounds kept word for word after a compaction, at most
TARGET_SHARE = 0.5  # of the window: what the first request after a compaction may take, at most
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
    - ``room_tokens``: what the compacted view in all (pinned messages, summary, recent rounds) may
      take, when known; ``tokens_per_char``: the provider's tokens a character, to size it with
    """

    history: History
    model: Model
    reason: CompactionReason
    gate: PauseGate
    turn_from: int
    keep_tokens: int
    window: int | None = None
    room_tokens: int | None = None
    tokens_per_char: float = 1 / CHARS_PER_TOKEN


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


def item_chars(item: Item, image_cost: Callable[[ImageRef], int] = image_tokens) -> int:
    """Characters an item adds to a request (an estimate: text, thinking, call arguments, images;
    an image as the characters of its tokens by ``image_cost``, the rule of the model it goes to)."""
    if isinstance(item, ToolResult | UserMessage):
        text = item.content if isinstance(item, ToolResult) else item.text
        n = len(text) + ITEM_OVERHEAD
        for ref in item.images:
            n += image_cost(ref) * CHARS_PER_TOKEN
        return n
    n = len(item.text) + ITEM_OVERHEAD
    for block in item.thinking:
        n += len(block.text)
    for call in item.tool_calls:
        n += len(call.name) + len(call.raw_arguments or "") + len(json.dumps(call.arguments, default=str))
    return n


def items_chars(items: Sequence[Item], image_cost: Callable[[ImageRef], int] = image_tokens) -> int:
    return sum(item_chars(item, image_cost) for item in items)


def fixed_chars(cfg: BudgetConfig) -> int:
    """Characters of every request besides its messages: the system prompt and the tool specs."""
    tools = sum(len(s.description) + len(json.dumps(s.parameters)) for s in cfg.specs())
    return len(cfg.system_prompt) + tools


def request_tokens(cfg: BudgetConfig, view: Sequence[Item]) -> int:
    """The whole next request by characters / 4: system prompt, tool specs, the view."""
    return (fixed_chars(cfg) + items_chars(view, image_cost_for(cfg.model))) // CHARS_PER_TOKEN


def own_words(items: Sequence[Item], turn_from: int) -> list[Item]:
    """The user's own messages of the current turn: no compaction removes them."""
    return [
        it
        for it in items[turn_from:]
        if isinstance(it, UserMessage) and it.source == "user" and it.lane in USER_LANES
    ]


class ContextBudget:
    """Per agent (it outlives runs): the last measured request, the failure streak."""

    def __init__(self) -> None:
        self.failures = 0  # failed compactions in a row
        self.stopped = False  # automatic compaction gave up for this session
        self._view: Sequence[Item] | None = None  # the view the last reported figure belongs to
        self._at = 0  # its length right after that response
        self._tokens = 0  # that request's input tokens plus the response's output tokens
        self._sent: tuple[int, int] | None = None  # that request's input tokens, its messages' characters
        self._compacted: Sequence[Item] | None = None  # the view the last automatic compaction made
        self._first_input: int | None = None  # the input tokens first reported on it

    def observe(self, msg: AssistantMessage, view: Sequence[Item]) -> None:
        """A response was appended to ``view``: its reported usage is the new basis."""
        if msg.usage.input_tokens > 0:
            self._view, self._at = view, len(view)
            self._tokens = msg.usage.input_tokens + msg.usage.output_tokens
            sent = view[:-1] if view and view[-1] is msg else view
            self._sent = (msg.usage.input_tokens, items_chars(sent))
            if view is self._compacted and self._first_input is None:
                self._first_input = msg.usage.input_tokens

    def rate(self, cfg: BudgetConfig) -> float:
        """The provider's tokens a character, from the last reported request (1 / 4 at least: a
        provider counting fewer only leaves more room)."""
        if self._sent is None:
            return 1 / CHARS_PER_TOKEN
        chars = fixed_chars(cfg) + self._sent[1]
        return max(1 / CHARS_PER_TOKEN, self._sent[0] / chars) if chars else 1 / CHARS_PER_TOKEN

    def measure(self, cfg: BudgetConfig, items: Sequence[Item], *, fixed: bool = True) -> int:
        """Tokens of ``items`` (and the system prompt and tools when ``fixed``) at the calibrated rate."""
        chars = items_chars(items, image_cost_for(cfg.model))
        return math.ceil((chars + (fixed_chars(cfg) if fixed else 0)) * self.rate(cfg))

    def estimate(self, cfg: BudgetConfig, view: Sequence[Item], pending: Sequence[Item] = ()) -> int:
        """Tokens of the next request, ``pending`` input included."""
        cost = image_cost_for(cfg.model)
        if self._view is view and self._at <= len(view):
            chars = 0
            for i in range(self._at, len(view)):  # what came after the response: a few items
                chars += item_chars(view[i], cost)
            tokens = self._tokens + chars // CHARS_PER_TOKEN
        else:  # nothing measured on this view (a new view after a compaction, a resumed session)
            return self.measure(cfg, [*view, *pending])
        return tokens + items_chars(pending, cost) // CHARS_PER_TOKEN if pending else tokens

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
        target = int(window * TARGET_SHARE)
        if history.model_view() is self._compacted and (self._first_input or 0) >= self.threshold(cfg):
            futile = (  # summarising again and again would not help: this provider's count stays high
                f"cannot bring the conversation under {TARGET_SHARE:.0%} of the {window}-token context "
                f"window: the first request after the last summary was already {self._first_input} tokens"
            )
            self._give_up(emit, post, futile, window, at_once=True)
            return
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
            room_tokens=target - self.measure(cfg, pending),
            tokens_per_char=self.rate(cfg),
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
        if error is None:
            view = history.model_view()
            after = self.estimate(cfg, view, pending)
            emit(Compaction, reason="auto", tokens_before=before, tokens_after=after)
            floor = self._floor(cfg, history, view, turn_from, pending)
            if after <= target or (after < self.threshold(cfg) and floor is None):
                self.failures = 0
                self._compacted, self._first_input = view, None
                return
            if floor is not None:
                self._give_up(emit, post, floor, window, at_once=True)
                return
            error = (
                f"the conversation is still about {after} tokens after the summary, over "
                f"{cfg.compact_at:.0%} of the {window}-token context window"
            )
        self._give_up(emit, post, error, window, at_once=False)

    def _floor(
        self,
        cfg: BudgetConfig,
        history: History,
        view: Sequence[Item],
        turn_from: int,
        pending: Sequence[Item],
    ) -> str | None:
        """Why no compaction can get under the target, when what none removes is over it: the system
        prompt and tools, the user's own messages of this turn (with the input waiting), the summary."""
        window = cfg.context_window or 0
        summary = [
            it
            for it in view
            if isinstance(it, UserMessage) and it.source == "system" and it.text.startswith(SUMMARY_HEADING)
        ]
        parts = {
            "the system prompt and tool definitions": math.ceil(fixed_chars(cfg) * self.rate(cfg)),
            "the user's own messages of this request": self.measure(
                cfg, [*own_words(history.items(), turn_from), *pending], fixed=False
            ),
            "the summary": self.measure(cfg, summary, fixed=False),
        }
        total = sum(parts.values())
        if total <= window * TARGET_SHARE:
            return None
        largest = max(parts, key=lambda k: parts[k])
        return (
            f"cannot bring the conversation under {TARGET_SHARE:.0%} of the {window}-token context window: "
            f"what no summary removes is about {total} tokens, most of it {largest} ({parts[largest]})"
        )

    def _give_up(self, emit: Emit, post: Post, error: str, window: int, *, at_once: bool) -> None:
        """One more failure; the third in a row - or one that no retry can mend - stops automatic
        compaction for the session, said once to the model and the user."""
        self.failures += 1
        self.stopped = at_once or self.failures >= MAX_FAILURES
        emit(CompactionFailed, reason="auto", error=error, failures=self.failures, stopped=self.stopped)
        if not self.stopped:
            return
        why = (
            f"Automatic compaction {error}, so it is off for the rest of this session"
            if at_once
            else f"Automatic compaction failed {self.failures} times in a row (last: {error}), so it "
            "is off for the rest of this session"
        )
        post(
            UserMessage(
                text=f"{why}. The conversation is close to the model's {window}-token context window: keep "
                "tool output small (narrow reads and searches).",
                lane="notice",
                source="system",
            )
        )
