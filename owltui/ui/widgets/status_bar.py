"""The status line: model, a spinner and the time the run has taken while it works, the permission mode
(unless ask), context used (% of the model's window), tokens, cache hits, cost (once there is one: a
model without a price shows none), the round while a run goes, pause, requirement, queue, jobs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from owltui.agent.requirement import MAX_ESCALATIONS
from owltui.ui import look

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1  # seconds per spinner frame


@dataclass
class StatusState:
    model: str = ""
    running: bool = False
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cost: float = 0.0
    round: int = 0
    max_rounds: int = 40
    paused: bool = False
    requirement: str | None = None
    escalation: int = 0
    steer: int = 0
    follow_up: int = 0
    jobs: int = 0
    context: int | None = None  # % of the model's context window the last request used
    mode: str = "ask"  # the permission mode (shown unless it is ask)


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def _elapsed(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    return f"{s // 60}m {s % 60:02d}s" if s < 3600 else f"{s // 3600}h {s // 60 % 60:02d}m"


class StatusBar(Static):
    DEFAULT_CSS = look.rules("StatusBar", look.STATUS)

    def __init__(self, id: str | None = None, clock: Callable[[], float] | None = None) -> None:
        super().__init__("", id=id)
        self.state = StatusState()
        self.clock = clock or time.monotonic
        self._drawn: tuple[StatusState, int, int] | None = None
        self._started: float | None = None  # when the run began (the clock's time)
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self.redraw()

    def _tick(self) -> tuple[int, int]:
        """(spinner frame, whole seconds) of the run going."""
        if self._started is None:
            return 0, 0
        took = max(0.0, self.clock() - self._started)
        return int(took / TICK) % len(SPINNER), int(took)

    def redraw(self) -> None:
        """Redraw if the state changed since the last draw (called once per batch of agent events, and
        by the spinner's timer while a run goes)."""
        s = self.state
        if s.running:
            if self._started is None:
                self._started = self.clock()
            if self._timer is None and self.is_mounted:
                self._timer = self.set_interval(TICK, self.redraw, name="spinner")
        else:
            self._started = None
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
        frame, seconds = self._tick()
        if self._drawn is not None and self._drawn == (s, frame, seconds):
            return
        self._drawn = (replace(s), frame, seconds)
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(s.model, style="bold")
        if s.running:
            t.append(f"  {SPINNER[frame]} working {_elapsed(seconds)}", style="bold")
        else:
            t.append("  idle")
        if s.mode != "ask":  # the permission mode, where a narrow terminal still shows it
            t.append(f"  ⏵ {s.mode} mode", style="bold reverse" if s.mode == "plan" else "bold")
        if s.context is not None:
            t.append(f"  ctx {s.context}%", style="bold" if s.context >= 80 else "")
        t.append(f"  ↑{_k(s.tokens_in)} ↓{_k(s.tokens_out)}")
        t.append(f"  cache {_k(s.cache_read)}")
        if s.cost > 0:  # a model without a price reports none: nothing to show
            t.append(f"  ${s.cost:.4f}" if s.cost < 1 else f"  ${s.cost:.2f}")
        if s.running:  # the round of the run going; an idle agent has none
            t.append(f"  round {s.round}/{s.max_rounds}")
        if s.paused:
            t.append("  ⏸ PAUSED", style="bold reverse")
        if s.requirement:
            esc = f" (forced {s.escalation}/{MAX_ESCALATIONS})" if s.escalation else ""
            t.append(f"  require {s.requirement}{esc}", style="bold")
        if s.steer or s.follow_up:
            t.append(f"  queue {s.steer} steer · {s.follow_up} follow-up")
        if s.jobs:
            t.append(f"  jobs {s.jobs}")
        self.update(t, layout=False)  # one line, fixed height: never changes the layout
