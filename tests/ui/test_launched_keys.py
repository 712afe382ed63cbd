"""Every key binding, pressed on an app launched the way ``owltui`` launches it: the first frame on
Textual's default screen, the real runtime (``build_runtime``, a scripted model) built in the start-up
thread and attached after, the main screen in a mode of its own. ``CASES`` has one case per binding
id of ``owltui.session.commands.keys`` and each of its default keys is pressed: a binding added
without a case, or declared on the main screen, the input or the app without an id, fails here."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from textual.binding import Binding
from textual.command import CommandPalette

from owltui.session.commands.keys import BINDINGS, default_keys
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.boot import Boot, Started
from owltui.ui.widgets.blocks import InputBlock
from owltui.ui.widgets.history_search import HistorySearchScreen
from owltui.ui.widgets.main_screen import MainScreen
from owltui.ui.widgets.picker import PickerScreen
from owltui.ui.widgets.prompt_input import PromptInput
from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock
from tests.ui.conftest import SIZE, owl_app, wait_for
from tests.ui.test_input import type_text

pytestmark = pytest.mark.anyio


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }


def launched(steps: list[Step], workspace: Path, env: dict[str, str]) -> tuple[OwlApp, Boot]:
    """An app as ``launch`` makes it: a ``Boot`` whose start function builds the real runtime."""

    def start() -> Started:
        options = Options(no_session=True, workspace=workspace)
        runtime = build_runtime(options, model=ScriptedModel(steps, name="scripted"), env=env)
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, workspace)
    return owl_app(boot), boot


async def attached(pilot: Any, app: OwlApp, boot: Boot) -> None:
    """Until the runtime is built, taken and started; the main screen is not the default screen."""
    await wait_for(pilot, lambda: boot.thread is not None, "the start-up thread")
    await anyio.to_thread.run_sync(boot.join, 30)
    await wait_for(pilot, lambda: app.boot is None and app.ready, "the runtime attached")
    assert isinstance(app.screen, MainScreen) and app.default_screen is not app.main


@dataclass
class Case:
    """What a key needs (the model's steps; ``go`` holds the first one while it streams) and what
    pressing it must do."""

    run: Callable[[Any, OwlApp, str, anyio.Event], Awaitable[None]]
    steps: Callable[[anyio.Event], list[Step]] = field(default=lambda _go: [Step(text="ok")])
    quits: bool = False  # the key itself ends the app


def held(go: anyio.Event) -> list[Step]:
    return [Step(text="working", gate=go), Step(text="ok"), Step(text="ok"), Step(text="ok")]


async def running(pilot: Any, app: OwlApp) -> None:
    await type_text(pilot, "go")
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.agent.running, "the run")


async def ran(pilot: Any, app: OwlApp) -> None:
    """Send a prompt and wait until its run has ended."""
    await type_text(pilot, "go")
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.agent.last_outcome is not None, "the run")
    await app.agent.wait_idle()


def queued(app: OwlApp, lane: str) -> list[str]:
    return [item.text for item in app.runtime.inbox.items(lane)]  # type: ignore[arg-type]


async def send(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await type_text(pilot, "hello")
    await pilot.press(key)
    await wait_for(pilot, lambda: any(b.text == "hello" for b in app.conversation.query(InputBlock)), "sent")


async def follow_up(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await running(pilot, app)
    await type_text(pilot, "later")
    await pilot.press(key)
    await wait_for(pilot, lambda: queued(app, "follow_up") == ["later"], "a follow-up queued")
    go.set()


async def newline(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await type_text(pilot, "a")
    await pilot.press(key, "b")
    assert app.input.text == "a\nb"


async def pop_queue(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await running(pilot, app)
    await type_text(pilot, "steer")
    await pilot.press("enter")
    await wait_for(pilot, lambda: queued(app, "steer") == ["steer"], "queued")
    await pilot.press(key)
    await wait_for(pilot, lambda: app.input.text == "steer" and not queued(app, "steer"), "taken back")
    go.set()


async def abort(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await running(pilot, app)
    await pilot.press(key)
    await app.agent.wait_idle()
    assert app.agent.last_outcome is not None and app.agent.last_outcome.reason == "aborted"


async def clear(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await type_text(pilot, "draft")
    await pilot.press(key)
    assert app.input.text == "" and not app.quitting


async def eof(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: app.quitting, "quit on an empty input")


async def pause(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: app.runtime.gate.paused, "paused")
    await pilot.press(key)
    await wait_for(pilot, lambda: not app.runtime.gate.paused, "resumed")


async def require(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "the tool picker")
    await pilot.press("escape")
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back")


def asks(_go: anyio.Event) -> list[Step]:
    return [Step(calls=[Call("bash", {"command": "echo hi"})]), Step(text="done")]


async def approve(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await running(pilot, app)
    await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)), "the approval")
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.focused, ApprovalPrompt), "the approval focused")
    await pilot.press("n")
    await wait_for(pilot, lambda: not app.runtime.approvals.pending(), "answered")


def long_answer(_go: anyio.Event) -> list[Step]:
    return [Step(text="\n\n".join(f"line {i}" for i in range(120)))]


async def idle_after_long_answer(pilot: Any, app: OwlApp) -> None:
    await ran(pilot, app)
    await wait_for(pilot, lambda: app.conversation.max_scroll_y > 0, "a conversation to scroll")


async def follow(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await idle_after_long_answer(pilot, app)
    await pilot.press("pageup")
    await wait_for(pilot, lambda: not app.conversation.following, "scrolled away")
    await pilot.press(key)
    await wait_for(pilot, lambda: app.conversation.following, "following again")


async def scroll_up(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await idle_after_long_answer(pilot, app)
    top = app.conversation.scroll_y
    await pilot.press(key)
    await wait_for(pilot, lambda: app.conversation.scroll_y < top, "scrolled up")


async def scroll_down(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await idle_after_long_answer(pilot, app)
    app.conversation.scroll_home(animate=False)
    await wait_for(pilot, lambda: app.conversation.scroll_y == 0, "at the top")
    await pilot.press(key)
    await wait_for(pilot, lambda: app.conversation.scroll_y > 0, "scrolled down")


async def history_search(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, HistorySearchScreen), "the history search")
    await pilot.press("escape")
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back")


def reads(_go: anyio.Event) -> list[Step]:
    return [Step(calls=[Call("ls", {})]), Step(text="done")]


async def toggle_tool(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await ran(pilot, app)
    await wait_for(pilot, lambda: bool(app.conversation.query(ToolBlock)), "a tool block")
    block = app.conversation.query_one(ToolBlock)
    await wait_for(pilot, lambda: block.collapsed, "folded after success")
    await pilot.press(key)
    await wait_for(pilot, lambda: not block.collapsed, "expanded")


async def queue(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await pilot.press(key)  # idle, nothing queued: a note, and the app stays
    await wait_for(pilot, lambda: any(n.message == "nothing queued" for n in app._notifications), "the note")
    await running(pilot, app)
    await type_text(pilot, "queued")
    await pilot.press("enter")
    await wait_for(pilot, lambda: queued(app, "steer") == ["queued"], "queued")
    await pilot.press(key)
    panel = app.main.queue_panel
    await wait_for(pilot, lambda: panel.has_focus, "the queue panel focused")
    await pilot.press("d")  # one of the panel's own keys: delete
    await wait_for(pilot, lambda: not queued(app, "steer"), "deleted")
    go.set()


async def steer_now(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await running(pilot, app)
    await type_text(pilot, "now")
    await pilot.press(key)
    await wait_for(pilot, lambda: queued(app, "steer") == ["now"], "queued")
    assert app.runtime.inbox.items("steer")[0].immediate
    go.set()


async def palette(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    await pilot.press("escape")
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back")


def listed(_go: anyio.Event) -> list[Step]:
    return [
        Step(calls=[Call("todo", {"items": [{"content": "one", "status": "in_progress"}]})]),
        Step(text="ok"),
    ]


async def todo(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    await ran(pilot, app)
    panel = app.main.todo_panel
    await wait_for(pilot, lambda: panel.display and bool(panel.items), "the todo list shown")
    await pilot.press(key)
    await wait_for(pilot, lambda: panel.collapsed, "collapsed")
    await pilot.press(key)
    await wait_for(pilot, lambda: not panel.collapsed, "expanded again")


async def mode_key(pilot: Any, app: OwlApp, key: str, go: anyio.Event) -> None:
    plans = app.runtime.plans
    assert plans is not None and plans.mode == "ask"
    for expected in ("edits", "plan", "ask"):
        await pilot.press(key)
        await wait_for(pilot, lambda m=expected: plans.mode == m, f"mode {expected}")  # type: ignore[misc]


CASES: dict[str, Case] = {
    "send": Case(send),
    "follow_up": Case(follow_up, held),
    "newline": Case(newline),
    "pop_queue": Case(pop_queue, held),
    "abort": Case(abort, held),
    "clear": Case(clear),
    "eof": Case(eof, quits=True),
    "pause": Case(pause),
    "require": Case(require),
    "approve": Case(approve, asks),
    "follow": Case(follow, long_answer),
    "scroll_up": Case(scroll_up, long_answer),
    "scroll_down": Case(scroll_down, long_answer),
    "history_search": Case(history_search),
    "toggle_tool": Case(toggle_tool, reads),
    "queue": Case(queue, held),
    "steer_now": Case(steer_now, held),
    "palette": Case(palette),
    "todo": Case(todo, listed),
    "mode": Case(mode_key),
}


def declared() -> list[Binding]:
    """The bindings of the main screen, its input and the app (what ``[keys]`` can move)."""
    found: list[Binding] = []
    for owner in (MainScreen, PromptInput, OwlApp):
        found += [b for b in owner.BINDINGS if isinstance(b, Binding)]
    return found


def test_every_binding_has_a_case_and_an_id() -> None:
    assert set(CASES) == set(BINDINGS), "a binding id without a case here (or a case for none)"
    ids = [b.id for b in declared()]
    assert None not in ids, "a binding without an id: [keys] cannot move it and no case presses it"
    assert sorted(ids, key=str) == sorted(BINDINGS)
    for binding in declared():
        assert binding.id is not None and binding.key == ",".join(default_keys(binding.id)), binding.id


KEYS = [(bid, key) for bid in BINDINGS for key in default_keys(bid)]


@pytest.mark.parametrize(("bid", "key"), KEYS, ids=[f"{bid}-{key}" for bid, key in KEYS])
async def test_each_key_on_a_launched_app(tmp_path: Path, bid: str, key: str) -> None:
    case = CASES[bid]
    go = anyio.Event()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n")
    app, boot = launched(case.steps(go), workspace, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await attached(pilot, app, boot)
        await case.run(pilot, app, key, go)
        go.set()
        if not case.quits:
            assert app.is_running and not app.quitting, "the app is still up"
            await app.action_quit()
    assert app.return_code == 0


def test_no_query_from_the_app() -> None:
    """``app.query``/``app.query_one`` search Textual's default screen, which in a real launch is the
    first frame's, not the main screen: the product asks the main screen (``app.main``) instead."""
    root = Path(__file__).resolve().parents[2] / "owltui" / "ui"
    found = [
        f"{path.relative_to(root)}:{n}"
        for path in root.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bapp\.query(_one|_exactly_one|_children)?\(", line)
    ]
    assert found == []
