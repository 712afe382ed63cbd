"""The task tool: a researcher on the same loop, read-only tools, shared pause gate, cancellation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from owltui.agent.messages import ToolResult
from owltui.agent.pause import PauseGate
from owltui.features.subagent import TaskTool
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.agent.helpers import Echo, Fail, ReadBlocker, make_agent

pytestmark = pytest.mark.anyio


def results(agent):
    return [i for i in agent.history.items() if isinstance(i, ToolResult)]


async def test_task_runs_a_researcher_with_read_only_tools_and_returns_its_report(tmp_path: Path) -> None:
    child_models: list[ScriptedModel] = []

    def factory() -> ScriptedModel:
        m = ScriptedModel([Step(calls=[Call("echo", {"text": "found it"})]), Step(text="Report: found it")])
        child_models.append(m)
        return m

    gate = PauseGate()
    echo = Echo()
    task = TaskTool(factory, [echo, Fail()], tmp_path, gate=gate)
    agent, model, events = make_agent(
        [Step(calls=[Call("task", {"prompt": "find x", "description": "find"})]), Step(text="done")],
        [task, echo, Fail()],
        gate=gate,
    )
    agent.config.services = replace(agent.config.services, emitter=agent.emitter)
    out = await agent.run("go")
    assert out.text == "done"
    (r,) = results(agent)
    assert r.status == "ok" and r.content == "Report: found it"
    child_tools = [t.name for t in child_models[0].requests[0].tools]
    sub = [e for e in events if e.agent is not None]
    assert sub and all(e.agent.startswith("task-") for e in sub)  # forwarded, marked with its name
    assert sub[0].type == "agent_start" and sub[-1].type == "agent_end"
    assert child_tools == ["echo", "read_result"]  # read-only only, no nested task
    assert any(e.type == "tool_update" and "[task-" in e.text for e in events)


async def test_tasks_in_one_batch_run_concurrently_and_share_the_pause_gate(tmp_path: Path) -> None:
    blockers = [ReadBlocker(), ReadBlocker()]
    it = iter(blockers)

    def factory() -> ScriptedModel:
        return ScriptedModel([Step(calls=[Call("rblock", {})]), Step(text="report")])

    gate = PauseGate()
    made: list[TaskTool] = []

    class PerTask(TaskTool):
        async def run(self, args, ctx):
            self._tools = [next(it)]
            return await super().run(args, ctx)

    task = PerTask(factory, [], tmp_path, gate=gate)
    made.append(task)
    agent, _, _ = make_agent(
        [Step(calls=[Call("task", {"prompt": "a"}), Call("task", {"prompt": "b"})]), Step(text="done")],
        [task],
        gate=gate,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blockers[0].started.wait()
        await blockers[1].started.wait()  # both subagents are working at once
        gate.pause()
        for b in blockers:
            b.release.set()
        await anyio.wait_all_tasks_blocked()
        assert sorted(gate.parked.values()) == ["model", "model"]  # both children frozen by /pause
        assert set(gate.parked) == {k for k in gate.parked if k.startswith("task-")}
        gate.resume()
    assert [r.content for r in results(agent)] == ["report", "report"]


async def test_abort_reaches_the_subagents_running_tool(tmp_path: Path) -> None:
    blk = ReadBlocker()
    task = TaskTool(lambda: ScriptedModel([Step(calls=[Call("rblock", {})])]), [blk], tmp_path)
    agent, _, events = make_agent([Step(calls=[Call("task", {"prompt": "a"})])], [task])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.abort()
    assert blk.cancelled
    assert results(agent)[0].status == "cancelled"
    assert events[-1].type == "agent_end" and events[-1].reason == "aborted"


async def test_researcher_stops_repeating_searches(tmp_path: Path) -> None:
    child = ScriptedModel(
        lambda req: (
            Step(text="final report")
            if req.tool_choice == "none"
            else Step(calls=[Call("echo", {"text": "same"})])
        )
    )
    task = TaskTool(lambda: child, [Echo()], tmp_path)
    agent, _, _ = make_agent([Step(calls=[Call("task", {"prompt": "a"})]), Step(text="ok")], [task])
    await agent.run("go")
    assert results(agent)[0].content == "final report"
    assert child.calls == 4  # 3 rounds (2 of them stale), then the answer with tools off
