"""How agent events reach the screen: a drawing worker of its own, so keys typed while a batch waits
on its mounts reach the input at once; a burst of events drawn a few times a second, in order and
each once; and the end of a run drawn without waiting for the next batch's turn."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from textual.widget import Widget

from owltui.agent import events as ev
from owltui.ui.control import lifecycle
from tests.ui.conftest import make_app, wait_for

pytestmark = pytest.mark.anyio


def delta(i: int) -> ev.MessageDelta:
    return ev.MessageDelta(text=f"{i} ")


def recording(app: Any, hold: anyio.Event | None = None) -> list[list[ev.Event]]:
    """Replace the presenter's ``show`` by one that records each batch (and waits on ``hold``)."""
    batches: list[list[ev.Event]] = []

    async def show(batch: list[ev.Event]) -> None:
        batches.append(list(batch))
        if hold is not None:
            await hold.wait()

    app.presenter.show = show
    return batches


async def test_keys_reach_the_input_while_a_batch_is_being_drawn() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the runtime")
        hold = anyio.Event()
        batches = recording(app, hold)
        app.life.on_event(delta(1))
        await wait_for(pilot, lambda: bool(batches), "the batch drawn")
        await pilot.press("h", "i")
        assert app.input.text == "hi"  # the batch still waits: the keys did not queue behind it
        assert not app.life.drawn
        hold.set()
        await wait_for(pilot, lambda: app.life.drawn, "the batch done")


async def test_a_burst_is_drawn_a_few_times_a_second_in_order_and_once() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the runtime")
        batches = recording(app)
        sent = [delta(i) for i in range(150)]
        start = time.monotonic()
        for event in sent:
            app.life.on_event(event)
            await anyio.sleep(0.002)
        took = time.monotonic() - start
        await wait_for(pilot, lambda: app.life.drawn, "the burst drawn")
        assert [e for b in batches for e in b] == sent
        assert batches[0] == [sent[0]]  # after a quiet moment, at once
        assert len(batches) <= took / lifecycle.FLUSH_GAP + 2  # not one draw per event


async def test_the_end_of_a_run_is_drawn_without_waiting_for_the_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "FLUSH_GAP", 3600.0)
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the runtime")
        batches = recording(app)
        app.life.on_event(delta(1))
        await wait_for(pilot, lambda: app.life.drawn, "the first event drawn")
        app.life.on_event(delta(2))  # within the gap: waits for the next batch
        for _ in range(3):
            await pilot.pause()
        assert len(batches) == 1 and not app.life.drawn
        end = ev.AgentEnd(reason="done")
        app.life.on_event(end)
        await wait_for(pilot, lambda: app.life.drawn, "the end drawn")
        assert batches[1] == [delta(2), end]


async def test_typing_lays_nothing_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A keystroke redraws the input, not the screen's layout (whose cost grows with the blocks
    kept): the input and the hidden completion list ask for no layout on each key."""
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the runtime")
        await pilot.pause()
        asked: list[str] = []
        original = Widget.refresh

        def refresh(self: Widget, *args: Any, layout: bool = False, **kwargs: Any) -> Widget:
            if layout and (self is app.input or self is app.input.completions):
                asked.append(type(self).__name__)
            return original(self, *args, layout=layout, **kwargs)

        monkeypatch.setattr(Widget, "refresh", refresh)
        for ch in "hello":
            await pilot.press(ch)
            await pilot.pause()
        assert app.input.text == "hello"
        assert not asked
