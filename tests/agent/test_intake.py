"""The intake's contract: what waits for the next delivery point, what a round takes from the
inbox after its park, rescue on abort; and the round count the loop restarts in one place."""

from __future__ import annotations

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.hooks import Hooks
from owltui.agent.inbox import Inbox
from owltui.agent.intake import Intake
from owltui.agent.messages import Item, UserMessage
from owltui.agent.state import RunState
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Echo, make_agent


def intake(all_follow_ups: bool = False) -> tuple[Intake, Inbox, CancelToken]:
    inbox, cancel = Inbox(), CancelToken()
    return Intake(inbox, cancel, all_follow_ups=all_follow_ups), inbox, cancel


def texts(items: tuple[Item, ...] | list[Item]) -> list[str]:
    return [m.text for m in items if isinstance(m, UserMessage)]


def test_posted_input_waits_in_order_and_readers_get_a_copy() -> None:
    box, _, _ = intake()
    box.post(UserMessage(text="a", lane="notice", source="system"))
    box.post(UserMessage(text="b", lane="reminder", source="system"), UserMessage(text="c", lane="notice"))
    seen = box.items
    box.post(UserMessage(text="d", lane="notice"))
    assert texts(seen) == ["a", "b", "c"] and texts(box.items) == ["a", "b", "c", "d"]
    assert texts(box.drain()) == ["a", "b", "c", "d"] and box.items == () and not box.waiting()


def test_start_with_the_gate_open_takes_the_steering_now() -> None:
    box, inbox, _ = intake()
    inbox.push("steer", "s")
    inbox.push("follow_up", "f")
    assert box.start([UserMessage(text="go")], wake=False, gate_closed=False)
    assert texts(box.items) == ["go", "s"] and inbox.texts("follow_up") == ["f"]
    assert not box.take_due()  # nothing left due


def test_start_with_the_gate_closed_leaves_the_queue_editable_until_the_park_is_over() -> None:
    box, inbox, _ = intake()
    q = inbox.push("steer", "first")
    assert box.start([], wake=True, gate_closed=True)
    assert box.items == () and box.waiting()
    inbox.edit(q.id, "edited")
    assert box.take_due() and texts(box.items) == ["edited"]


def test_a_closed_gate_and_nothing_queued_is_nothing_to_do() -> None:
    box, inbox, _ = intake()
    inbox.push("follow_up", "f")  # not steering: a run that was not woken does not take it
    assert not box.start([], wake=False, gate_closed=True)


def test_after_a_batch_steering_and_asides_are_due_not_follow_ups() -> None:
    box, inbox, _ = intake()
    for lane in ("follow_up", "aside", "steer"):
        inbox.push(lane, lane)
    box.after_batch()
    assert box.waiting() and box.take_due()
    assert texts(box.items) == ["steer", "aside"] and inbox.texts("follow_up") == ["follow_up"]


def test_the_stop_takes_a_follow_up_only_without_steering_one_or_all() -> None:
    box, inbox, _ = intake()
    inbox.push("steer", "s")
    inbox.push("follow_up", "f1")
    box.take_stop()
    assert texts(box.drain()) == ["s"]
    inbox.push("follow_up", "f2")
    box.take_stop()
    assert texts(box.drain()) == ["f1"] and inbox.texts("follow_up") == ["f2"]
    every, inbox, _ = intake(all_follow_ups=True)
    inbox.push("follow_up", "f1")
    inbox.push("follow_up", "f2")
    every.take_stop()
    assert texts(every.items) == ["f1", "f2"]


def test_nothing_is_taken_once_the_run_was_aborted() -> None:
    box, inbox, cancel = intake()
    inbox.push("steer", "s")
    cancel.cancel()
    box.after_batch()
    box.take_due()
    box.take_stop()
    assert box.items == () and inbox.texts("steer") == ["s"]


def test_rescue_delivers_the_prompt_and_gives_taken_input_back_with_its_ids() -> None:
    box, inbox, _ = intake()
    q = inbox.push("steer", "s")
    box.start([UserMessage(text="go")], wake=False, gate_closed=False)
    box.post(UserMessage(text="reminder", lane="reminder", source="system"))
    delivered: list[Item] = []
    box.rescue(delivered.extend)
    assert texts(delivered) == ["go"] and box.items == ()
    assert [v["id"] for v in inbox.snapshot()["steer"]] == [q.id]


def test_turn_prompt_and_opens_turn() -> None:
    box, _, _ = intake()
    box.post(UserMessage(text="n", lane="notice", source="system"))
    assert box.turn_prompt() is None and not box.opens_turn()
    box.post(UserMessage(text="f", lane="follow_up", source="playbook"))
    prompt = box.turn_prompt()
    assert prompt is not None and prompt.text == "f" and box.opens_turn()


@pytest.mark.anyio
async def test_the_round_count_restarts_when_a_follow_up_opens_a_turn() -> None:
    seen: list[tuple[str, int, int]] = []

    async def round_start(state: RunState) -> None:
        seen.append(("round_start", state.round, state.total_rounds))

    async def before_model(state: RunState) -> None:
        seen.append(("before_model", state.round, state.total_rounds))

    async def before_yield(state: RunState) -> None:
        if state.total_rounds == 2:
            agent.follow_up("again", source="playbook")  # not the user's own words: a turn all the same

    agent, _, _ = make_agent(
        [Step(calls=[Call("echo", {"text": "x"})]), Step(text="a"), Step(text="b")],
        [Echo()],
        hooks=Hooks(round_start=round_start, before_model=before_model, before_yield=before_yield),
    )
    out = await agent.run("go")
    assert out.text == "b"
    assert seen == [
        ("round_start", 1, 1),
        ("before_model", 1, 1),
        ("round_start", 2, 2),
        ("before_model", 2, 2),
        ("round_start", 1, 3),  # the new turn's first round, from the start of the round
        ("before_model", 1, 3),
    ]
