"""The honest interrupt: after Esc / Ctrl+C / RPC abort (an ``agent_end`` event
with reason ``aborted``), a notice lists what is still running — background jobs and processes
that escaped their command (``runtime.jobs.still_running()``) — with keys: ``k`` kills them all
(``runtime.jobs.kill_running()``), Enter keeps them; the buttons do the same with the mouse. Esc
goes back to the input (the notice stays, its keys still work once focused again).

``watch_interrupts(app)`` subscribes to the host's events and returns the unsubscribe function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from owltui.agent import events as ev
from owltui.session.commands.host import Host
from owltui.ui.text import clean

if TYPE_CHECKING:
    from owltui.tools.jobs.manager import JobManager
    from owltui.ui.control.app_api import OwlAppApi


def _row(item: Mapping[str, Any]) -> str:
    kind = "job" if item.get("kind") == "job" else "escaped process"
    pid = f", pid {item['pid']}" if item.get("pid") else ""
    command = " ".join(clean(str(item.get("command", ""))).split())
    if len(command) > 70:
        command = command[:69] + "…"
    return f"  {kind} {item.get('id', '?')}{pid}: {command}"


def describe_running(items: Sequence[Mapping[str, Any]]) -> str:
    n = len(items)
    head = f"interrupted; {n} thing{'s' if n != 1 else ''} still running:"
    return "\n".join([head, *(_row(i) for i in items)])


class InterruptNotice(Vertical, can_focus=True):
    """What still runs after an interrupt, with keys to kill it all or keep it."""

    DEFAULT_CSS = """
    InterruptNotice {
        height: auto;
        margin: 0 1 1 1;
        padding: 0 1;
        border-left: thick $warning;
        background: $warning 10%;
    }
    InterruptNotice:focus { background: $warning 20%; }
    InterruptNotice > Static { height: auto; }
    InterruptNotice Horizontal { height: auto; }
    InterruptNotice Button { min-width: 16; margin: 0 2 0 0; height: 1; border: none; }
    """

    BINDINGS = [
        Binding("k", "kill", "Kill them all"),
        Binding("enter", "keep", "Keep them running"),
    ]

    def __init__(
        self, items: Sequence[Mapping[str, Any]], jobs: JobManager, back: Callable[[], object] | None = None
    ) -> None:
        super().__init__()
        self.items = list(items)
        self.jobs = jobs
        self.back = back
        self.decided: str | None = None  # "killed" | "kept"
        self.text = describe_running(self.items)

    def compose(self) -> ComposeResult:
        yield Static(Text(self.text), id="interrupt-text")
        with Horizontal(id="interrupt-keys"):
            yield Button("k  kill all", id="interrupt-kill", variant="error", compact=True)
            yield Button("⏎  keep running", id="interrupt-keep", compact=True)

    def _done(self, said: str) -> None:
        self.text = f"{describe_running(self.items)}\n{said}"
        self.query_one("#interrupt-text", Static).update(Text(self.text))
        keys = self.query("#interrupt-keys")
        if keys:
            keys.first().remove()
        self.can_focus = False
        if self.back is not None:
            self.back()

    async def action_kill(self) -> None:
        if self.decided is not None:
            return
        self.decided = "killed"
        ids = [str(i["id"]) for i in self.items]
        try:
            killed = await self.jobs.kill_running(ids)
        except Exception as exc:  # the notice says what failed rather than hiding it
            self._done(f"could not kill them: {exc}")
            return
        self._done(f"killed: {', '.join(killed)}" if killed else "they had already ended")

    def action_keep(self) -> None:
        if self.decided is not None:
            return
        self.decided = "kept"
        self._done("kept running (the panel above the input lists running jobs)")

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "interrupt-kill":
            await self.action_kill()
        else:
            self.action_keep()

    def on_key(self, event: events.Key) -> None:
        """Any other typed character: the user is typing a prompt; back to the input with it."""
        if event.character and event.is_printable and event.key not in ("k", "enter"):
            event.stop()
            app: Any = self.app
            app.input.focus()
            app.input.insert(event.character)


def still_running(host: Host) -> tuple[JobManager | None, list[dict[str, object]]]:
    """The host's jobs and what of them still runs (none: a host without jobs)."""
    jobs = host.jobs
    return (jobs, jobs.still_running()) if jobs is not None else (None, [])


async def show_interrupt(app: OwlAppApi) -> InterruptNotice | None:
    """Mount the notice if anything still runs (focused when the input is empty)."""
    jobs, items = still_running(app.runtime)
    if jobs is None or not items or not app.is_running:
        return None
    notice = InterruptNotice(items, jobs, back=app.input.focus)
    await app.conversation.add(notice)
    if not app.input.text:
        notice.focus()
    return notice


def watch_interrupts(app: OwlAppApi) -> Callable[[], None]:
    """On every aborted run of the main agent, the notice (if anything still runs)."""

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.AgentEnd) and event.agent is None and event.reason == "aborted":
            app.call_later(show_interrupt, app)

    unsubscribe: Callable[[], None] = app.runtime.emitter.subscribe(on_event)
    return unsubscribe
