"""An MCP server's question in the conversation: a form (one line per field, filled in with its
default) or a URL to open. Like a tool approval it never takes a key typed into the prompt: Ctrl+G
arms and focuses it, Esc goes back to the prompt. On a form, Enter accepts (the values are checked
against the form first; a problem is shown and the form stays), Ctrl+D declines, Ctrl+X cancels;
on a URL, y opens it (accept), n declines, Ctrl+X cancels."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from owltui.tools.mcp.requests.form import FormField, FormProblem, fill_defaults, validate
from owltui.tools.mcp.requests.question import Question
from owltui.ui.approval import visible

HELP_FORM = "Enter accept · Ctrl+D decline · Ctrl+X cancel · Esc back to the prompt"
HELP_URL = "y open it (accept) · n decline · Ctrl+X cancel · Esc back to the prompt"


def shown_default(f: FormField) -> str:
    """A field's default as the text its line starts with."""
    if f.default is None:
        return ""
    if isinstance(f.default, bool):
        return "yes" if f.default else "no"
    if isinstance(f.default, list):
        return ", ".join(str(v) for v in f.default)
    return str(f.default)


def read_value(f: FormField, text: str) -> Any:
    """A line's text as the field's value (None: left empty). ``FormProblem`` when it is not one."""
    text = text.strip()
    if not text:
        return None
    if f.kind == "boolean":
        words = {"yes": True, "y": True, "true": True, "no": False, "n": False, "false": False}
        if text.lower() not in words:
            raise FormProblem(f"{f.title}: yes or no")
        return words[text.lower()]
    if f.kind in ("number", "integer"):
        try:
            return float(text) if f.kind == "number" else int(text)
        except ValueError:
            raise FormProblem(
                f"{f.title}: expected {'a number' if f.kind == 'number' else 'a whole number'}"
            ) from None
    by_title = dict(zip(f.choice_titles, f.choices, strict=False))
    if f.kind == "multi":
        return [by_title.get(v.strip(), v.strip()) for v in text.split(",") if v.strip()]
    if f.kind == "enum":
        return by_title.get(text, text)
    return text


def label_of(f: FormField) -> Text:
    line = Text(visible(f.title), style="bold")
    if f.required:
        line.append(" *", style="bold red")
    if f.choices:
        line.append(f"  ({' | '.join(visible(t) for t in f.choice_titles)})", style="dim")
    elif f.kind != "string":
        line.append(f"  ({'yes / no' if f.kind == 'boolean' else f.kind})", style="dim")
    if f.description:
        line.append(f"  {visible(f.description)}", style="italic dim")
    return line


class FieldInput(Input):
    """A field's line: focusable only while its question is armed (Ctrl+G), never by typing."""

    def __init__(self, field: FormField, owner: ElicitPrompt) -> None:
        super().__init__(value=shown_default(field), classes="elicit-field")
        self.field = field
        self.owner = owner

    def allow_focus(self) -> bool:
        return self.owner.armed


class ElicitPrompt(Vertical, can_focus=True):
    """One question (see the module docstring)."""

    DEFAULT_CSS = """
    ElicitPrompt {
        background: $warning 15%;
        padding: 0 1;
        margin: 1 0 0 0;
        height: auto;
        border-left: wide $warning;
    }
    ElicitPrompt:focus-within { background: $warning 30%; }
    ElicitPrompt .elicit-field { margin: 0 0 0 2; }
    ElicitPrompt .elicit-problem { color: $error; }
    """

    BINDINGS = [
        Binding("enter", "answer('accept')", "Accept", show=False),
        Binding("y", "url('accept')", "Open", show=False),
        Binding("n", "url('decline')", "Decline", show=False),
        Binding("ctrl+d", "answer('decline')", "Decline", show=False),
        Binding("ctrl+x", "answer('cancel')", "Cancel", show=False),
    ]

    class Answered(Message):
        def __init__(self, qid: str, action: str, content: dict[str, Any] | None) -> None:
            super().__init__()
            self.qid = qid
            self.action = action
            self.content = content

    def __init__(self, question: Question) -> None:
        super().__init__(id=f"elicit-{question.id}")
        self.question = question
        self.armed = False
        self._problem = Static("", classes="elicit-problem")

    def compose(self) -> ComposeResult:
        q = self.question
        head = Text(f"MCP server {visible(q.server)} asks: ", style="bold")
        head.append(visible(q.message))
        yield Static(head)
        if q.mode == "url":
            yield Static(Text(visible(q.url or ""), style="underline"))
        for f in q.fields:
            yield Static(label_of(f))
            yield FieldInput(f, self)
        yield self._problem
        yield Static(Text(HELP_URL if q.mode == "url" else HELP_FORM, style="dim"))

    @property
    def text(self) -> str:
        """Everything it shows, as plain text (tests)."""
        parts = [str(w.render()) for w in self.query(Static)]
        return "\n".join(parts)

    def allow_focus(self) -> bool:
        return self.armed

    def arm(self) -> None:
        """Let the next ``focus()`` land: the first field of a form, else the question itself."""
        self.armed = True

    def focus_first(self) -> None:
        fields = list(self.query(FieldInput))
        (fields[0] if fields else self).focus()

    def on_descendant_blur(self) -> None:
        self.call_after_refresh(self._maybe_disarm)

    def on_blur(self) -> None:
        self.call_after_refresh(self._maybe_disarm)

    def _maybe_disarm(self) -> None:
        focused = self.app.focused
        if focused is not self and (focused is None or self not in focused.ancestors):
            self.armed = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "url":
            return self.question.mode == "url"
        if action == "answer" and parameters == ("accept",):
            return self.question.mode == "form"
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_answer("accept")

    def action_url(self, action: str) -> None:
        self.action_answer(action, url=True)

    def action_answer(self, action: str, url: bool = False) -> None:
        q = self.question
        content: dict[str, Any] | None = None
        if action == "accept" and q.mode == "form":
            try:
                values = {i.field.name: read_value(i.field, i.value) for i in self.query(FieldInput)}
                content = validate(
                    q.fields, fill_defaults(q.fields, {k: v for k, v in values.items() if v is not None})
                )
            except FormProblem as exc:
                self._problem.update(Text(f"⚠ {exc}"))
                return
        self.post_message(self.Answered(q.id, action, content))
