"""Input routing: what the input sends becomes an approval answer (``/allow``, ``/always``,
``/deny``), a slash command, a prompt, steering or a follow-up; the line is kept in the input
history. Also Alt+Up (take the last queued message back into the editor)."""

from __future__ import annotations

import logging

from owltui.session.commands import Reply, literal
from owltui.session.shell import unescape

from .app_api import OwlAppApi
from .approval import choose, parse_answer
from .prompt_input import PromptInput


async def on_send(app: OwlAppApi, msg: PromptInput.Send) -> None:
    answer = parse_answer(msg.text)
    if answer is not None:  # /allow, /always, /deny: typed in full, a deliberate answer
        await app.show(answer_approval(app, *answer))
        return
    remember(app, msg.text)
    reply = app.commands.slash(msg.text)
    if reply is None:
        text = literal(msg.text)
        follow_up = msg.lane == "follow_up"
        reply = app.commands.send(text, "follow_up" if follow_up else "prompt")
        # a prompt that started a run is shown now (a paused gate parks the run before delivery);
        # queued messages are shown when delivered, a `!command` as its bash block
        started = reply.ok and "queued" not in reply.data and "call_id" not in reply.data
        if not follow_up and started and app.presenter is not None:
            await app.presenter.echo(unescape(text))
    await app.show(reply)


def remember(app: OwlAppApi, text: str) -> None:
    """Add a sent line to the input history (never in the way of sending)."""
    history = app.input_history
    if history is not None:
        try:
            history.add(text)
        except Exception as exc:  # a convenience: never in the way of sending
            logging.getLogger(__name__).debug("input history: %s", exc)


def answer_approval(app: OwlAppApi, decision: str, call_id: str | None = None) -> Reply:
    """Answer the oldest waiting approval (or ``call_id``'s)."""
    pending = choose(app.runtime.approvals.pending(), call_id)
    if pending is None:
        which = f" {call_id!r}" if call_id else ""
        return Reply(f"no approval{which} is waiting", "warning", ok=False)
    if pending.rerun and decision == "always":
        return Reply("a re-run outside the sandbox is allowed once or not at all: /allow or /deny",
                     "warning", ok=False)
    return app.commands.call("approve", call_id=pending.call_id, decision=decision)


def pop_queue(app: OwlAppApi) -> None:
    """Alt+Up: the last queued message back into the editor."""
    entry = app.runtime.inbox.pop_last()
    if entry is None:
        app.notify("nothing queued")
        return
    app.input.put_back(entry.text)
