"""The keyboard actions of the TUI (the app's ``action_*`` methods delegate here): Esc, Ctrl+C,
Ctrl+D, Ctrl+G (approvals), Ctrl+R (history search), Ctrl+O (fold a tool block), F2, Ctrl+T,
scrolling, and the command palette's entries."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from textual.app import SystemCommand
from textual.widget import Widget

from owltui.session.commands.background import background
from owltui.ui.control.app_api import OwlAppApi
from owltui.ui.widgets.history_search import HistorySearchScreen
from owltui.ui.widgets.prompt_input import needs_words
from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock

QUIT_WINDOW = 2.0  # seconds between two Ctrl+C presses that quit


def busy(app: OwlAppApi) -> bool:
    """A run, a `!command` or /init is going (what Esc and Ctrl+C stop)."""
    return bool(app.agent.running) or bool(background(app.runtime).keys)


def waiting_prompts(app: OwlAppApi) -> list[ApprovalPrompt]:
    """The approval prompts on screen, oldest waiting first."""
    waiting = [p.call_id for p in app.runtime.approvals.pending()]
    prompts = {w.call_id: w for w in app.conversation.query(ApprovalPrompt)}
    return [prompts[c] for c in waiting if c in prompts]


def focus_approval(app: OwlAppApi) -> None:
    """Ctrl+G: focus the oldest waiting approval (again: the next one, then back to the input)."""
    prompts = waiting_prompts(app)
    focused = app.focused
    if isinstance(focused, ApprovalPrompt) and focused in prompts:
        later = prompts[prompts.index(focused) + 1 :]
        if not later:
            app.input.focus()
            return
        prompts = later
    if not prompts:
        from owltui.ui.control.elicit_ui import focus_question

        if not focus_question(app):
            app.input.focus()
        return
    target = prompts[0]
    target.arm()
    target.focus()
    target.scroll_visible(animate=False)


def abort(app: OwlAppApi) -> None:
    """Esc: back to the input from elsewhere, else hide the completions, else abort what runs."""
    focused = app.focused
    if focused is not None and focused is not app.input and focused.screen is app.main:
        app.input.focus()  # Esc on an approval or a block: back to the input (does not abort)
        return
    completions = app.main.completions
    if completions.display:
        completions.hide()
        return
    if app.busy():
        app.show_later(app.commands.call("abort"))


def toggle_pause(app: OwlAppApi) -> None:
    app.show_later(app.commands.call("resume" if app.runtime.gate.paused else "pause"))


async def ctrl_c(app: OwlAppApi) -> None:
    """During a run: abort it, like Esc (the queue is kept). Idle: clear the input; on an empty
    input, arm quitting (a second Ctrl+C quits)."""
    if app.busy():
        app.last_ctrl_c = 0.0
        app.show_later(app.commands.call("abort"))
        return
    if app.input.text:
        app.last_ctrl_c = 0.0
        app.input.clear()
        app.main.completions.hide()
        return
    now = time.monotonic()
    if now - app.last_ctrl_c < QUIT_WINDOW:
        await app.action_quit()
        return
    app.last_ctrl_c = now
    app.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)


async def ctrl_d(app: OwlAppApi) -> None:
    """Ctrl+D: quit on an empty input, else delete to the right."""
    if not app.input.text:
        await app.action_quit()
    else:
        app.input.action_delete_right()


def history_search(app: OwlAppApi) -> None:
    """Ctrl+R: search the input history; the entry chosen goes into the input."""
    history = app.input_history
    if history is None:
        app.notify("no input history here")
        return

    def chosen(text: str | None) -> None:
        if text is not None:
            app.input.recall(text)
        app.input.focus()

    app.push_screen(
        HistorySearchScreen(lambda query, limit: history.search(query, limit), app.input.text.strip()), chosen
    )


def toggle_tool(app: OwlAppApi) -> None:
    """Ctrl+O: expand or collapse the tool block that has the focus, else the last one."""
    blocks = list(app.conversation.query(ToolBlock))
    if not blocks:
        app.notify("no tool block to expand")
        return
    target = blocks[-1]
    node = app.focused
    while node is not None:
        if isinstance(node, ToolBlock):
            target = node
            break
        node = node.parent if isinstance(node.parent, Widget) else None
    target.collapsed = not target.collapsed
    app.call_after_refresh(target.scroll_visible, animate=False)


def scroll(app: OwlAppApi, direction: str) -> None:
    conv = app.conversation
    if direction == "up":
        conv.scroll_page_up(animate=False)
    else:
        conv.scroll_page_down(animate=False)


def palette_commands(app: OwlAppApi) -> Iterable[SystemCommand]:
    """The command palette: every slash command (those that need an argument typed fill the
    input, the others run)."""

    def run(line: str) -> Callable[[], None]:
        def go() -> None:
            app.call_later(app.run_line, line)

        return go

    def prefill(line: str) -> Callable[[], None]:
        def go() -> None:
            app.input.fill(line)
            app.input.focus()

        return go

    for cmd in app.commands.slash_list:
        if needs_words(cmd):
            yield SystemCommand(f"/{cmd.slash}", cmd.help, prefill(f"/{cmd.slash} "))
        else:
            yield SystemCommand(f"/{cmd.slash}", cmd.help, run(f"/{cmd.slash}"))
