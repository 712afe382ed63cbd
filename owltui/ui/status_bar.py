"""The status line: model, tokens, cache hits, cost, round, pause, requirement, queue, jobs."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual.widgets import Static

from owltui.agent.requirement import MAX_ESCALATIONS


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


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.state = StatusState()
        self._drawn: StatusState | None = None

    def on_mount(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Redraw if the state changed since the last draw (called once per batch of agent events)."""
        s = self.state
        if s == self._drawn:
            return
        self._drawn = replace(s)
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(s.model, style="bold")
        t.append("  working" if s.running else "  idle", style="bold" if s.running else "")
        t.append(f"  ↑{_k(s.tokens_in)} ↓{_k(s.tokens_out)}")
        t.append(f"  cache {_k(s.cache_read)}")
        t.append(f"  ${s.cost:.4f}" if s.cost < 1 else f"  ${s.cost:.2f}")
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
