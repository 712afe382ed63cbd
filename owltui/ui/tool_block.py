"""A tool call in the conversation: name, argument summary, live status, streamed output, an edit's
diff, and the inline approval prompt (y allow once · a always · n deny)."""

from __future__ import annotations

import difflib
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.markup import escape
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from .text import clean, summarize_args

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


def edit_diff(args: dict[str, Any]) -> Text | None:
    """A coloured unified diff for ``edit`` (old_text -> new_text) and ``write`` (new content)."""
    old, new = args.get("old_text"), args.get("new_text")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    out = Text()
    lines = difflib.unified_diff(clean(old).splitlines(), clean(new).splitlines(), lineterm="", n=2)
    for line in list(lines)[2:]:  # drop the ---/+++ header
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else (
            "cyan" if line.startswith("@@") else "")
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


class ApprovalPrompt(Static, can_focus=True):
    """The inline question on a tool block. Keys work when it has focus; the input forwards y/a/n
    to it when the input is empty, so typing is never blocked."""

    DEFAULT_CSS = """
    ApprovalPrompt {
        background: $warning 15%;
        color: $text;
        padding: 0 1;
        margin: 0 0 0 0;
    }
    ApprovalPrompt:focus { background: $warning 30%; }
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

    def __init__(self, call_id: str, name: str) -> None:
        text = Text.assemble(("Allow ", "bold"), (name, "bold"), ("?  ", "bold"),
                             ("y", "bold reverse"), " allow once  ", ("a", "bold reverse"), " always  ",
                             ("n", "bold reverse"), " deny   (keys work while the input is empty)")
        super().__init__(text)
        self.call_id = call_id

    def action_decide(self, decision: str) -> None:
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

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
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
            content = clean(arguments["content"])
            head = "\n".join(content.splitlines()[:12])
            self._args_view.update(Text(head, style="green"))
        else:
            self._args_view.display = False
        self.has_diff = diff is not None
        super().__init__(self._args_view, self._out_view, title=self._make_title(), collapsed=False)

    def _make_title(self) -> str:
        summary = summarize_args(self.tool_name, self.arguments)
        icon = STATUS_ICONS.get(self.status, "·")
        label = "awaiting approval" if self.status == "approval" else self.status
        return escape(f"{icon} {self.tool_name}  {summary}  · {label}")

    def set_status(self, status: str) -> None:
        self.status = status
        self.title = self._make_title()
        self.set_class(status in ("error",), "-error")
        self.set_class(status == "approval", "-approval")

    def append_output(self, text: str) -> None:
        self._output = (self._output + clean(text))[-MAX_OUTPUT_CHARS:]
        self._show_output(tail=True)

    def finish(self, status: str, output: str) -> None:
        self._output = clean(output)[-MAX_OUTPUT_CHARS:]
        self._show_output(tail=status == "ok")
        self.answered()
        self.set_status(status)
        if status == "ok" and not self.has_diff:
            self.collapsed = True

    def _show_output(self, tail: bool) -> None:
        lines = self._output.rstrip("\n").splitlines()
        if tail and len(lines) > TAIL_LINES:
            shown = [f"… {len(lines) - TAIL_LINES} earlier lines", *lines[-TAIL_LINES:]]
        else:
            shown = lines
        self._out_view.update(Text("\n".join(shown)))
        self._out_view.display = bool(lines)

    def ask(self) -> ApprovalPrompt:
        if self.prompt is None:
            self.prompt = ApprovalPrompt(self.call_id, self.tool_name)
            self.query_one(Collapsible.Contents).mount(self.prompt)
        self.collapsed = False
        self.set_status("approval")
        return self.prompt

    def answered(self) -> None:
        if self.prompt is not None:
            self.prompt.remove()
            self.prompt = None
        if self.status == "approval":
            self.set_status("pending")


def find_tool_block(root: Widget, call_id: str) -> ToolBlock | None:
    for block in root.query(ToolBlock):
        if block.call_id == call_id:
            return block
    return None
