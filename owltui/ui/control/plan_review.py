"""Plan mode in the TUI: the plan screen (the model's plan as Markdown, with accept / refine / reject
keys), the listener that opens it when the model presents a plan and closes it when the plan is
withdrawn, and the mode key (Alt+M: ask → edits → plan → ask).

Keys on the plan screen: ``a`` accept into the mode before plan mode (named on the screen), ``e``
accept into ``edits``, ``y`` accept into ``yolo``, ``r`` refine (type how, Enter sends, Esc goes
back), ``n`` or Esc reject (stay in plan mode). Each answer is the ``plan_answer`` command, as RPC
sends it; the command's reply is drawn in the conversation.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Markdown

from owltui.session.plans import PendingPlan
from owltui.ui.control.app_api import OwlAppApi
from owltui.ui.text import clean

Answer = dict[str, str]  # the plan_answer fields: decision, mode?, text?


class PlanScreen(ModalScreen[Answer | None]):
    """The plan, waiting for the user's answer."""

    DEFAULT_CSS = """
    PlanScreen { align: center middle; }
    PlanScreen > Vertical {
        width: 92%;
        max-width: 120;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    PlanScreen Label { padding: 0 0 1 0; }
    PlanScreen #plan-title { text-style: bold; }
    PlanScreen VerticalScroll { height: auto; max-height: 30; }
    PlanScreen Input { display: none; }
    PlanScreen Input.-refining { display: block; }
    """

    BINDINGS = [
        Binding("a", "accept('')", "Accept", show=False),
        Binding("e", "accept('edits')", "Accept, edits", show=False),
        Binding("y", "accept('yolo')", "Accept, yolo", show=False),
        Binding("r", "refine", "Refine", show=False),
        Binding("n", "reject", "Reject", show=False),
        Binding("escape", "back", "Reject / back", show=False),
    ]

    def __init__(self, call_id: str, plan: str, before: str) -> None:
        super().__init__(id="plan-screen")
        self.call_id = call_id
        self.plan = plan
        self.before = before

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("The model's plan (plan mode)", id="plan-title")
            with VerticalScroll(id="plan-body"):
                yield Markdown(clean(self.plan), id="plan-text")
            yield Label(
                f"a accept (back to {self.before} mode) · e accept, edits · y accept, yolo · "
                "r refine · n / Esc reject",
                id="plan-keys",
            )
            yield Input(
                placeholder="how should the plan change? Enter sends, Esc goes back", id="plan-refine"
            )

    @property
    def refining(self) -> bool:
        return self.query_one("#plan-refine", Input).has_class("-refining")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.refining and action not in ("back",):
            return False  # letters typed into the refine box are text, not answers
        return True

    def action_accept(self, mode: str) -> None:
        self.dismiss({"decision": "accept", **({"mode": mode} if mode else {})})

    def action_reject(self) -> None:
        self.dismiss({"decision": "reject"})

    def action_refine(self) -> None:
        box = self.query_one("#plan-refine", Input)
        box.add_class("-refining")
        box.focus()

    def action_back(self) -> None:
        box = self.query_one("#plan-refine", Input)
        if box.has_class("-refining"):
            box.remove_class("-refining")
            self.set_focus(None)
            return
        self.dismiss({"decision": "reject"})

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss({"decision": "refine", "text": event.value})


def answer_plan(app: OwlAppApi, call_id: str, answer: Answer | None) -> None:
    """Send the screen's answer as the ``plan_answer`` command (None: the plan went away)."""
    if answer is None:
        return
    app.input.focus()
    app.show_later(app.commands.call("plan_answer", call_id=call_id, **answer))


def plan_changed(app: OwlAppApi, action: str, pending: PendingPlan | None) -> None:
    """The plan broker's news: a plan to show, a plan withdrawn (its screen closes), a mode change."""
    if action == "mode":
        if app.presenter is not None:
            app.presenter.redraw_status()
        return
    if pending is None:
        return
    if action == "asked":
        app.call_later(_show, app, pending)
    elif action == "withdrawn":
        app.call_later(_close, app, pending.call_id)


def _show(app: OwlAppApi, pending: PendingPlan) -> None:
    plans = app.runtime.plans
    if plans is None or plans.get(pending.call_id) is None:
        return  # answered before it was drawn
    screen = PlanScreen(pending.call_id, pending.plan, plans.before_plan)
    app.push_screen(screen, lambda answer: answer_plan(app, pending.call_id, answer))


def _close(app: OwlAppApi, call_id: str) -> None:
    screen = app.screen
    if isinstance(screen, PlanScreen) and screen.call_id == call_id:
        screen.dismiss(None)


def cycle_mode(app: OwlAppApi) -> None:
    """The mode key: the next permission mode (the status bar shows it)."""
    plans = app.runtime.plans
    if plans is None:
        app.notify("this session has no permission modes")
        return
    plans.cycle()
