"""Snapshot tests (pytest-textual-snapshot): idle, streaming with a tool block, paused banner, approval
prompt, queue panel with items, and a conversation gallery in each shipped theme. Deterministic: fixed
size, no cursor blink, frozen pause clock, scripted model gated by events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.testing.scripted import Call, Step
from owltui.ui.app import OwlApp
from owltui.ui.widgets.blocks import AssistantBlock
from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock
from tests.ui.conftest import SlowTool, make_app, make_runtime_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

SIZE = (100, 30)

GALLERY_MD = """## Plan

1. Read `owltui/ui/app.py`
2. Run the **tests**

```python
def hello() -> str:
    return "owl"
```
"""


async def prompt(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


def test_idle(snap_compare: Any) -> None:
    app = make_app(cursor_blink=False)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_streaming_with_tool_block(snap_compare: Any) -> None:
    tool = SlowTool()
    tool.release = anyio.Event()  # never set: the tool is still running in the frame
    app = make_app(
        [Step(text="Let me run the **slow** check first.", calls=[Call("slow", {"text": "suite"})])],
        tools=[tool],
        cursor_blink=False,
    )

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)
        await prompt(pilot, "check the suite")
        await wait_for(
            pilot,
            lambda: any(
                b.status == "running" and "line two" in b._output for b in app.conversation.query(ToolBlock)
            ),
            "tool running",
        )
        await wait_for(pilot, lambda: all(b.done for b in app.conversation.query(AssistantBlock)), "text")

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_streaming_markdown_midway(snap_compare: Any) -> None:
    mid = anyio.Event()
    app = make_app([Step(text=GALLERY_MD, chunk=40, mid_gate=mid)], cursor_blink=False)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)
        await prompt(pilot, "plan it")
        await wait_for(pilot, lambda: any("Read" in b.shown for b in app.conversation.query(AssistantBlock)))

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_paused_banner(snap_compare: Any) -> None:
    app = make_app([Step(text="after the pause")], cursor_blink=False)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)
        await prompt(pilot, "/pause")
        await prompt(pilot, "start while paused")
        await wait_for(pilot, lambda: "main" in app.runtime.gate.parked, "parked")
        await type_text(pilot, "still typing")

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_approval_prompt(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the welcome line names the workspace as ~/ws
    ws = tmp_path / "ws"
    ws.mkdir()
    app = make_runtime_app(
        [Step(text="I need to run a command.", calls=[Call("bash", {"command": "make test"})])],
        ws,
        env_for(tmp_path),
        cursor_blink=False,
    )

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)
        await prompt(pilot, "run the tests")
        await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)), "approval")
        await wait_for(pilot, lambda: all(b.done for b in app.conversation.query(AssistantBlock)), "text")

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_queue_panel_with_items(snap_compare: Any) -> None:
    gate = anyio.Event()
    app = make_app([Step(text="working", gate=gate)], cursor_blink=False)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)
        await prompt(pilot, "refactor the parser")
        await wait_for(pilot, lambda: app.agent.running)
        await prompt(pilot, "keep the public API")
        await type_text(pilot, "then update the docs")
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: len(app.runtime.inbox) == 2)

    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def gallery_app(theme: str) -> OwlApp:
    tool = SlowTool()
    steps = [
        Step(text=GALLERY_MD, calls=[Call("slow", {"text": "unit"}), Call("missing", {"x": 1})]),
        Step(text="All green. The parser now keeps the public API."),
    ]
    return make_app(steps, tools=[tool], theme=theme, cursor_blink=False)


@pytest.mark.parametrize("theme", ["owl-dark", "owl-light", "owl-forest"])
def test_theme_gallery(snap_compare: Any, theme: str) -> None:
    app = gallery_app(theme)

    async def before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.ready)
        await prompt(pilot, "fix the parser")
        await wait_for(
            pilot,
            lambda: (
                not app.agent.running
                and any("All green" in b.text for b in app.conversation.query(AssistantBlock))
            ),
            "done",
        )
        await wait_for(pilot, lambda: all(b.done for b in app.conversation.query(AssistantBlock)), "text")
        await prompt(pilot, "/model")

    assert snap_compare(app, terminal_size=(100, 34), run_before=before)
