"""Pilot tests: tool blocks (status, streamed output, collapse, edit diff), thinking collapsed, and the
inline approval against the real runtime — answered by Ctrl+G then y / a / n; typing in the input is
never blocked and never answers."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from owltui.testing.scripted import Call, Step
from owltui.ui.widgets.blocks import NoticeBlock, ThinkingBlock
from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock
from tests.ui.conftest import SIZE, SlowTool, make_app, make_runtime_app, wait_for
from tests.ui.test_input import type_text

pytestmark = pytest.mark.anyio


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }


async def test_tool_block_streams_output_then_collapses() -> None:
    tool = SlowTool()
    tool.release = anyio.Event()
    app = make_app(
        [Step(text="running it", calls=[Call("slow", {"text": "abc"})]), Step(text="finished")], tools=[tool]
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ToolBlock)), "tool block")
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "running" and "line two" in block._output, "output")
        assert "slow" in block.title and "abc" in block.title and "running" in block.title
        assert not block.collapsed
        await type_text(pilot, "typing works")
        assert app.input.text == "typing works"
        tool.release.set()
        await wait_for(pilot, lambda: block.status == "ok", "tool end")
        assert block.collapsed and block._output == "done: abc"
        await app.action_quit()


async def test_thinking_is_collapsed_by_default() -> None:
    app = make_app([Step(thinking="let me think", text="answer")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "q")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ThinkingBlock)))
        block = app.conversation.query_one(ThinkingBlock)
        assert block.collapsed and block._text == "let me think"
        await app.action_quit()


async def _approval_run(tmp_path: Path, answer: str) -> tuple[object, list[str], Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = [Step(calls=[Call("bash", {"command": "echo approved-run"})]), Step(text="all done")]
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "run it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)), "approval prompt")
        block = app.conversation.query_one(ToolBlock)
        assert block.status == "approval" and "awaiting approval" in block.title
        # the input keeps working: letters typed there are text, y / a / n included
        await type_text(pilot, "yan")
        assert app.input.text == "yan"
        assert app.runtime.approvals.pending()
        await pilot.press("ctrl+u")  # (Ctrl+C would abort the run)
        await pilot.press(answer)
        assert app.input.text == answer and app.runtime.approvals.pending()  # still just a letter
        await pilot.press("ctrl+u")
        assert app.input.text == ""
        await pilot.press("ctrl+g", answer)
        await wait_for(pilot, lambda: not app.runtime.approvals.pending(), "answered")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: block.status in ("ok", "refused"), "tool end")
        assert not app.conversation.query(ApprovalPrompt)
        notes = [b.text for b in app.conversation.query(NoticeBlock)]
        status = block.status
        output = block._output
        await app.action_quit()
    return status, notes + [output], ws


async def test_approval_allow_once(tmp_path: Path) -> None:
    status, notes, ws = await _approval_run(tmp_path, "y")
    assert status == "ok" and "approved-run" in notes[-1]
    assert not (ws / ".owltui" / "permissions.toml").exists()


async def test_approval_always_saves_rule(tmp_path: Path) -> None:
    status, notes, ws = await _approval_run(tmp_path, "a")
    assert status == "ok"
    assert 'always allowed: saving bash = ["echo *"] as a permission rule' in notes
    assert '"echo *"' in (ws / ".owltui" / "permissions.toml").read_text()  # program granularity (issue 10)


async def test_approval_deny(tmp_path: Path) -> None:
    status, notes, _ws = await _approval_run(tmp_path, "n")
    assert status == "refused"
    assert "denied `bash`" in notes


async def test_approval_prompt_keys_when_clicked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    steps = [Step(calls=[Call("bash", {"command": "echo focused"})]), Step(text="ok")]
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "x")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)))
        prompt = app.conversation.query_one(ApprovalPrompt)
        prompt.focus()  # focus alone (Tab, a stray call) cannot land on it
        await pilot.pause()
        assert not prompt.has_focus
        await pilot.click(ApprovalPrompt)  # a click is deliberate
        assert prompt.has_focus
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.runtime.approvals.pending())
        await app.agent.wait_idle()
        assert app.input.has_focus
        await app.action_quit()


async def test_edit_shows_diff(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    steps = [
        Step(calls=[Call("edit", {"path": "a.txt", "old_text": "beta", "new_text": "gamma"})]),
        Step(text="edited"),
    ]
    app = make_runtime_app(steps, ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "edit")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)))
        block = app.conversation.query_one(ToolBlock)
        diff = str(block._args_view.render())
        assert "-beta" in diff and "+gamma" in diff
        prompt = app.conversation.query_one(ApprovalPrompt).text
        assert "path: a.txt" in prompt and "replaces 1 line with 1 line" in prompt
        assert '/always saves edit = ["a.txt"]' in prompt
        await pilot.press("ctrl+g", "y")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: block.status == "ok")
        assert not block.collapsed  # diffs stay open
        assert (ws / "a.txt").read_text() == "alpha\ngamma\n"
        await app.action_quit()
