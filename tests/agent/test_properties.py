"""Property test: random interleavings of user input, pause, abort, tool outcomes and model errors.

Every model stream and every tool run waits on an event the test releases ("advance"), so the
interleaving is chosen by hypothesis, not by timing. Queued messages are also edited, removed and
moved by id (between steer and follow-up, reordered) at any point. Invariants checked after each
program: one result per call, nothing between an assistant's calls and their results, every queued
message (as last edited) delivered exactly once or still queued, a removed one never, a change to a
message no longer queued refused with ``NotQueued``, every run terminates, and the event order is
valid (every ``turn_start`` with its ``turn_end``).
"""

from __future__ import annotations

from typing import ClassVar

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.events import Event
from owltui.agent.inbox import NotQueued, QueueError
from owltui.agent.messages import UserMessage
from owltui.agent.model import ModelRequest
from owltui.agent.pause import PauseGate
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.agent.helpers import TextArgs, check_history

BEHAVIOURS = ["text", "tool_ok", "tool_fail", "two_tools", "error", "bad_args", "ro_pair"]
OPS = [
    "prompt",
    "steer",
    "aside",
    "follow_up",
    "pause",
    "resume",
    "abort",
    "abort_clear",
    "advance",
    "advance",
    "advance",
    "advance",
    "edit",
    "remove",
    "move",
    "steer_now",
]


class World:
    def __init__(self) -> None:
        self.waiting: list[anyio.Event] = []

    def gate(self) -> anyio.Event:
        ev = anyio.Event()
        self.waiting.append(ev)
        return ev

    def advance(self) -> None:
        while self.waiting:
            ev = self.waiting.pop(0)
            if not ev.is_set():
                ev.set()
                return


class WaitTool:
    name: ClassVar[str] = "work"
    description: ClassVar[str] = "Waits, then succeeds or fails."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = False

    def __init__(self, world: World) -> None:
        self.world = world

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        await self.world.gate().wait()
        if args.text == "fail":
            raise ToolError("it failed")
        return ToolOutput(f"did {args.text}")


class ReadTool(WaitTool):
    name: ClassVar[str] = "look"
    read_only: ClassVar[bool] = True


def make_script(world: World, behaviours: list[str]):
    counter = [0]

    def script(req: ModelRequest) -> Step:
        b = behaviours[counter[0] % len(behaviours)]
        counter[0] += 1
        g = world.gate()
        if req.tool_choice == "none" or b == "text":
            return Step(text="answer", gate=g)
        if b == "tool_ok":
            return Step(text="working", calls=[Call("work", {"text": "ok"})], gate=g)
        if b == "tool_fail":
            return Step(calls=[Call("work", {"text": "fail"})], gate=g)
        if b == "two_tools":
            return Step(calls=[Call("work", {"text": "a"}), Call("work", {"text": "b"})], gate=g)
        if b == "ro_pair":
            return Step(calls=[Call("look", {"text": "a"}), Call("look", {"text": "b"})], gate=g)
        if b == "bad_args":
            return Step(calls=[Call("work", '{"text": ')], gate=g)
        return Step(text="partial", calls=[Call("work", {"text": "x"})], error="stream cut", gate=g)

    return script


def check_events(events: list[Event]) -> None:
    in_run = False
    open_tools: set[str] = set()
    in_message = False
    in_turn = False
    for ev in events:
        t = ev.type
        if t == "agent_start":
            assert not in_run, "nested agent_start"
            in_run = True
            continue
        if t == "turn_start":
            assert in_run and not in_turn, "turn_start inside a turn"
            in_turn = True
        elif t == "turn_end":
            assert in_turn, "turn_end without turn_start"
            in_turn = False
        if t in ("paused", "resumed"):
            continue
        assert in_run, f"{t} outside a run"
        if t == "message_start":
            assert not in_message
            in_message = True
        elif t == "message_delta":
            assert in_message
        elif t == "message_end":
            assert in_message
            in_message = False
        elif t == "tool_start":
            assert not in_message
            open_tools.add(ev.call_id)  # type: ignore[attr-defined]
        elif t == "tool_end":
            open_tools.discard(ev.call_id)  # type: ignore[attr-defined]
        elif t == "agent_end":
            assert not open_tools, f"tools never ended: {open_tools}"
            assert not in_message
            assert not in_turn, "agent_end with a turn left open"
            in_run = False
    assert not in_run, "a run never ended"


async def run_program(ops: list[tuple[str, int]], behaviours: list[str]) -> None:
    world = World()
    gate = PauseGate()
    model = ScriptedModel(make_script(world, behaviours), record=False)
    agent = Agent(LoopConfig(model=model, tools=[WaitTool(world), ReadTool(world)], max_rounds=5), gate=gate)
    events: list[Event] = []
    agent.emitter.subscribe(events.append)
    sent: list[str] = []
    removed: list[str] = []
    ids: list[str] = []  # every id queued, delivered or not (changes pick among them)
    async with anyio.create_task_group() as tg:
        agent.bind(tg)
        for n, (op, arg) in enumerate(ops):
            text = f"{op}-{n}-{arg}"
            if op == "prompt":
                if agent.prompt(text):
                    sent.append(text)
            elif op in ("steer", "aside", "follow_up"):
                ids.append(getattr(agent, op)(text).id)
                sent.append(text)
            elif op == "steer_now":
                ids.append(agent.steer(text, immediate=True).id)
                sent.append(text)
            elif op in ("edit", "remove", "move") and ids:
                qid = ids[arg % len(ids)]
                listed = {q["id"]: q for lane in agent.inbox.snapshot().values() for q in lane}
                old = listed[qid]["text"] if qid in listed else None
                try:
                    if op == "edit":
                        agent.inbox.edit(qid, text)
                    elif op == "remove":
                        agent.inbox.remove(qid)
                    else:
                        other = [q for q in listed if q != qid]
                        agent.inbox.move(
                            qid,
                            lane=("steer", "follow_up")[arg % 2],
                            before=other[arg % len(other)] if other and arg > 1 else None,
                        )
                except NotQueued:
                    assert old is None  # refused exactly when it is no longer queued
                except QueueError as exc:  # moving an aside, or before a message of another lane
                    assert old is not None and "lane" in str(exc), exc
                else:
                    assert old is not None
                    if op == "edit":
                        sent[sent.index(old)] = text
                    elif op == "remove":
                        sent.remove(old)
                        removed.append(old)
            elif op == "pause":
                gate.pause()
            elif op == "resume":
                gate.resume()
            elif op == "abort":
                agent.abort()
            elif op == "abort_clear":
                cleared = agent.inbox.snapshot()
                agent.abort(clear_queue=True)
                for lane in cleared.values():
                    for q in lane:
                        sent.remove(q["text"])
            elif op == "advance":
                world.advance()
            await anyio.wait_all_tasks_blocked()
        gate.resume()
        for _ in range(2000):
            await anyio.wait_all_tasks_blocked()
            if not agent.running and not world.waiting:
                break
            world.advance()
        else:
            raise AssertionError("the run never terminated")
        await agent.wait_idle()
        tg.cancel_scope.cancel()

    check_history(agent)
    check_events(events)
    delivered = [i.text for i in agent.history.items() if isinstance(i, UserMessage)]
    queued = [q["text"] for lane in agent.inbox.snapshot().values() for q in lane]
    for text in sent:
        assert delivered.count(text) + queued.count(text) == 1, (text, delivered, queued)
    for text in removed:
        assert text not in delivered and text not in queued
    assert agent.gate.parked == {}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 3)), min_size=1, max_size=40),
    behaviours=st.lists(st.sampled_from(BEHAVIOURS), min_size=1, max_size=8),
)
def test_random_interleavings_keep_the_invariants(ops: list[tuple[str, int]], behaviours: list[str]) -> None:
    anyio.run(run_program, [("prompt", 0), *ops], behaviours)
