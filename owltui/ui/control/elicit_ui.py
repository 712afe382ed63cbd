"""MCP servers' questions in the TUI: the session's ``ElicitBroker`` is watched; a question is drawn
as an ``ElicitPrompt`` at the end of the conversation (Ctrl+G reaches it, as it reaches approvals),
removed when answered or withdrawn by the server; an answer is the ``mcp_elicitation_answer``
command, as RPC sends it."""

from __future__ import annotations

from collections.abc import Callable

from owltui.tools.mcp.requests.broker import ElicitBroker, PendingQuestion
from owltui.ui.control.app_api import OwlAppApi
from owltui.ui.widgets.elicit_prompt import ElicitPrompt


def broker_of(app: OwlAppApi) -> ElicitBroker | None:
    source = app.runtime.mcp
    asker = source.requests.asker if source is not None else None
    return asker if isinstance(asker, ElicitBroker) else None


def watch_elicitations(app: OwlAppApi) -> list[Callable[[], None]]:
    """Subscribe to the session's questions (nothing when no MCP server can ask)."""
    broker = broker_of(app)
    if broker is None:
        return []

    def changed(action: str, pending: PendingQuestion) -> None:
        if action == "asked":
            app.call_later(_show, app, pending)
        else:
            app.call_later(_close, app, pending.question.id)

    return [broker.subscribe(changed)]


async def _show(app: OwlAppApi, pending: PendingQuestion) -> None:
    broker = broker_of(app)
    if broker is None or pending not in broker.pending():
        return  # answered before it was drawn
    prompt = ElicitPrompt(pending.question)
    await app.conversation.mount(prompt)
    prompt.scroll_visible(animate=False)
    app.refresh_bindings()
    app.notify(f"MCP server {pending.question.server} asks a question: Ctrl+G to answer")


def _close(app: OwlAppApi, qid: str) -> None:
    for prompt in app.conversation.query(ElicitPrompt):
        if prompt.question.id == qid:
            had_focus = prompt.armed
            prompt.remove()
            if had_focus:
                app.input.focus()
    app.call_after_refresh(app.refresh_bindings)


def waiting(app: OwlAppApi) -> list[ElicitPrompt]:
    """The questions on screen, oldest first."""
    return list(app.conversation.query(ElicitPrompt))


def answer(app: OwlAppApi, msg: ElicitPrompt.Answered) -> None:
    app.input.focus()
    args = {"id": msg.qid, "action": msg.action, **({"content": msg.content} if msg.content else {})}
    app.show_later(app.commands.call("mcp_elicitation_answer", **args))


def focus_question(app: OwlAppApi) -> bool:
    """Ctrl+G with no approval waiting: the oldest question (from inside one: False, the prompt)."""
    questions = waiting(app)
    focused = app.focused
    if not questions or (
        focused is not None and any(q is focused or q in focused.ancestors for q in questions)
    ):
        return False
    questions[0].arm()
    questions[0].focus_first()
    questions[0].scroll_visible(animate=False)
    return True
