"""Pilot tests for the queue panel, item by item (issue 14, items 2 and 6): F3 focuses it; edit in
place, delete, move between lanes and reorder while paused, and the model gets exactly the edited
queue; an edit of a message delivered meanwhile is refused with a notice; Ctrl+S steers now."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from owltui.agent.messages import UserMessage
from owltui.testing.scripted import Step
from owltui.ui.widgets.blocks import NoticeBlock
from owltui.ui.widgets.queue_panel import QueueEditor, QueuePanel
from tests.ui.conftest import SIZE, make_app, wait_for
from tests.ui.test_input import start_run, type_text

pytestmark = pytest.mark.anyio


def last_user(view: list[Any]) -> tuple[str, str]:
    """The last user message of one request (``ScriptedModel.views``: the messages as that call saw them)."""
    users = [m for m in view if isinstance(m, UserMessage)]
    return users[-1].lane, users[-1].text


async def queue(pilot: Any, text: str, key: str = "enter") -> None:
    await type_text(pilot, text)
    await pilot.press(key)


async def test_edit_delete_move_reorder_while_paused_and_the_model_gets_the_edited_queue() -> None:
    go = anyio.Event()
    app = make_app(
        [
            Step(text="working", gate=go),
            Step(text="steered"),
            Step(text="first follow-up"),
            Step(text="second follow-up"),
        ]
    )
    model: Any = app.agent.config.model
    inbox = app.runtime.inbox
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        for text in ("a1", "b1", "c1"):
            await queue(pilot, text)
        await queue(pilot, "f1", "ctrl+j")
        await wait_for(pilot, lambda: len(inbox) == 4, "four queued")
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.runtime.gate.paused, "paused")
        panel = app.query_one(QueuePanel)
        await pilot.press("f3")
        await pilot.pause()
        assert panel.has_focus and panel.selected is not None and panel.selected.text == "a1"
        assert "›" in str(panel.render())
        # edit b1 in place
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.focused, QueueEditor), "editor")
        editor = app.focused
        assert isinstance(editor, QueueEditor) and editor.value == "b1"
        await pilot.press("end", "x", "enter")
        await wait_for(pilot, lambda: inbox.texts("steer") == ["a1", "b1x", "c1"], "edited")
        assert panel.has_focus and panel.selected.text == "b1x"
        # delete it
        await pilot.press("d")
        await wait_for(pilot, lambda: inbox.texts("steer") == ["a1", "c1"], "deleted")
        assert panel.selected.text == "c1"
        # reorder: c1 before a1
        await pilot.press("K")
        await wait_for(pilot, lambda: inbox.texts("steer") == ["c1", "a1"], "reordered up")
        # move c1 to the follow-up lane (at the end), then up before f1
        await pilot.press("tab")
        await wait_for(pilot, lambda: inbox.texts("follow_up") == ["f1", "c1"], "moved lane")
        assert inbox.texts("steer") == ["a1"]
        await pilot.press("shift+up")
        await wait_for(pilot, lambda: inbox.texts("follow_up") == ["c1", "f1"], "reordered in lane")
        await pilot.press("J")
        await wait_for(pilot, lambda: inbox.texts("follow_up") == ["f1", "c1"], "reordered down")
        await pilot.press("K")
        await wait_for(pilot, lambda: inbox.texts("follow_up") == ["c1", "f1"], "and back")
        assert app.runtime.gate.paused  # all of it while paused
        await pilot.press("escape")
        assert app.input.has_focus
        await pilot.press("f2")
        go.set()
        await wait_for(
            pilot, lambda: len(model.requests) == 4 and not app.agent.running, "four requests", limit=2000
        )
        assert [last_user(v) for v in model.views[1:]] == [
            ("steer", "a1"),
            ("follow_up", "c1"),
            ("follow_up", "f1"),
        ]
        assert not any(isinstance(m, UserMessage) and m.text in ("b1", "b1x") for v in model.views for m in v)
        await wait_for(pilot, lambda: not panel.display, "queue empties")
        await app.action_quit()


async def test_editing_a_message_delivered_meanwhile_is_refused_cleanly() -> None:
    go = anyio.Event()
    app = make_app([Step(text="working", gate=go), Step(text="got the steer")])
    inbox = app.runtime.inbox
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        await queue(pilot, "use tabs")
        await wait_for(pilot, lambda: len(inbox) == 1, "queued")
        await pilot.press("f3", "enter")
        await wait_for(pilot, lambda: isinstance(app.focused, QueueEditor), "editor")
        go.set()  # the steer is delivered while the editor is open
        await wait_for(pilot, lambda: not app.agent.running and len(inbox) == 0, "delivered", limit=2000)
        await pilot.press("end", "!", "enter")
        await wait_for(
            pilot,
            lambda: any(
                "delivered or removed meanwhile" in b.text for b in app.conversation.query(NoticeBlock)
            ),
            "refusal",
        )
        assert app.input.has_focus and not app.query(QueueEditor)
        await app.action_quit()


async def test_f3_with_nothing_queued_stays_in_the_input() -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.input.has_focus
        await pilot.press("f3")
        # (the hidden panel could not take the focus anyway: the note says F3 was handled)
        await wait_for(
            pilot, lambda: any(n.message == "nothing queued" for n in app._notifications), "the note"
        )
        assert app.input.has_focus


async def test_ctrl_s_sends_steering_now() -> None:
    go = anyio.Event()
    app = make_app([Step(text="working", gate=go), Step(text="ok")])
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        await type_text(pilot, "stop that")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: len(app.runtime.inbox) == 1, "queued")
        [item] = app.runtime.inbox.items("steer")
        assert item.immediate and item.text == "stop that"
        assert app.input.text == ""
        go.set()
        await app.agent.wait_idle()
        await app.action_quit()
