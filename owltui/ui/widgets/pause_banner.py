"""The "paused" banner: elapsed time, what the pause froze (the freezer's words: "1 command and 2 jobs
frozen") and which agents are parked where. The session stays visible.

``frozen`` gives the freezer's words (the main screen passes ``freezer_words`` of its host: the
host's ``freezer.describe()``, "" for a host without a freezer); a park-only pause
(``pause_freeze = false``) says that running work continues."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from owltui.agent.pause import PauseGate
from owltui.session.commands.host import Host
from owltui.session.describe import format_duration


def freezer_words(host: Host) -> str:
    """What the host's freezer froze ("1 command and 2 jobs frozen"; "" when it has no freezer)."""
    freezer = host.freezer
    return freezer.describe() if freezer is not None else ""


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

    def __init__(
        self,
        gate: PauseGate,
        elapsed: Callable[[], float],
        id: str | None = None,
        frozen: Callable[[], str] | None = None,
    ) -> None:
        super().__init__("", id=id)
        self.gate = gate
        self.elapsed = elapsed
        self.frozen = frozen
        self.display = False

    def frozen_text(self) -> str:
        """What the pause froze, in the freezer's words ("" when nothing, or no freezer)."""
        return self.frozen() if self.frozen is not None else ""

    def on_mount(self) -> None:
        self.set_interval(0.5, self.redraw)

    def redraw(self) -> None:
        paused = self.gate.paused
        self.display = paused
        if not paused:
            return
        parked = ", ".join(f"{who} (before {where})" for who, where in sorted(self.gate.parked.items()))
        frozen = self.frozen_text() if self.gate.frozen else ""
        t = Text(f"⏸ paused {format_duration(self.elapsed())}")
        if frozen:
            t.append(f"  ·  {frozen}")
        if parked:
            t.append(f"  ·  parked: {parked}")
        elif not frozen:
            t.append(
                "  ·  no agent parked yet (running work continues)"
                if not self.gate.frozen
                else "  ·  nothing running; no agent parked yet"
            )
        t.append("  ·  /resume or F2 to continue", style="not bold")
        self.update(t)
