"""Plain mode (prompt-toolkit REPL) driven through a pipe input: streaming output, typing while the
answer streams sends steering, /pause, /resume, /require, approvals shown whole and answered only by
/allow, /always, /deny (typed lines never answer), Ctrl+C aborts, Ctrl+D quits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from owltui.agent.messages import UserMessage
from owltui.testing.host import LocalRuntime
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.plain import PlainPrinter, PlainRepl
from tests.ui.conftest import SlowTool

pytestmark = pytest.mark.anyio


class _Changes:
    """Set whenever something a test waits for may have changed: REPL output, agent events, the
    inbox, the pause gate, the requirement slot, the REPL's exit. Waiting is on this, not on time."""

    def __init__(self) -> None:
        self.event: anyio.Event | None = None

    def poke(self, *_args: object) -> None:
        if self.event is not None:
            self.event.set()

    def watch(self, runtime: LocalRuntime) -> None:
        runtime.emitter.subscribe(self.poke)
        runtime.agent.on_running(self.poke)
        runtime.inbox.subscribe(self.poke)
        runtime.gate.subscribe(self.poke)
        runtime.requirement.subscribe(self.poke)


CHANGES = _Changes()


class _Output(list[str]):
    def append(self, line: str) -> None:
        super().append(line)
        CHANGES.poke()


async def until(cond: Callable[[], bool], what: str) -> None:
    """Wait, bounded, until ``cond()`` holds, re-checking it after each change."""
    with anyio.fail_after(10):
        while True:
            CHANGES.event = anyio.Event()
            if cond():
                return
            await CHANGES.event.wait()


async def drive(runtime, script: Callable[..., object]) -> list[str]:
    out = _Output()
    CHANGES.watch(runtime)
    repl = PlainRepl(runtime, write=out.append)
    with create_pipe_input() as inp:
        session: PromptSession[str] = PromptSession(input=inp, output=DummyOutput())
        async with anyio.create_task_group() as tg:
            result: list[int] = []

            async def main() -> None:
                result.append(await repl.run(session=session))
                CHANGES.poke()

            tg.start_soon(main)
            await script(inp, out, repl)
            await until(lambda: bool(result), "repl exit")
    return out


async def test_stream_steer_pause_resume_require_quit() -> None:
    mid = anyio.Event()
    model = ScriptedModel(
        [Step(text="line one\nline two of the answer", chunk=6, mid_gate=mid), Step(text="steered answer")]
    )
    rt = LocalRuntime(model, tools=[SlowTool()])

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("hello\r")
        await until(lambda: rt.agent.running and model.calls == 1, "run")
        inp.send_text("mind the tests\r")
        await until(lambda: rt.inbox.texts("steer") == ["mind the tests"], "steer queued")
        mid.set()
        await until(lambda: "steered answer" in out, "second answer")
        last = model.requests[-1].messages
        assert [m.text for m in last if isinstance(m, UserMessage) and m.lane == "steer"] == [
            "mind the tests"
        ]
        inp.send_text("/pause\r")
        await until(lambda: rt.gate.paused, "paused")
        inp.send_text("/resume\r")
        await until(lambda: any(line.startswith("· resumed after") for line in out), "resumed")
        inp.send_text("/require slow be sure\r")
        await until(lambda: rt.requirement.current is not None, "requirement")
        assert rt.requirement.current.reason == "be sure"
        inp.send_text("/require nope\r")
        await until(lambda: any("unknown tool `nope`" in line for line in out), "unknown")
        inp.send_text("/theme owl-light\r")
        await until(lambda: "! /theme is not available in plain mode (/help)" in out, "no themes")
        inp.send_text("/new\r")
        await until(lambda: "· new session" in out, "new session")
        inp.send_text("\x04")  # Ctrl+D

    out = await drive(rt, script)
    assert "line one" in out and "line two of the answer" in out
    assert "[steer] mind the tests" in out
    assert "· paused: agents park before their next model call or tool start" in out


async def test_ctrl_c_aborts_the_run() -> None:
    gate = anyio.Event()
    model = ScriptedModel([Step(text="never", gate=gate)])
    rt = LocalRuntime(model)

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("go\r")
        await until(lambda: rt.agent.running, "run")
        inp.send_text("\x03")
        await until(lambda: "· aborted" in out, "aborted")
        assert not rt.agent.running
        inp.send_text("/quit\r")

    await drive(rt, script)


def _plain_runtime(
    tmp_path: Path, steps: list[Step], *, tools: list[object] | None = None, **options: object
):
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options

    ws = tmp_path / "ws"
    ws.mkdir()
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "HOME": str(tmp_path),
    }
    return build_runtime(
        Options(no_session=True, workspace=ws, **options), model=ScriptedModel(steps), env=env, tools=tools
    )


async def test_approval_is_answered_only_by_a_command(tmp_path: Path) -> None:
    rt = _plain_runtime(
        tmp_path, [Step(calls=[Call("bash", {"command": "echo plain-ok"})]), Step(text="fine")]
    )

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("run\r")
        await until(lambda: any(line.startswith("? Allow bash?") for line in out), "ask")
        assert "  command: echo plain-ok" in out
        assert "  why: no allow rule matches `echo plain-ok`" in out
        assert '  /always saves bash = ["echo *"] in .owltui/permissions.toml' in out
        for typed in ("y", "a", "yes", "actually, no"):  # typed lines are messages, never answers
            inp.send_text(typed + "\r")
            await until(lambda t=typed: t in rt.inbox.texts("steer"), f"{typed!r} queued")
        assert rt.approvals.pending()
        assert any(line.startswith("· that was a message, not an answer") for line in out)
        inp.send_text("/allow\r")
        await until(lambda: "fine" in out, "done")
        inp.send_text("/deny\r")
        await until(lambda: "· no approval is waiting" in out, "nothing waits")
        inp.send_text("\x04")

    out = await drive(rt, script)
    assert "⏺ bash echo plain-ok" in out
    assert any(line.startswith("  ✓ bash: ok") for line in out)


async def test_approval_prints_the_command_honestly(tmp_path: Path) -> None:
    command = "touch pwned #\rls -la \u202e" + " --long" * 40
    rt = _plain_runtime(tmp_path, [Step(calls=[Call("bash", {"command": command})]), Step(text="denied it")])

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("run\r")
        await until(lambda: any(line.startswith("? Allow bash?") for line in out), "ask")
        inp.send_text("/deny\r")
        await until(lambda: "denied it" in out, "done")
        inp.send_text("\x04")

    out = await drive(rt, script)
    shown = "touch pwned #\\rls -la \\u202e" + " --long" * 40
    assert f"  command: {shown}" in out  # whole, escaped: nothing dropped, nothing cut
    assert any("control characters" in line and "\\r (carriage return)" in line for line in out)
    assert any("direction-changing" in line and "U+202E" in line for line in out)
    first = next(i for i, line in enumerate(out) if line.startswith("? Allow bash?"))
    asked = out[first : out.index("· denied `bash`")]
    assert not any("\r" in line or "\u202e" in line for line in asked)


async def test_sandbox_rerun_in_plain_mode(tmp_path: Path) -> None:
    from tests.ui.test_honest_approvals import RerunProbe

    probe = RerunProbe()
    rt = _plain_runtime(
        tmp_path,
        [Step(calls=[Call("probe", {"command": "touch /etc/owl"})]), Step(text="probed")],
        tools=[probe],
        yes=True,
    )

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("run\r")
        await until(
            lambda: any(line.startswith("! Run this command once WITHOUT the sandbox?") for line in out),
            "ask",
        )
        assert "  blocked: blocked by the sandbox: /etc/owl is outside the writable paths" in out
        inp.send_text("/always\r")
        await until(lambda: any("allowed once or not at all" in line for line in out), "refused")
        assert rt.approvals.pending()
        inp.send_text("/allow\r")
        await until(lambda: "probed" in out, "done")
        inp.send_text("\x04")

    out = await drive(rt, script)
    assert probe.answers == [True]
    assert not any(line.startswith("  /always") for line in out)


def test_printer_sanitizes_and_breaks_long_lines() -> None:
    from owltui.agent import events as ev

    out: list[str] = []
    p = PlainPrinter(out.append)
    p(ev.MessageDelta(text="a\x1b[2Jb \x1b]0;t"))
    p(ev.MessageDelta(text="itle\x07c\n" + "word " * 50))
    p(ev.MessageEnd(text="", thinking="", tool_calls=[], stop_reason="stop", usage={}))
    assert out[0] == "ab c"
    assert all(len(line) <= 160 for line in out)
