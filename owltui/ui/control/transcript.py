"""The transcript and the command replies: ``show`` draws what a command answered (a notice, a
picker, a redraw when the session switched or forked, then what it finishes later),
``draw_history`` draws the welcome line and the conversation so far (folded: ``-c``, ``--resume``,
``/sessions``, ``/new``, a rewind)."""

from __future__ import annotations

from pathlib import Path

from owltui.agent.history import Compactable
from owltui.session.commands.spec import Reply
from owltui.session.describe import first_steps, model_display
from owltui.ui.boot import home_relative
from owltui.ui.control.app_api import OwlAppApi
from owltui.ui.widgets.blocks import WelcomeBlock
from owltui.ui.widgets.picker import PickerScreen, pick_options
from owltui.ui.widgets.rewind_picker import pick_rewind


def welcome(app: OwlAppApi) -> str:
    rt = app.runtime
    workspace = rt.workspace
    sid = rt.session_id
    session = f"session {sid}" if sid else "session not saved"
    line = (
        f"OwlTUI · {model_display(rt.model_label)} · {home_relative(Path(workspace))} · {session} · "
        "/help for commands and keys"
    )
    hint = first_steps(rt.model_label)
    return f"{line}\n{hint}" if hint else line


async def draw_history(app: OwlAppApi) -> bool:
    """The welcome line, then the conversation so far (a resumed session, a rewind); whether
    there was one."""
    p = app.presenter
    if p is None:
        return False
    await app.conversation.add(WelcomeBlock(welcome(app)))
    history = app.agent.history
    items = history.items()
    p.todo_from(items)
    if not items:
        return False
    await p.replay(items, history.compaction() if isinstance(history, Compactable) else None)
    app.conversation.follow()  # the end of it in view, as its answers render
    return True


def attachments_drawn(reply: Reply) -> bool:
    """A message whose mentions all attached: the attachments are drawn under it, so the reply's
    "attached …" line would show them twice (a warning about one that did not attach is shown)."""
    return reply.ok and reply.kind == "info" and bool(reply.data.get("attached"))


async def show(app: OwlAppApi, reply: Reply) -> None:
    """Show a command's reply."""
    p = app.presenter
    if p is None:
        return
    if reply.clear_view:
        await p.reset()
        await draw_history(app)
    pick = reply.pick
    if pick is None:
        if not attachments_drawn(reply):
            await p.say(reply.notice)
    elif pick.command == "rewind":  # which checkpoint, then files / conversation / both
        pick_rewind(app, pick)
    else:  # the picker shows what the text lists (the text is for front ends without one)

        def chosen(choice: str | None) -> None:
            if choice:
                app.call_later(app.run_line, f"/{pick.command} {choice}")

        app.push_screen(
            PickerScreen(pick.title, pick_options(pick), highlight=pick.highlight, note=pick.note), chosen
        )
    if reply.then is not None:
        app.finish(reply.then)
    p.redraw_status()  # a command may have changed what it shows (the model, the session)
