"""Loop overhead per round: OwlTUI's loop against the least code that does the same work.

A zero-latency scripted model calls a no-op tool every round; 1,000 rounds on top of a pre-filled
history (2,000 items by default, also 0 and 20,000 to show the cost is flat). The floor is a bare
loop that streams the same model, assembles the same message, runs the same tool and appends the
same items, with no events, hooks, checks or lanes. Reports µs per round, the ratio, peak memory.

    python bench/loop_overhead.py [--rounds 1000] [--history 2000]
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from typing import ClassVar

import anyio
from pydantic import BaseModel

from owltui.agent.agent import Agent
from owltui.agent.cancel import CancelToken
from owltui.agent.config import LoopConfig
from owltui.agent.history import MemoryHistory
from owltui.agent.messages import AssistantMessage, ToolResult, UserMessage
from owltui.agent.model import MessageAssembler, ModelRequest
from owltui.agent.pause import PauseGate
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.testing.scripted import Call, ScriptedModel, Step


class NoArgs(BaseModel):
    pass


class Noop:
    name: ClassVar[str] = "noop"
    description: ClassVar[str] = "Does nothing."
    params: ClassVar[type[BaseModel]] = NoArgs
    read_only: ClassVar[bool] = True

    async def run(self, args: NoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("ok")


def script(rounds: int):
    n = [0]
    tool_step = Step(calls=[Call("noop", {})])
    final = Step(text="done")

    def fn(req: ModelRequest) -> Step:
        n[0] += 1
        return tool_step if n[0] <= rounds else final

    return fn


def prefill(n: int) -> list:
    items: list = []
    for i in range(n // 2):
        items.append(UserMessage(text=f"message {i}"))
        items.append(AssistantMessage(text=f"answer {i}"))
    return items


async def owl(rounds: int, history: int) -> float:
    model = ScriptedModel(script(rounds), record=False)
    agent = Agent(
        LoopConfig(model=model, tools=[Noop()], max_rounds=rounds + 10),
        MemoryHistory(prefill(history)),
        gate=PauseGate(),
    )
    agent.emitter.subscribe(lambda e: None)  # one subscriber, like a front end
    t0 = time.perf_counter()
    out = await agent.run("go")
    dt = time.perf_counter() - t0
    assert out.reason == "done" and out.rounds == rounds + 1, out
    return dt / (rounds + 1)


async def floor(rounds: int, history: int) -> float:
    model = ScriptedModel(script(rounds), record=False)
    tool = Noop()
    items = prefill(history)
    items.append(UserMessage(text="go"))
    ctx = ToolContext(workspace=__import__("pathlib").Path("."), cancel=CancelToken())
    t0 = time.perf_counter()
    while True:
        asm = MessageAssembler()
        async for ev in model.stream(ModelRequest(system="", messages=items)):
            asm.feed(ev)
        msg = asm.finish()
        items.append(msg)
        if not msg.tool_calls:
            break
        for call in msg.tool_calls:
            out = await tool.run(NoArgs.model_validate(call.arguments), ctx)
            items.append(ToolResult(call_id=call.id, name=call.name, content=out.content))
    dt = time.perf_counter() - t0
    return dt / (rounds + 1)


def best(fn, rounds: int, history: int, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        times.append(anyio.run(fn, rounds, history))
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--history", type=int, default=2000)
    args = ap.parse_args()
    print(f"rounds per run: {args.rounds}")
    for h in sorted({0, args.history, 20000}):
        o = best(owl, args.rounds, h)
        f = best(floor, args.rounds, h)
        print(
            f"history {h:>6}: owltui {o * 1e6:7.1f} µs/round   floor {f * 1e6:6.1f} µs/round   "
            f"ratio {o / f:4.2f}x"
        )
    tracemalloc.start()
    anyio.run(owl, args.rounds, args.history)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory of one {args.rounds}-round run on {args.history} items: {peak / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
