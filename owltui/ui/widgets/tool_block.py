"""A tool call in the conversation: name, argument summary, live status, streamed output, an edit's
diff, and the approval (``ApprovalPrompt``: the whole call; answered by Ctrl+G, then y / a / n).

Each thing is drawn once: an edit's proposed diff is shown while it waits for approval, and once the
edit has run the diff the tool reports (the file's real lines and context) takes its place. A call
cancelled while it streamed keeps what it printed, then says it was cancelled. A finished bash call
folds with its first ``inline_lines`` lines still drawn under the title (the rest on expanding)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.markup import escape
from textual.message import Message
from textual.widgets import Collapsible, Static

from owltui.ui.approval import ApprovalView, plain_lines, rich_view, visible
from owltui.ui.call_preview import edit_diff_lines, write_head_lines
from owltui.ui.text import clean, summarize_args
from owltui.ui.widgets.conversation import ConversationView

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
INLINE_LINES = 5  # a folded bash block's first lines (config ``bash_output_lines``)
DIFF_START = "\n--- a/"  # where the edit tool's result has its unified diff


def diff_style(line: str) -> str:
    """How a line of a unified diff is coloured."""
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    return "red" if line.startswith("-") else ""


def edit_diff(args: dict[str, Any]) -> Text | None:
    """A coloured unified diff for ``edit`` (old_text -> new_text) and ``write`` (new content)."""
    lines = edit_diff_lines(args)
    if lines is None:
        return None
    out = Text()
    for line in lines:
        out.append(line + "\n", style=diff_style(line))
    out.rstrip()
    return out


def kept_after_cancel(streamed: str, final: str) -> str:
    """A cancelled call's output: what it had printed, then the result's word on the cancel (without
    the tail of the output it may repeat)."""
    if not streamed.strip():
        return final
    note, _, rest = final.partition("\n")
    rest = rest.strip("\n")
    kept = streamed.rstrip("\n")
    if rest and not kept.endswith(rest):
        note = final.strip("\n")
    return f"{kept}\n{note}" if note else kept


def first_lines(output: str, count: int) -> str:
    """The first ``count`` lines of ``output`` and how many more there are ("" for none)."""
    lines = output.rstrip("\n").splitlines()
    if count <= 0 or not lines:
        return ""
    more = len(lines) - count
    return "\n".join(lines[:count] + ([f"… {more} more line{'s' if more != 1 else ''}"] if more > 0 else []))


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
    ToolBlock > .tool-preview { display: none; padding: 0 1 0 2; color: $text; }
    ToolBlock.-collapsed.-preview > .tool-preview { display: block; }
    ToolBlock .tool-args { color: $text-muted; }
    ToolBlock .tool-output { color: $text; }
    """

    class ApprovalClosed(Message):
        """The focused approval went away (answered elsewhere, withdrawn): focus goes back to the input."""

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        collapsed: bool = False,
        inline_lines: int = INLINE_LINES,
    ) -> None:
        self._before_approval = "pending"
        self.inline_lines = inline_lines
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.status = "pending"
        self._output = ""
        self._args_view = Static(classes="tool-args")
        self._out_view = Static(classes="tool-output")
        self._out_view.display = False
        self._preview = Static(classes="tool-preview")
        self._preview_plain = ""
        self.prompt: ApprovalPrompt | None = None
        diff = edit_diff(arguments) if name in ("edit", "apply_patch") else None
        self._args_plain = ""
        self._out_plain = ""
        if diff is not None:
            self._args_plain = diff.plain
            self._args_view.update(diff)
        elif name == "write" and isinstance(arguments.get("content"), str):
            head = "\n".join(write_head_lines(arguments["content"]))
            self._args_view.update(Text(head, style="green"))
        else:
            self._args_view.display = False
        self.has_diff = diff is not None
        super().__init__(self._args_view, self._out_view, title=self._make_title(), collapsed=collapsed)

    def compose(self) -> ComposeResult:
        parts = iter(super().compose())
        yield next(parts)  # the title
        yield self._preview  # drawn while folded, when there is one
        yield from parts  # the contents

    @property
    def drawn(self) -> str:
        """What the block draws now, as plain text (tests)."""
        parts = [Text.from_markup(self.title).plain]
        if self.collapsed:
            if self._preview_plain:
                parts.append(self._preview_plain)
        else:
            if self._args_view.display:
                parts.append(self._args_plain)
            if self._out_view.display:
                parts.append(self._out_plain)
            if self.prompt is not None:
                parts.append(self.prompt.text)
        return "\n".join(parts)

    def _make_title(self) -> str:
        summary = summarize_args(self.tool_name, self.arguments)
        icon = STATUS_ICONS.get(self.status, "·")
        label = self.status
        if self.status == "approval":
            rerun = self.prompt is not None and self.prompt.view.rerun
            label = "awaiting approval to run WITHOUT the sandbox" if rerun else "awaiting approval"
        return escape(f"{icon} {visible(self.tool_name)}  {summary}  · {label}")

    def scroll_visible(self, *args: Any, **kwargs: Any) -> None:
        """Folding or unfolding scrolls the block into view (``Collapsible`` does it after each change),
        unless the conversation follows its end: that scroll would let go of the bottom (the answer
        after the block left below the view), and the end of a followed conversation is in view anyway.
        """
        parent = self.parent
        if isinstance(parent, ConversationView) and parent.following:
            return
        super().scroll_visible(*args, **kwargs)

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
        user's own ``!command``); a folded bash block keeps its first lines in view."""
        final = clean(output)
        if status == "cancelled":
            final = kept_after_cancel(self._output, final)
        self._output = final[-MAX_OUTPUT_CHARS:]
        if self.has_diff and status == "ok" and DIFF_START in self._output:
            self._args_view.display = False  # the result's own diff replaces the proposed one
        self._show_output(tail=status == "ok")
        self.answered()
        self.set_status(status)
        if collapse is None:
            collapse = status == "ok" and not self.has_diff and not self.by_user
        if self.tool_name == "bash":
            self._preview_plain = first_lines(self._output, self.inline_lines)
            self._preview.update(Text(self._preview_plain))
            self.set_class(bool(self._preview_plain), "-preview")
        if collapse:
            self.collapsed = True

    def _show_output(self, tail: bool) -> None:
        lines = self._output.rstrip("\n").splitlines()
        if tail and len(lines) > TAIL_LINES:
            shown = [f"… {len(lines) - TAIL_LINES} earlier lines", *lines[-TAIL_LINES:]]
        else:
            shown = lines
        self._out_plain = "\n".join(shown)
        self._out_view.update(self._styled(shown))
        self._out_view.display = bool(lines)

    def _styled(self, lines: list[str]) -> Text:
        """The output as drawn: an edit's diff coloured, the rest plain."""
        if self.tool_name != "edit" or DIFF_START not in self._out_plain:
            return Text("\n".join(lines))
        out, in_diff = Text(), False
        for line in lines:
            in_diff = in_diff or line.startswith(("--- a/", "@@"))
            out.append(line + "\n", style=diff_style(line) if in_diff else "")
        out.rstrip()
        return out

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
