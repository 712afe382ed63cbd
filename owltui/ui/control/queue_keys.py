"""Two keys of the queue, bound on the main screen:

- ``QUEUE_KEY`` (F3): focus the queue panel (Up/Down, Enter edit, d delete, Tab lane, K/J
  reorder, Esc back: see ``queue_panel``); "nothing queued" when it is empty.
- ``STEER_NOW_KEY`` (Ctrl+S): send the input's text as "immediate" steering — it skips the calls
  of the running batch not yet started, for this message only (``Commands.send(text,
  "immediate")``); idle, it starts a run like Enter.
"""

from __future__ import annotations

from typing import Any

from owltui.session.commands.spec import literal
from owltui.ui.control.input_routing import echo_started, remember
from owltui.ui.widgets.queue_panel import FOCUS_KEY

QUEUE_KEY = FOCUS_KEY
STEER_NOW_KEY = "ctrl+s"


def focus_queue(app: Any) -> None:
    panel = app.main.queue_panel  # (``app.query_one`` searches Textual's default screen, the first frame's)
    if not panel.entries:
        app.notify("nothing queued")
        return
    panel.focus()


async def steer_now(app: Any) -> None:
    text = app.input.text
    if not text.strip():
        app.notify("type a message first: Ctrl+S sends it as steering now")
        return
    remember(app, text)
    sent = literal(text)
    reply = app.commands.send(sent, "immediate")
    if reply.ok:
        app.input.clear()
    await echo_started(app, reply, sent)
    await app.show(reply)
