"""The runtime with real processes: an escaped process is listed as a job but does not hold print
mode open and wakes nobody; it is killed when the runtime closes; the runtime's freezer follows
the gate and config ``pause_freeze``."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from owltui.agent.events import Event
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.exec.procfs import read_stat
from tests.tools.conftest import until

pytestmark = pytest.mark.anyio


def _build(tmp_path: Path, steps: list[Step], config: str = "") -> tuple[Runtime, ScriptedModel, list[Event]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (tmp_path / "cfg" / "owltui").mkdir(parents=True, exist_ok=True)
    (tmp_path / "cfg" / "owltui" / "config.toml").write_text(config)
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    model = ScriptedModel(steps)
    rt = build_runtime(Options(workspace=ws, yes=True, interactive=False), model=model, env=env)
    events: list[Event] = []
    rt.emitter.subscribe(events.append)
    return rt, model, events


async def test_escaped_process_does_not_hold_print_mode_and_dies_with_the_runtime(tmp_path: Path) -> None:
    steps = [
        Step(calls=[Call("bash", {"command": "setsid sleep 300 & echo started"})]),
        Step(text="Started it."),
    ]
    rt, model, events = _build(tmp_path, steps)
    async with rt:
        rt.agent.prompt("start a server")
        with anyio.fail_after(10):
            await rt.wait_settled()  # returns although the escaped process runs
        assert rt.jobs is not None
        [left] = rt.jobs.still_running()
        assert left["kind"] == "escaped" and left["id"] == "1"
        pid = left["pid"]
        assert isinstance(pid, int) and read_stat(pid) is not None
        assert rt.active_jobs == {}
        assert model.calls == 2  # nothing woke the agent
    assert [e.type for e in events].count("job_started") == 1
    result = next(e for e in events if e.type == "tool_end")
    assert "still running in the background as job 1" in result.wire()["output"]
    await until(lambda: read_stat(pid) is None)  # killed and reaped at close


@pytest.mark.parametrize("config", ["", "pause_freeze = false\n"])
async def test_the_runtime_freezes_per_config(tmp_path: Path, config: str) -> None:
    rt, _, _ = _build(tmp_path, [], config)
    async with rt:
        assert rt.freezer is not None and rt.jobs is not None
        assert rt.freezer.enabled is (config == "")
        job = await rt.jobs.start("exec sleep 300", rt.workspace)
        await until(lambda: getattr(read_stat(job.pid), "state", "") == "S")
        rt.gate.pause()
        try:
            if config == "":
                await until(lambda: getattr(read_stat(job.pid), "state", "") == "T")
                assert rt.freezer.frozen() == {"commands": 0, "jobs": 1}
            else:
                assert rt.freezer.frozen() == {"commands": 0, "jobs": 0}
                assert getattr(read_stat(job.pid), "state", "") != "T"
        finally:
            rt.gate.resume()
        await until(lambda: getattr(read_stat(job.pid), "state", "") == "S")
