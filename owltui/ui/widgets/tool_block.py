"""A tool call in the conversation: name, argument summary, live status, streamed output, an edit's
diff, and the approval (``ApprovalPrompt``: the whole call; answered by Ctrl+G, then y / a / n)."""

from __future__ import annotations

import difflib
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.markup import escape
from textual.message import Message
from textual.widgets import Collapsible, Static

from owltui.ui.approval import ApprovalView, plain_lines, rich_view, visible
from owltui.ui.text import clean, summarize_args

STATUS_ICONS = {
    "pending": "·",
    "approval": "?",
    "running": "…",
    "ok": "✓",
    "error": "✗",
    "refused": "⊘",
    "skipped": "↷",
    "cancelled": "■",
}
MAX_OUTPUT_CHARS = 20_000
TAIL_LINES = 30


def shown(text: str) -> str:
    """File text as an approval shows it: newlines and tabs kept, other hidden characters escaped."""
    return visible(text, keep="\n\t")


def edit_diff(args: dict[str, Any]) -> Text | None:
    """A coloured unified diff for ``edit`` (old_text -> new_text) and ``write`` (new content)."""
    old, new = args.get("old_text"), args.get("new_text")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    out = Text()
    lines = difflib.unified_diff(shown(old).split("\n"), shown(new).split("\n"), lineterm="", n=2)
    for line in list(lines)[2:]:  # drop the ---/+++ header
        style = (
            "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else ("cyan" if line.startswith("@@") else "")
        )
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


class ApprovalPrompt(Static):
    """The approval on a tool block: the whole call (``approval.build_view``), why it asks, what
    "always" saves, and how to answer. It never takes a key typed into the input: Ctrl+G (the app)
    arms and focuses it, then y / a / n answer (a re-run outside the sandbox: y / n only) and Esc
    goes back to the input. A click focuses it too. Once it loses focus it is out of reach of Tab."""

    DEFAULT_CSS = """
    ApprovalPrompt {
        background: $warning 15%;
        color: $text;
        padding: 0 1;
        margin: 0 0 0 0;
        height: auto;
    }
    ApprovalPrompt:focus { background: $warning 30%; }
    ApprovalPrompt.-rerun {
        background: $error 25%;
        border-left: thick $error;
    }
    ApprovalPrompt.-rerun:focus { background: $error 40%; }
    """

    BINDINGS = [
        Binding("y", "decide('allow')", "Allow once"),
        Binding("a", "decide('always')", "Always"),
        Binding("n", "decide('deny')", "Deny"),
    ]

    class Decided(Message):
        def __init__(self, call_id: str, decision: str) -> None:
            super().__init__()
            self.call_id = call_id
            self.decision = decision

    def __init__(self, view: ApprovalView) -> None:
        self.view = view
        self.call_id = view.call_id
        self._armed = False
        super().__init__(rich_view(view), classes="-rerun" if view.rerun else "")

    @property
    def text(self) -> str:
        """Everything it shows, as plain text (tests, the clipboard)."""
        return "\n".join(plain_lines(self.view))

    def allow_focus(self) -> bool:
        return self._armed

    def arm(self) -> None:
        """Let the next ``focus()`` land (Ctrl+G or a click): typing alone never reaches here."""
        self._armed = True

    def on_focus(self) -> None:
        self.update(rich_view(self.view, focused=True))

    def on_blur(self) -> None:
        self._armed = False
        self.update(rich_view(self.view))

    def on_click(self) -> None:
        self.arm()
        self.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide" and parameters and parameters[0] not in self.view.decisions:
            return False
        return True

    def action_decide(self, decision: str) -> None:
        if self.has_focus and decision in self.view.decisions:
            self.post_message(self.Decided(self.call_id, decision))


class ToolBlock(Collapsible):
    """One tool call. ``set_status`` / ``append_output`` / ``ask`` / ``answered`` drive it."""

    DEFAULT_CSS = """
    ToolBlock {
        margin: 1 0 0 0;
        padding: 0;
        border: none;
        border-left: wide $accent;
        background: $surface;
    }
    ToolBlock.-error { border-left: wide $error; }
    ToolBlock.-approval { border-left: wide $warning; }
    ToolBlock > Contents { padding: 0 1 0 2; }
    ToolBlock .tool-args { color: $text-muted; }
    ToolBlock .tool-output { color: $text; }
    """

    class ApprovalClosed(Message):
        """The focused approval went away (answered elsewhere, withdrawn): focus goes back to the input."""

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any], collapsed: bool = False) -> None:
        self._before_approval = "pending"
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.status = "pending"
        self._output = ""
        self._args_view = Static(classes="tool-args")
        self._out_view = Static(classes="tool-output")
        self._out_view.display = False
        self.prompt: ApprovalPrompt | None = None
        diff = edit_diff(arguments) if name in ("edit",) else None
        if diff is not None:
            self._args_view.update(diff)
        elif name == "write" and isinstance(arguments.get("content"), str):
            content = shown(arguments["content"])
            head = "\n".join(content.split("\n")[:12])
            self._args_view.update(Text(head, style="green"))
        else:
            self._args_view.display = False
        self.has_diff = diff is not None
        super().__init__(self._args_view, self._out_view, title=self._make_title(), collapsed=collapsed)

    def _make_title(self) -> str:
        summary = summarize_args(self.tool_name, self.arguments)
        icon = STATUS_ICONS.get(self.status, "·")
        label = self.status
        if self.status == "approval":
            rerun = self.prompt is not None and self.prompt.view.rerun
            label = "awaiting approval to run WITHOUT the sandbox" if rerun else "awaiting approval"
        return escape(f"{icon} {visible(self.tool_name)}  {summary}  · {label}")

    def set_status(self, status: str) -> None:
        self.status = status
        self.title = self._make_title()
        self.set_class(status in ("error",), "-error")
        self.set_class(status == "approval", "-approval")

    def append_output(self, text: str) -> None:
        self._output = (self._output + clean(text))[-MAX_OUTPUT_CHARS:]
        self._show_output(tail=True)

    @property
    def by_user(self) -> bool:
        """A ``!command`` the user ran (its output stays open: the user asked to see it)."""
        return self.call_id.startswith("shell-")

    def finish(self, status: str, output: str, collapse: bool | None = None) -> None:
        """The call ended. ``collapse``: fold it (default: a successful call without a diff, not the
        user's own ``!command``)."""
        self._output = clean(output)[-MAX_OUTPUT_CHARS:]
        self._show_output(tail=status == "ok")
        self.answered()
        self.set_status(status)
        if collapse is None:
            collapse = status == "ok" and not self.has_diff and not self.by_user
        if collapse:
            self.collapsed = True

    def _show_output(self, tail: bool) -> None:
        lines = self._output.rstrip("\n").splitlines()
        if tail and len(lines) > TAIL_LINES:
            shown = [f"… {len(lines) - TAIL_LINES} earlier lines", *lines[-TAIL_LINES:]]
        else:
            shown = lines
        self._out_view.update(Text("\n".join(shown)))
        self._out_view.display = bool(lines)

    def ask(self, view: ApprovalView) -> ApprovalPrompt:
        if self.prompt is None:
            self.prompt = ApprovalPrompt(view)
            self.query_one(Collapsible.Contents).mount(self.prompt)
            self._before_approval = self.status
        self.collapsed = False
        self.set_status("approval")
        return self.prompt

    def answered(self) -> None:
        if self.prompt is not None:
            if self.prompt.has_focus:
                self.post_message(self.ApprovalClosed())
            self.prompt.remove()
            self.prompt = None
        if self.status == "approval":
            self.set_status(self._before_approval)
