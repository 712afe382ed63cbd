"""What the conversation draws, on an app launched the way ``owltui`` launches it (``Boot``, the real
runtime, a scripted model): a prompt with an ``@mention`` completed by Tab (which leaves a trailing
space) is drawn once with its attachments once; an approved edit leaves exactly one diff; a bash call
cancelled while it streams keeps the lines it printed and says it was cancelled; a finished bash
call shows its first lines inline, as many as ``bash_output_lines`` says (0: folded), and Ctrl+O
still expands it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.boot import Boot, Started
from owltui.ui.widgets.blocks import AttachmentsBlock, InputBlock, NoticeBlock
from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock
from tests.ui.conftest import SIZE, owl_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_launched_keys import attached, env_for

pytestmark = pytest.mark.anyio

TWELVE = "for i in $(seq 1 12); do echo line$i; done"


def launched(steps: list[Step], tmp_path: Path, config: str = "", **options: Any) -> tuple[OwlApp, Boot]:
    """An app as ``launch`` makes it, in ``tmp_path/ws``, with ``config`` as the user's config file."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = env_for(tmp_path)
    (tmp_path / "cfg" / "owltui").mkdir(parents=True, exist_ok=True)
    (tmp_path / "cfg" / "owltui" / "config.toml").write_text(config)

    def start() -> Started:
        chosen = Options(no_session=True, workspace=workspace, sandbox="off", **options)
        runtime = build_runtime(chosen, model=ScriptedModel(steps, name="scripted"), env=env)
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, workspace)
    return owl_app(boot), boot


def drawn(app: OwlApp) -> str:
    """Everything the tool blocks draw now, as plain text."""
    return "\n".join(block.drawn for block in app.conversation.query(ToolBlock))


async def test_a_prompt_with_a_tab_completed_mention_is_drawn_once(tmp_path: Path) -> None:
    app, boot = launched([Step(text="read it")], tmp_path)
    (tmp_path / "ws" / "notes.txt").write_text("alpha\nbeta\n")
    async with app.run_test(size=SIZE) as pilot:
        await attached(pilot, app, boot)
        await type_text(pilot, "what is in @no")
        comp = app.main.completions
        await wait_for(pilot, lambda: comp.display and comp.current_path == "notes.txt", "the completion")
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.input.text == "what is in @notes.txt ", "the mention completed")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: bool(app.conversation.query(AttachmentsBlock)), "the attachments")
        await pilot.pause()
        prompts = [b.text.rstrip() for b in app.conversation.query(InputBlock)]
        assert prompts == ["what is in @notes.txt"]
        assert [b.paths for b in app.conversation.query(AttachmentsBlock)] == [["notes.txt"]]
        assert not [n.text for n in app.conversation.query(NoticeBlock) if "notes.txt" in n.text]
        await app.action_quit()


async def test_an_approved_edit_leaves_one_diff(tmp_path: Path) -> None:
    edit = {"path": "a.py", "old_text": "y = 2", "new_text": "y = 3"}
    app, boot = launched([Step(calls=[Call("edit", edit)]), Step(text="edited")], tmp_path)
    (tmp_path / "ws" / "a.py").write_text("x = 1\ny = 2\n")
    async with app.run_test(size=SIZE) as pilot:
        await attached(pilot, app, boot)
        await type_text(pilot, "edit it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)), "the approval")
        assert drawn(app).count("+y = 3") == 1  # the diff the approval asks about
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.focused, ApprovalPrompt), "the approval focused")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run")
        await app.agent.wait_idle()
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "ok", "the edit done")
        assert (tmp_path / "ws" / "a.py").read_text() == "x = 1\ny = 3\n"
        shown = drawn(app)
        assert shown.count("+y = 3") == 1 and shown.count("-y = 2") == 1, shown
        assert "Replaced 1 occurrence in a.py." in shown and not block.collapsed
        await app.action_quit()


async def test_a_cancelled_bash_call_keeps_its_lines(tmp_path: Path) -> None:
    command = "printf 'first-%s\\n' out; printf 'second-%s\\n' out; sleep 30"  # prints what it does not say
    app, boot = launched(
        [Step(calls=[Call("bash", {"command": command})]), Step(text="never")], tmp_path, yes=True
    )
    async with app.run_test(size=SIZE) as pilot:
        await attached(pilot, app, boot)
        await type_text(pilot, "run it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "second-out" in drawn(app), "the command printing", limit=2000)
        await pilot.press("escape")
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "cancelled", "cancelled", limit=2000)
        await app.agent.wait_idle()
        shown = block.drawn
        assert "first-out" in shown and "second-out" in shown, shown
        assert "cancelled" in shown.split("second-out", 1)[1].lower(), shown  # said after the output
        assert not block.collapsed
        await app.action_quit()


async def bash_run(tmp_path: Path, config: str = "") -> tuple[str, str]:
    """Run ``TWELVE`` as the model's call: (what the finished, folded block draws, what it draws once
    Ctrl+O expanded it)."""
    steps = [Step(calls=[Call("bash", {"command": TWELVE})]), Step(text="done")]
    app, boot = launched(steps, tmp_path, config, yes=True)
    async with app.run_test(size=SIZE) as pilot:
        await attached(pilot, app, boot)
        await type_text(pilot, "count")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run", limit=2000)
        await app.agent.wait_idle()
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "ok" and block.collapsed, "folded after success")
        folded = block.drawn
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not block.collapsed, "expanded")
        expanded = block.drawn
        await app.action_quit()
    return folded, expanded


async def test_a_finished_bash_call_shows_its_first_lines(tmp_path: Path) -> None:
    folded, expanded = await bash_run(tmp_path)
    body = folded.split("\n", 1)[1] if "\n" in folded else ""  # below the title
    assert body.splitlines() == ["line1", "line2", "line3", "line4", "line5", "… 7 more lines"]
    assert "line12" in expanded and "more lines" not in expanded


@pytest.mark.parametrize(
    ("config", "lines"), [("bash_output_lines = 2\n", 2), ("bash_output_lines = 0\n", 0)]
)
async def test_bash_output_lines_is_honoured(tmp_path: Path, config: str, lines: int) -> None:
    folded, expanded = await bash_run(tmp_path, config)
    body = folded.split("\n", 1)[1] if "\n" in folded else ""
    wanted = [f"line{i}" for i in range(1, lines + 1)] + ([f"… {12 - lines} more lines"] if lines else [])
    assert body.splitlines() == wanted
    assert "line12" in expanded
