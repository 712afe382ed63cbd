"""The intake: outside input on its way into the history, held until the next round delivers it.

A round delivers outside input at one point only - after its park, its ``round_start`` hook and
compaction, just before its model call - where every earlier call has its result. Until then it
waits here. The contract:

- Who adds: ``post`` takes input from anyone the loop wires it to - the run's first prompt, a hook's
  ``Directive.append``, the limits (the failure breaker's notice, the requirement's reminder), the
  context budget's notice - at any time; it goes into the history at the next delivery point, in
  the order posted. Nobody else holds the waiting list: readers get a copy (``items``).
- What the next round takes from the inbox after its park (it is *due*): the inbox is read as late
  as possible, so a queued message stays listed and editable while the run is parked. A run starts
  due the inbox's steering, or, woken by queued input, a stop's input (``start``); a batch of tool
  calls leaves the next round due steering and asides (``after_batch``: they ride along, a model
  call follows anyway); the round takes it right after its park (``take_due``). The stop boundary
  takes its input itself, after its own park (``take_stop``): steering and asides, and a follow-up
  only when no steering was queued - the first, or all of them with ``follow_up_mode = "all"``.
  Nothing is taken from the inbox once the run was aborted.
- Delivery: ``drain`` hands everything over (the round appends it to the history) and forgets the
  inbox records of what it took.
- Rescue, on abort: ``rescue`` delivers the user's own prompt (it stays in the history) and puts
  queued input taken from the inbox but not yet delivered back, with its ids, so nothing is stranded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from owltui.agent.cancel import CancelToken
from owltui.agent.inbox import LANES, Inbox, Queued, QueueLane
from owltui.agent.messages import USER_LANES, Item, UserMessage

# what the next round takes from the inbox after its park: nothing, its steering, steering and
# asides (after a batch), or a stop's input (a run woken by queued input)
_Due = Literal["", "steer", "batch", "stop"]


class Intake:
    """Input for the next round's delivery point, and what that round takes from the inbox."""

    def __init__(self, inbox: Inbox, cancel: CancelToken, *, all_follow_ups: bool) -> None:
        self._inbox = inbox
        self._cancel = cancel
        self._follow_ups = None if all_follow_ups else 1  # follow-ups taken per stop
        self._items: list[Item] = []
        self._taken: dict[int, Queued] = {}  # id(message) -> its inbox record, until delivered
        self._due: _Due = ""

    # ---- reading -------------------------------------------------------------------------
    @property
    def items(self) -> tuple[Item, ...]:
        """What the next delivery point delivers, as it stands (a copy)."""
        return tuple(self._items)

    def waiting(self) -> bool:
        """Input waits for the next round, or is due from the inbox after its park."""
        return bool(self._items or self._due)

    def opens_turn(self) -> bool:
        """At the stop boundary: the waiting input opens a new turn (words in a user lane)."""
        return any(isinstance(m, UserMessage) and m.lane in USER_LANES for m in self._items)

    def turn_prompt(self) -> UserMessage | None:
        """The waiting prompt or follow-up the next delivery opens a turn with, if any."""
        return next(
            (m for m in self._items if isinstance(m, UserMessage) and m.lane in ("user", "follow_up")), None
        )

    # ---- adding --------------------------------------------------------------------------
    def post(self, *items: Item) -> None:
        """Input for the next delivery point, after what waits already."""
        self._items.extend(items)

    def start(self, initial: Sequence[UserMessage], *, wake: bool, gate_closed: bool) -> bool:
        """The run begins with ``initial``, due the inbox's steering (``wake``: a stop's input). With
        the gate open nothing parks before the first model call: it is taken now; with it closed, after
        the first round's park, if any of it is queued then. Whether the run has anything to do."""
        self._items.extend(initial)
        self._due = "stop" if wake else "steer"
        if not gate_closed:
            self.take_due()
        elif not self._inbox.has(*(LANES if wake else ("steer",))):
            self._due = ""
        return self.waiting()

    def after_batch(self) -> None:
        """A batch of tool calls ran and a model call follows: the next round is due steering and asides."""
        self._due = "batch"

    def take_due(self) -> bool:
        """After the round's park: take what it is due from the inbox. Whether anything was due."""
        due, self._due = self._due, ""
        if not due:
            return False
        if self._inbox.by_id:
            if due == "stop":
                self.take_stop()
            else:
                self._take("steer")
                if due == "batch":
                    self._take("aside")
        return True

    def take_stop(self) -> None:
        """The stop boundary's input: steering and asides; follow-ups only when no steering was queued."""
        steered = self._take("steer")
        self._take("aside")
        if not steered:
            self._take("follow_up", self._follow_ups)

    def _take(self, lane: QueueLane, limit: int | None = None) -> bool:
        if self._cancel.cancelled:
            return False
        taken = self._inbox.take_queued(lane, limit)
        for q in taken:
            self._taken[id(q.entry)] = q
            self._items.append(q.entry)  # type: ignore[arg-type]  # taken entries are messages
        return bool(taken)

    # ---- handing over --------------------------------------------------------------------
    def drain(self) -> list[Item]:
        """Everything waiting, for delivery now; the inbox records of what was taken are dropped."""
        items, self._items = self._items, []
        self._taken.clear()
        return items

    def rescue(self, deliver: Callable[[Sequence[Item]], None]) -> None:
        """On abort: ``deliver`` the user's own prompt; give queued input taken from the inbox but
        not delivered back to the inbox, with its ids. Everything else waiting is dropped."""
        back = [m for m in self._items if isinstance(m, UserMessage) and m.lane in LANES]
        keep = [m for m in self._items if isinstance(m, UserMessage) and m.lane == "user"]
        taken, self._taken = self._taken, {}
        self._items = []
        deliver(keep)
        if back:
            self._inbox.requeue([taken.get(id(m), m) for m in back])
