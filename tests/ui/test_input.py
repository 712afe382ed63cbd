"""Pilot tests: typing while the agent works — Enter steers, Alt+Enter / Ctrl+J follow up, Alt+Up takes
back, Esc aborts (queue kept), Ctrl+C clears / quits twice, Ctrl+D quits on an empty input."""

from __future__ import annotations

import anyio
import pytest

from owltui.agent.messages import UserMessage
from owltui.testing.scripted import Step
from owltui.ui.widgets.blocks import AssistantBlock, InputBlock, NoticeBlock
from owltui.ui.widgets.queue_panel import QueuePanel
from tests.ui.conftest import SIZE, make_app, wait_for

pytestmark = pytest.mark.anyio


def lanes(app) -> list[tuple[str, str]]:
    return [(b.lane, b.text) for b in app.conversation.query(InputBlock)]


def delivered(model, lane: str) -> list[str]:
    """Messages of ``lane`` the model saw on its last call (requests share the history's list)."""
    last = model.requests[-1].messages
    return [m.text for m in last if isinstance(m, UserMessage) and m.lane == lane]


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space"}.get(c, c) for c in text])


async def start_run(pilot, app, text: str = "go") -> None:
    """Send ``text`` once the app is ready and wait until the run it starts is going."""
    await wait_for(pilot, lambda: app.ready)
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.agent.running)


async def abort_with_a_follow_up_queued(pilot, app, key: str = "escape", draft: str = "") -> None:
    """Start a run, queue the follow-up "later" (Ctrl+J), type ``draft`` (if any), abort the run with
    ``key`` and wait until it has stopped."""
    await start_run(pilot, app)
    await type_text(pilot, "later")
    await pilot.press("ctrl+j")
    if draft:
        await type_text(pilot, draft)
    await pilot.press(key)
    await wait_for(pilot, lambda: not app.agent.running, "abort")


async def test_enter_while_running_steers_and_reaches_model() -> None:
    mid = anyio.Event()
    app = make_app([Step(text="first part second part", chunk=5, mid_gate=mid), Step(text="ok, steered")])
    model = app.agent.config.model
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(AssistantBlock)), "stream start")
        assert app.input.has_focus
        await type_text(pilot, "use tabs")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.inbox.texts("steer") == ["use tabs"], "queued steer")
        panel = app.query_one(QueuePanel)
        assert panel.display and ("steer", "use tabs") in panel.items
        assert "queue 1 steer" in str(app.status.render())
        mid.set()
        await wait_for(pilot, lambda: ("steer", "use tabs") in lanes(app), "steer delivered")
        await app.agent.wait_idle()
        assert delivered(model, "steer") == ["use tabs"]
        await wait_for(pilot, lambda: not panel.display, "queue empties")
        await app.action_quit()


@pytest.mark.parametrize("key", ["alt+enter", "ctrl+j"])
async def test_follow_up_keys(key: str) -> None:
    mid = anyio.Event()
    app = make_app([Step(text="working on it", chunk=4, mid_gate=mid), Step(text="and the follow-up")])
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        await type_text(pilot, "then tests")
        await pilot.press(key)
        await wait_for(pilot, lambda: app.runtime.inbox.texts("follow_up") == ["then tests"])
        assert ("follow-up", "then tests") in app.query_one(QueuePanel).items
        assert app.input.text == ""
        mid.set()
        await wait_for(pilot, lambda: ("follow_up", "then tests") in lanes(app), "follow-up delivered")
        await app.action_quit()


async def test_alt_up_pops_last_queued_into_editor() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="x", gate=gate)])
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        await type_text(pilot, "one")
        await pilot.press("enter")
        await type_text(pilot, "two")
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: len(app.runtime.inbox) == 2)
        await pilot.press("alt+up")
        await wait_for(pilot, lambda: app.input.text == "two")
        assert app.runtime.inbox.texts("follow_up") == []
        assert app.runtime.inbox.texts("steer") == ["one"]
        gate.set()
        await app.action_quit()


async def test_escape_aborts_and_keeps_queue() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="never", gate=gate)])
    async with app.run_test(size=SIZE) as pilot:
        await abort_with_a_follow_up_queued(pilot, app)
        await wait_for(pilot, lambda: any("aborted" in b.text for b in app.conversation.query(NoticeBlock)))
        notes = [b.text for b in app.conversation.query(NoticeBlock)]
        assert "aborted; 1 queued message kept" in notes
        assert app.runtime.inbox.texts("follow_up") == ["later"]
        assert app.query_one(QueuePanel).display
        await app.action_quit()


async def test_ctrl_c_clears_then_quits() -> None:
    """Idle: Ctrl+C clears the input; on the empty input it arms quitting, and a second one quits."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.input.text == ""
        await pilot.press("ctrl+c")  # arms
        await pilot.pause()
        assert app.is_running and app.return_code is None
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, "quit")
    assert app.return_code == 0


async def test_ctrl_c_during_a_run_aborts_it_and_keeps_the_queue() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="never", gate=gate)])
    async with app.run_test(size=SIZE) as pilot:
        await abort_with_a_follow_up_queued(pilot, app, "ctrl+c", draft="draft")
        await wait_for(
            pilot,
            lambda: "aborted; 1 queued message kept" in [b.text for b in app.conversation.query(NoticeBlock)],
            "the abort notice",
        )
        assert app.runtime.inbox.texts("follow_up") == ["later"]
        assert app.input.text == "draft" and app.is_running  # the draft stays, nothing armed
        await pilot.press("ctrl+c")  # idle now: clears the draft
        assert app.input.text == "" and app.return_code is None
        await app.action_quit()


async def test_ctrl_d_quits_only_when_empty() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "ab")
        await pilot.press("home", "ctrl+d")
        assert app.input.text == "b"
        await pilot.press("ctrl+d")  # deletes the b
        assert app.input.text == ""
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: app.return_code is not None, "quit")
    assert app.return_code == 0


async def test_newline_keys_and_backslash_enter() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "a")
        await pilot.press("ctrl+n")
        await type_text(pilot, "b\\")
        await pilot.press("enter")
        await type_text(pilot, "c")
        assert app.input.text == "a\nb\nc"
        await app.action_quit()


async def test_streamed_text_is_sanitized_and_view_follows_bottom() -> None:
    body = "\n\n".join(f"Paragraph {i} \x1b]0;evil title\x07with \x1b[31mred\x1b[0m text." for i in range(40))
    app = make_app([Step(text=body, chunk=7)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "long")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(b.done for b in app.conversation.query(AssistantBlock)), "done")
        block = app.conversation.query_one(AssistantBlock)
        assert "\x1b" not in block.text and "evil" not in block.text
        assert "Paragraph 39 with red text." in block.text
        conv = app.conversation
        await pilot.pause()
        assert conv.scroll_y == conv.max_scroll_y > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert conv.scroll_y < conv.max_scroll_y and not conv.following
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert conv.following
        await app.action_quit()


async def test_text_and_enter_arriving_in_one_burst_are_sent_together() -> None:
    """A terminal may deliver "text\\r" in one read (fast typing, paste-like input, tmux send-keys):
    Enter must see every character typed before it."""
    from textual import events

    app = make_app([Step(text="answer")])
    model = app.agent.config.model
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        driver = app._driver
        assert driver is not None
        for ch in "read it":
            key = events.Key("space" if ch == " " else ch, ch)
            key.set_sender(app)
            driver.send_message(key)
        enter = events.Key("enter", "\r")
        enter.set_sender(app)
        driver.send_message(enter)
        await wait_for(pilot, lambda: model.calls == 1, "the prompt to reach the model")
        assert model.views[0][-1].text == "read it"
        assert app.input.text == ""


async def test_long_answer_is_segmented_and_frozen() -> None:
    body = "\n\n".join(f"Paragraph {i}: " + "word " * 30 for i in range(40))
    app = make_app([Step(text=body, chunk=50)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "long")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(b.done for b in app.conversation.query(AssistantBlock)), "done")
        block = app.conversation.query_one(AssistantBlock)
        assert len(block.segments) > 2
        assert len(block.query(".segment")) == len(block.segments)
        assert not block.query(".tail")  # the unfinished paragraph went to Markdown at the end
        assert block.shown == body == block.text
        await app.action_quit()
