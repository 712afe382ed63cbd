"""Input routing: what the input sends becomes an approval answer (``/allow``, ``/always``,
``/deny``), a slash command, a prompt, steering or a follow-up; the line is kept in the input
history. Also Alt+Up (take the last queued message back into the editor)."""

from __future__ import annotations

import logging

from owltui.session.commands.spec import Reply, literal
from owltui.session.input.shell import unescape
from owltui.ui.approval import answer_approval, parse_answer
from owltui.ui.control.app_api import OwlAppApi
from owltui.ui.widgets.prompt_input import PromptInput


async def on_send(app: OwlAppApi, msg: PromptInput.Send) -> None:
    answer = parse_answer(msg.text)
    if answer is not None:  # /allow, /always, /deny: typed in full, a deliberate answer
        await app.show(answer_approval(app.commands, app.runtime.approvals.pending(), *answer))
        return
    remember(app, msg.text)
    reply = app.commands.slash(msg.text)
    if reply is None:
        text = literal(msg.text)
        follow_up = msg.lane == "follow_up"
        reply = app.commands.send(text, "follow_up" if follow_up else "prompt")
        if not follow_up:
            await echo_started(app, reply, text)
    await app.show(reply)


async def echo_started(app: OwlAppApi, reply: Reply, text: str) -> None:
    """A message sent as ``text`` that started a run is drawn now (a paused gate parks the run
    before delivery); queued messages are drawn when delivered, a `!command` as its bash block."""
    started = reply.ok and "queued" not in reply.data and "call_id" not in reply.data
    if started and app.presenter is not None:
        await app.presenter.echo(unescape(text))


def remember(app: OwlAppApi, text: str) -> None:
    """Add a sent line to the input history (never in the way of sending)."""
    history = app.input_history
    if history is not None:
        try:
            history.add(text)
        except Exception as exc:  # a convenience: never in the way of sending
            logging.getLogger(__name__).debug("input history: %s", exc)


def pop_queue(app: OwlAppApi) -> None:
    """Alt+Up: the last queued message back into the editor."""
    entry = app.runtime.inbox.pop_last()
    if entry is None:
        app.notify("nothing queued")
        return
    app.input.put_back(entry.text)
