"""Plan mode: the permission mode that reads only until the user accepts a plan, and the plan's answer.

``PlanBroker`` owns the switch of the permission mode (``set_mode``: ``/mode``, ``/plan``, the
TUI's mode key, an accepted plan), which remembers the mode a session was in before plan mode and
announces each change as a ``permission_mode`` event. ``propose`` (the ``exit_plan`` tool, in plan
mode) emits ``plan_proposed {call_id, plan}`` and waits for ``answer(call_id, decision, mode, text)``
(the TUI's plan screen, plain mode's ``/plan-answer``, RPC's ``plan_answer``): ``accept`` switches to
``mode`` (default: the mode before plan mode) and the run goes on, ``refine`` and ``reject`` stay in
plan mode and their ``text`` goes back to the model. A cancelled run withdraws the plan.

With nobody to answer (print mode): ``--yes`` accepts (into ``yolo``, what ``--yes`` means), else the
model is told to end its turn with the plan as its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio

from owltui.agent.events import Emitter, ModeChanged, PlanProposed
from owltui.agent.services import PlanAnswer
from owltui.policy.permissions.model import MODES
from owltui.policy.permissions.policy import PermissionPolicy

PlanDecision = Literal["accept", "refine", "reject"]
PLAN_DECISIONS: tuple[PlanDecision, ...] = ("accept", "refine", "reject")
PLAN = "plan"
CYCLE = ("ask", "edits", PLAN)  # the mode key's round; the mode a session started in joins it


@dataclass
class PendingPlan:
    call_id: str
    plan: str
    event: anyio.Event = field(default_factory=anyio.Event)
    answer: PlanAnswer | None = None


class PlanBroker:
    """The permission mode's switch and plan mode's question (see the module docstring)."""

    def __init__(
        self, emitter: Emitter, policy: PermissionPolicy, *, interactive: bool = True, yes: bool = False
    ) -> None:
        self.emitter = emitter
        self.policy = policy
        self.interactive = interactive
        self.yes = yes
        self.started = policy.mode
        self._pending: dict[str, PendingPlan] = {}
        self._listeners: list[Callable[[str, PendingPlan | None], None]] = []

    # ---- the mode --------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.policy.mode

    @property
    def active(self) -> bool:
        """The session is in plan mode."""
        return self.policy.mode == PLAN

    @property
    def before_plan(self) -> str:
        """The mode an accepted plan returns to by default."""
        return self.policy.before_plan

    def set_mode(self, mode: str) -> str:
        """Switch the permission mode (from the next tool call on); returns it. ValueError for an
        unknown mode."""
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
        previous = self.policy.mode
        if mode == PLAN and previous != PLAN:
            self.policy.before_plan = previous
        self.policy.mode = mode
        if mode != previous:
            self.emitter.emit(ModeChanged(mode=mode, previous=previous))
            self._notify("mode", None)
        return mode

    def cycle(self) -> str:
        """The next mode of the mode key: ask → edits → plan → ask, with the mode the session started
        in (yolo, read-only) after plan when it is another one."""
        order = list(CYCLE) + ([self.started] if self.started not in CYCLE else [])
        now = self.policy.mode
        nxt = order[(order.index(now) + 1) % len(order)] if now in order else order[0]
        return self.set_mode(nxt)

    # ---- listeners -------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[str, PendingPlan | None], None]) -> Callable[[], None]:
        """``fn(action, pending)``: ``asked`` | ``answered`` | ``withdrawn`` with the plan, ``mode``
        with None."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, action: str, p: PendingPlan | None) -> None:
        for fn in tuple(self._listeners):
            fn(action, p)

    def pending(self) -> list[PendingPlan]:
        return list(self._pending.values())

    def get(self, call_id: str) -> PendingPlan | None:
        return self._pending.get(call_id)

    # ---- the question ----------------------------------------------------------------------
    async def propose(self, call_id: str, plan: str) -> PlanAnswer:
        """Show ``plan`` and wait for the user's answer (``exit_plan`` in plan mode)."""
        if not self.interactive:
            if self.yes:
                return PlanAnswer("accept", self.set_mode("yolo"))
            return PlanAnswer("unanswerable", self.mode)
        p = PendingPlan(call_id, plan)
        self._pending[call_id] = p
        self._notify("asked", p)
        self.emitter.emit(PlanProposed(call_id=call_id, plan=plan))
        try:
            await p.event.wait()
        finally:
            if self._pending.pop(call_id, None) is not None and p.answer is None:
                self._notify("withdrawn", p)
        assert p.answer is not None
        return p.answer

    def answer(self, call_id: str, decision: str, mode: str | None = None, text: str = "") -> str | None:
        """Answer a waiting plan; None when done, else why not (one line)."""
        p = self._pending.get(call_id)
        if p is None:
            return f"no plan {call_id!r} is waiting for an answer"
        if decision not in PLAN_DECISIONS:
            return f"unknown decision {decision!r}; expected one of {', '.join(PLAN_DECISIONS)}"
        if decision == "accept":
            target = mode or self.before_plan
            if target not in MODES or target == PLAN:
                choices = ", ".join(m for m in MODES if m != PLAN)
                return f"cannot accept into mode {target!r}; expected one of {choices}"
            self.set_mode(target)
            p.answer = PlanAnswer("accept", target, text)
        else:
            p.answer = PlanAnswer(decision, self.mode, text)
        del self._pending[call_id]
        p.event.set()
        self._notify("answered", p)
        return None

    def oldest(self) -> PendingPlan | None:
        return next(iter(self._pending.values()), None)
