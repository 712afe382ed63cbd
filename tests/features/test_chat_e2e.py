"""Chat end to end: the demo model, the real built-in tools, real files and processes, one loop."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from owltui.agent.agent import Agent
from owltui.agent.messages import ToolResult
from owltui.agent.pause import PauseGate
from owltui.agent.results import ResultStore
from owltui.agent.services import Services
from owltui.features.chat import chat_config
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.providers.demo import DemoModel
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.jobs.manager import JobManager
from owltui.tools.registry import builtin_tools

pytestmark = pytest.mark.anyio


def make(tmp_path: Path, model, mode: str = "yolo") -> tuple[Agent, JobManager]:
    holder: list[Agent] = []
    jobs = JobManager(on_event=lambda ev: holder[0].aside(ev.aside_text()) if ev.kind == "finished" else None)
    policy = PermissionPolicy(tmp_path, mode, None)
    cfg = chat_config(
        model,
        builtin_tools(),
        workspace=tmp_path,
        permission=policy.check,
        results=ResultStore(tmp_path / ".results"),
        services=Services(jobs=jobs),
    )
    agent = Agent(cfg, gate=PauseGate())
    holder.append(agent)
    return agent, jobs


async def test_demo_model_creates_a_file_with_the_real_write_tool(tmp_path: Path) -> None:
    agent, jobs = make(tmp_path, DemoModel(delay=0))
    out = await agent.run("create notes.txt saying hello owl")
    assert (tmp_path / "notes.txt").read_text() == "hello owl\n"
    assert out.reason == "done" and "written" in out.text
    await jobs.shutdown()


async def test_without_approval_write_is_refused_and_the_refusal_is_the_result(tmp_path: Path) -> None:
    agent, jobs = make(tmp_path, DemoModel(delay=0), mode="ask")
    await agent.run("create notes.txt saying hello")
    assert not (tmp_path / "notes.txt").exists()
    (r,) = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert r.status == "refused" and "--yes" in r.content
    await jobs.shutdown()


async def test_command_outliving_its_cap_becomes_a_job_whose_end_wakes_the_idle_agent(tmp_path: Path) -> None:
    release = tmp_path / "release"
    model = ScriptedModel(
        [
            Step(
                calls=[
                    Call(
                        "bash",
                        {
                            "command": f"while [ ! -e {release} ]; do sleep 0.02; done; echo finished-now",
                            "timeout": 0.3,
                        },
                    )
                ]
            ),
            Step(text="It is running in the background."),
            Step(text="The job finished."),
        ]
    )
    agent, jobs = make(tmp_path, model)
    async with anyio.create_task_group() as tg:
        agent.bind(tg)
        await agent.run("start the long command")
        (r,) = [i for i in agent.history.items() if isinstance(i, ToolResult)]
        assert r.status == "ok" and "job" in r.content.lower() and "still running" in r.content.lower()
        assert model.calls == 2 and not agent.running
        woken = anyio.Event()
        agent.emitter.subscribe(lambda ev: woken.set() if ev.type == "agent_end" else None)
        release.touch()  # the job ends: its aside wakes the idle agent
        with anyio.fail_after(10):
            await woken.wait()
        tg.cancel_scope.cancel()
    wake = model.views[2][-1]
    assert wake.lane == "aside" and "finished-now" in wake.text and "exit code 0" in wake.text
    await jobs.shutdown()


async def test_large_command_output_is_saved_and_reread_exactly(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("bash", {"command": "seq 1 100000"})]),
            Step(calls=[Call("read_result", {"result_id": "r1", "offset": 99998, "limit": 3})]),
            Step(text="ok"),
        ]
    )
    agent, jobs = make(tmp_path, model)
    await agent.run("count")
    first, second = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert 'read_result {"result_id": "r1"' in first.content and len(first.content) < 52_000
    assert second.content.splitlines() == ["99998\t99998", "99999\t99999", "100000\t100000"]
    await jobs.shutdown()
