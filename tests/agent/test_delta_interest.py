"""Listeners say whether they read message_delta events; when none does, the loop builds none."""

from __future__ import annotations

import anyio

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.events import Emitter, Event, MessageDelta, MessageEnd
from owltui.agent.history import MemoryHistory
from owltui.agent.pause import PauseGate
from owltui.testing.scripted import ScriptedModel, Step


def test_emitter_knows_whether_anyone_wants_deltas() -> None:
    em = Emitter()
    assert not em.wants_deltas
    stop_counter = em.subscribe(lambda e: None, deltas=False)
    assert not em.wants_deltas

    class Drawer:
        wants_deltas = True

        def __call__(self, e: Event) -> None:
            pass

    class Quiet(Drawer):
        wants_deltas = False

    em.subscribe(Quiet())
    assert not em.wants_deltas
    stop_drawer = em.subscribe(Drawer())
    assert em.wants_deltas
    stop_plain = em.subscribe(lambda e: None)  # says nothing: gets deltas
    stop_drawer()
    assert em.wants_deltas
    stop_plain()
    assert not em.wants_deltas
    stop_counter()
    stop_plain()  # twice: harmless
    assert not em.wants_deltas


def run_with(deltas: bool) -> list[Event]:
    model = ScriptedModel([Step(text="one two three four")])
    agent = Agent(LoopConfig(model=model, tools=[]), MemoryHistory(), gate=PauseGate())
    seen: list[Event] = []
    agent.emitter.subscribe(seen.append, deltas=deltas)
    out = anyio.run(agent.run, "go")
    assert out.reason == "done"
    return seen


def test_no_delta_events_when_nobody_draws_them_and_the_text_is_whole() -> None:
    quiet = run_with(False)
    assert not [e for e in quiet if isinstance(e, MessageDelta)]
    drawn = run_with(True)
    deltas = [e for e in drawn if isinstance(e, MessageDelta)]
    assert deltas
    ends = [e for e in quiet if isinstance(e, MessageEnd)]
    assert ends[-1].text == "one two three four"
    assert "".join(d.text or "" for d in deltas) == [e for e in drawn if isinstance(e, MessageEnd)][-1].text
    assert [e.type for e in quiet] == [e.type for e in drawn if e.type != "message_delta"]
