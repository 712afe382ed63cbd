"""The pinned todo list above the input: it fills as a scripted model updates it (three calls, each
state drawn), collapses to one line and back, is hidden with no list, cuts long lines at the width,
comes back with a resumed session (``-c``: the runtime built twice on one session directory) and
after ``/compact``; plain mode prints the list when it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.events import TodoEvent, TodoItem
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.plain import PlainPrinter
from owltui.ui.text import summarize_args
from owltui.ui.widgets.todo_panel import TodoPanel
from tests.ui.conftest import SIZE, make_runtime_app, owl_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio

STATES = [
    [("Read the parser", "in_progress"), ("Fix split()", "pending"), ("Run the tests", "pending")],
    [("Read the parser", "done"), ("Fix split()", "in_progress"), ("Run the tests", "pending")],
    [("Read the parser", "done"), ("Fix split()", "done"), ("Run the tests", "in_progress")],
]
DRAWN = [
    ["▶ Read the parser", "☐ Fix split()", "☐ Run the tests"],
    ["☑ Read the parser", "▶ Fix split()", "☐ Run the tests"],
    ["☑ Read the parser", "☑ Fix split()", "▶ Run the tests"],
]


def todo_call(state: list[tuple[str, str]]) -> Call:
    return Call("todo", {"items": [{"content": c, "status": s} for c, s in state]})


def shown(panel: TodoPanel) -> list[str]:
    return panel.render_text().plain.splitlines() if panel.display else []


def screen_lines(panel: TodoPanel) -> list[str]:
    """What the panel draws on screen, line by line (its border and padding stripped)."""
    rows = [panel.render_line(y).text for y in range(panel.size.height)]
    return [r.strip() for r in rows if r.strip() and set(r.strip()) != {"─"}]


async def send(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_the_checklist_fills_as_the_model_updates_it(tmp_path: Path) -> None:
    gates = [anyio.Event(), anyio.Event(), anyio.Event()]
    steps = [
        Step(calls=[todo_call(STATES[0])]),
        Step(calls=[todo_call(STATES[1])], gate=gates[0]),
        Step(calls=[todo_call(STATES[2])], gate=gates[1]),
        Step(text="all done", gate=gates[2]),
    ]
    app = make_runtime_app(steps, tmp_path, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        panel = app.main.todo_panel
        assert not panel.display  # no list yet: hidden
        await send(pilot, "fix the parser")
        for n, expected in enumerate(DRAWN):
            await wait_for(pilot, lambda e=expected: shown(panel) == e, f"state {n + 1}")  # type: ignore[misc]
            await pilot.pause()
            assert screen_lines(panel) == expected
            gates[n].set()
        await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run's end")
        await pilot.click(TodoPanel)
        await wait_for(pilot, lambda: panel.collapsed, "collapsed by a click")
        await pilot.pause()
        assert screen_lines(panel) == ["todo 2/3 · now: Run the tests  (f8: expand)"]
        await pilot.click(TodoPanel)
        await wait_for(pilot, lambda: not panel.collapsed, "expanded")
        await app.action_quit()


async def test_a_long_item_is_cut_at_the_width_and_a_long_list_keeps_the_step_in_view() -> None:
    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield TodoPanel(id="todo")

    app = One()
    async with app.run_test(size=(40, 20)) as pilot:
        panel = app.query_one(TodoPanel)
        items = [TodoItem(content=f"step {n} " + "word " * 20, status="done") for n in range(12)]
        items[9] = TodoItem(content="the one now", status="in_progress")
        panel.show_items(items)
        await pilot.pause()
        lines = screen_lines(panel)
        assert all(len(line) <= 40 for line in lines)
        assert lines[0] == "… 4 above" and "▶ the one now" in lines
        assert lines[1].startswith("☑ step 4 word") and lines[1].endswith("…")
        panel.show_items([])
        await pilot.pause()
        assert not panel.display


async def test_continue_shows_the_list_again_and_compaction_keeps_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = env_for(tmp_path)
    first = make_runtime_app(
        [Step(calls=[todo_call(STATES[0])]), Step(calls=[todo_call(STATES[1])]), Step(text="paused here")],
        ws,
        env,
        options={"no_session": False},
    )
    async with first.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: first.ready)
        await send(pilot, "fix the parser")
        await wait_for(pilot, lambda: first.agent.last_outcome is not None, "the run's end")
        assert shown(first.main.todo_panel) == DRAWN[1]
        await first.action_quit()
    model = ScriptedModel([Step(text="Goals: fix the parser."), Step(text="going on")], name="scripted")
    runtime = build_runtime(Options(workspace=ws, continue_session=True), model=model, env=env)
    app: OwlApp = owl_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        panel = app.main.todo_panel
        await wait_for(pilot, lambda: shown(panel) == DRAWN[1], "the resumed list")
        await send(pilot, "/compact")
        await wait_for(pilot, lambda: len(model.requests) == 1, "the summary request")
        store = runtime.store
        assert store is not None
        await wait_for(pilot, lambda: store.compaction() is not None, "the compaction recorded")
        await send(pilot, "go on")
        await wait_for(pilot, lambda: len(model.requests) == 2, "the next request")
        summary = str(getattr(model.requests[1].messages[0], "text", ""))
        for content, status in STATES[1]:
            assert f"- [{status}] {content}" in summary
        assert shown(panel) == DRAWN[1]
        await app.action_quit()


def test_plain_mode_prints_the_list_when_it_changes() -> None:
    lines: list[str] = []
    printer = PlainPrinter(lines.append)
    printer(TodoEvent(items=[TodoItem(content=c, status=s) for c, s in STATES[1]]))  # type: ignore[arg-type]
    assert lines == ["· todo 1/3", "  ☑ Read the parser", "  ▶ Fix split()", "  ☐ Run the tests"]
    printer(TodoEvent(items=[TodoItem(content=c, status=s) for c, s in STATES[1]]))  # type: ignore[arg-type]
    assert len(lines) == 4  # the same list again: not printed twice
    assert (
        summarize_args("todo", {"items": [{"content": c, "status": s} for c, s in STATES[1]]}) == "1/3 done"
    )
    printer(TodoEvent(items=[TodoItem(content="a\x1b[2Jb", status="pending")]))
    assert lines[-1] == "  ☐ ab"  # escapes never reach the terminal
