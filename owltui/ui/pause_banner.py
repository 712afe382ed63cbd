"""The "paused" banner: elapsed time and which agents are parked where. The session stays visible."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from owltui.agent.pause import PauseGate
from owltui.session.describe import format_duration


class PauseBanner(Static):
    DEFAULT_CSS = """
    PauseBanner {
        height: 1;
        padding: 0 1;
        margin: 0 1;
        background: $warning 25%;
        color: $text;
        text-style: bold;
    }
    """

    def __init__(self, gate: PauseGate, elapsed: Callable[[], float], id: str | None = None) -> None:
        super().__init__("", id=id)
        self.gate = gate
        self.elapsed = elapsed
        self.display = False

    def on_mount(self) -> None:
        self.set_interval(0.5, self.redraw)

    def redraw(self) -> None:
        paused = self.gate.paused
        self.display = paused
        if not paused:
            return
        parked = ", ".join(f"{who} (before {where})" for who, where in sorted(self.gate.parked.items()))
        t = Text(f"⏸ paused {format_duration(self.elapsed())}")
        t.append(f"  ·  parked: {parked}" if parked else "  ·  no agent parked yet (running work continues)")
        t.append("  ·  /resume or F2 to continue", style="not bold")
        self.update(t)
