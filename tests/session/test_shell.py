"""``!command`` (issue 13, item 2): it runs through the bash tool's process and sandbox (real processes,
real Landlock), its output is shown as a bash block and reaches the next model request as
user-provided context - idle (added to the history, no run) and during a run (as an aside)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from owltui.agent.events import Event
from owltui.agent.messages import UserMessage
from owltui.policy.sandbox.child import capabilities
from owltui.session.commands.layer import Commands
from owltui.session.input.shell import run_shell, shell_command, unescape
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.session.test_command_layer import Front
from tests.tools.conftest import outside_dir, until

pytestmark = pytest.mark.anyio
needs_landlock = pytest.mark.skipif(capabilities().landlock_abi < 1, reason="this kernel has no Landlock")
SECRET = "sk-live-0123456789abcdefghij"


def build(tmp_path: Path, steps: list[Step], **opts: object) -> tuple[Runtime, ScriptedModel, list[Event]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", ""),
        "MY_SERVICE_TOKEN": SECRET,
    }
    model = ScriptedModel(steps)
    rt = build_runtime(Options(workspace=ws, **opts), model=model, env=env)  # type: ignore[arg-type]
    events: list[Event] = []
    rt.emitter.subscribe(events.append)
    return rt, model, events


async def ended(events: list[Event], call_id: str) -> dict:
    with anyio.fail_after(30):
        while True:
            for e in events:
                if e.type == "tool_end" and e.wire()["call_id"] == call_id:
                    return e.wire()
            await anyio.sleep(0.01)


def texts(messages: object) -> list[str]:
    return [getattr(m, "text", "") for m in messages]  # type: ignore[attr-defined]


def test_what_is_a_shell_line() -> None:
    assert shell_command("!ls -la") == "ls -la" and shell_command("  ! git status ") == "git status"
    assert shell_command("!") == "" and shell_command("ls") is None and shell_command("a !b") is None
    assert shell_command("!!important") is None and unescape("!!important") == "!important"
    assert unescape("plain") == "plain"


async def test_idle_output_reaches_the_next_request_without_a_run(tmp_path: Path) -> None:
    rt, model, events = build(tmp_path, [Step(text="I see hi.")])
    c = Commands(rt, Front())
    async with rt:
        reply = c.send("!echo hi && echo there >&2")
        assert reply.ok and reply.then is None and reply.data["call_id"].startswith("shell-")
        end = await ended(events, reply.data["call_id"])
        assert end["name"] == "bash" and end["status"] == "ok" and end["output"] == "hi\nthere\n"
        assert end["details"] == {"source": "user", "exit_code": 0}
        start = next(e.wire() for e in events if e.type == "tool_start")
        assert start["arguments"] == {"command": "echo hi && echo there >&2"}
        assert "tool_update" in [e.type for e in events]  # streamed like the model's bash
        assert model.calls == 0 and not rt.agent.running  # nothing started a run
        note = rt.agent.history.items()[-1]
        assert isinstance(note, UserMessage) and (note.lane, note.source) == ("notice", "shell")
        c.send("what did it print?")
        await rt.wait_settled()
    assert texts(model.views[0]) == [
        "The user ran a shell command:\n$ echo hi && echo there >&2\nhi\nthere",
        "what did it print?",
    ]


async def test_while_running_it_is_delivered_like_an_aside(tmp_path: Path) -> None:
    gate = anyio.Event()
    steps = [Step(calls=[Call("read", {"path": "f.txt"})], gate=gate), Step(text="noted")]
    rt, model, events = build(tmp_path, steps)
    (rt.workspace / "f.txt").write_text("x\n")
    c = Commands(rt, Front())
    async with rt:
        assert c.send("read f.txt").ok
        reply = c.send("!echo during")
        await ended(events, reply.data["call_id"])
        assert rt.inbox.snapshot()["aside"][0]["source"] == "shell"
        gate.set()
        await rt.wait_settled()
    assert model.calls == 2
    assert texts(model.views[1])[-1] == "The user ran a shell command:\n$ echo during\nduring"
    assert [e.wire()["lane"] for e in events if e.type == "input"] == ["user", "aside"]


async def test_failures_secrets_and_the_time_cap(tmp_path: Path) -> None:
    rt, _model, events = build(tmp_path, [])
    async with rt:
        failed = await run_shell(rt.agent, rt.emitter, "echo oops; exit 3")
        assert failed.status == "error" and failed.exit_code == 3 and "[exit code 3]" in failed.output
        assert failed.summary() == "`echo oops; exit 3` exited 3"
        leaked = await run_shell(rt.agent, rt.emitter, f"echo {SECRET}; echo ${{MY_SERVICE_TOKEN:-unset}}")
        assert SECRET not in leaked.output and "[REDACTED]" in leaked.output and "unset" in leaked.output
        slow = await run_shell(rt.agent, rt.emitter, "echo started; sleep 30", cap=0.5)
        assert slow.status == "error" and "did not finish within 0.5 s and was killed" in slow.output
        assert rt.active_jobs == {}  # killed, not handed to the jobs
    assert all(SECRET not in str(e.wire()) for e in events)
    assert all(SECRET not in getattr(i, "text", "") for i in rt.agent.history.items())


async def test_abort_stops_a_running_command(tmp_path: Path) -> None:
    rt, _model, events = build(tmp_path, [])
    c = Commands(rt, Front())
    async with rt:
        reply = c.send("!echo begin; sleep 30")
        await until(lambda: any(e.type == "tool_update" for e in events), 30)
        assert c.call("abort").data == {"aborted": True}
        end = await ended(events, reply.data["call_id"])
    assert end["status"] == "cancelled" and "processes were killed" in end["output"]
    assert "Cancelled" in texts(rt.agent.history.items())[-1]


async def test_empty_and_escaped(tmp_path: Path) -> None:
    rt, model, _ = build(tmp_path, [Step(text="ok")])
    c = Commands(rt, Front())
    async with rt:
        usage = c.send("!  ")
        assert not usage.ok and usage.text.startswith("usage: !COMMAND")
        assert c.send("!!not a command").ok
        await rt.wait_settled()
    assert texts(model.views[0]) == ["!not a command"]


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory in the home directory: neither the workspace nor the temp dir."""
    with outside_dir("shell") as d:
        yield d


@needs_landlock
async def test_the_sandbox_holds_for_the_users_commands(tmp_path: Path, outside: Path) -> None:
    rt, _model, events = build(tmp_path, [], interactive=False)
    async with rt:
        blocked = await run_shell(rt.agent, rt.emitter, f"touch {outside}/pwned")
        inside = await run_shell(rt.agent, rt.emitter, "touch made-here && echo ok")
    assert not (outside / "pwned").exists()
    assert blocked.status == "error" and "blocked by the sandbox" in blocked.output
    assert (rt.workspace / "made-here").exists() and inside.status == "ok"
    end = next(e.wire() for e in events if e.type == "tool_end")
    assert end["details"]["sandbox_blocked"] is True
