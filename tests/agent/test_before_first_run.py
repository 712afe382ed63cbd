"""``Agent.before_first_run``: awaited once by the first run, before the tool list is captured (MCP
servers starting); cleared first; an exception leaves the agent idle; an abort during the wait ends
the run at its first check."""

from __future__ import annotations

import anyio
import pytest

from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Echo, make_agent, types

pytestmark = pytest.mark.anyio


async def test_awaited_once_before_the_tools_are_captured() -> None:
    agent, model, _ = make_agent(
        [Step(calls=[Call("echo", {"text": "x"})]), Step(text="one"), Step(text="two")], []
    )
    calls: list[bool] = []
    echo = Echo()

    async def ready() -> None:
        calls.append(agent.running)
        await anyio.sleep(0.01)
        agent.config.set_tools([echo])  # what an MCP source does once its servers answer

    agent.before_first_run = ready
    out = await agent.run("go")
    assert out.text == "one" and echo.ran == ["x"]
    assert [t.name for t in model.requests[0].tools] == ["echo", "read_result"]
    assert agent.before_first_run is None and calls == [True]
    await agent.run("again")
    assert calls == [True]  # once


async def test_an_exception_leaves_the_agent_idle_and_is_raised() -> None:
    agent, model, _ = make_agent([Step(text="later")])
    seen: list[bool] = []
    agent.on_running(seen.append)

    async def broken() -> None:
        raise RuntimeError("server crashed")

    agent.before_first_run = broken
    with pytest.raises(RuntimeError, match="server crashed"):
        await agent.run("go")
    assert not agent.running and seen == [True, False] and model.calls == 0
    assert (await agent.run("go")).text == "later"  # cleared: the next run does not wait again


async def test_an_abort_during_the_wait_ends_the_run_at_its_first_check() -> None:
    agent, model, events = make_agent([Step(text="never")])
    release = anyio.Event()
    waiting = anyio.Event()

    async def ready() -> None:
        waiting.set()
        await release.wait()

    agent.before_first_run = ready
    outcome = []
    async with anyio.create_task_group() as tg:
        agent.bind(tg)

        async def run() -> None:
            outcome.append(await agent.run("go"))

        tg.start_soon(run)
        await waiting.wait()
        assert agent.running and agent.abort()
        release.set()
    assert outcome[0].reason == "aborted" and model.calls == 0
    assert "message_start" not in types(events) and not agent.running
