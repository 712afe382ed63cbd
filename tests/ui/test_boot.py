"""The first frame comes before the runtime (nor can MCP servers delay it).

``OwlApp(Boot(start))`` draws the boot screen (welcome line, input, status, footer) at once and builds
the runtime in a thread; what is typed meanwhile is kept: the editor's text moves into the real input
with its cursor, and lines sent (Enter, Ctrl+J) are sent in order once the runtime is ready. Quitting
on the first frame closes what the thread built; a start-up error ends the app with one line, and
what was typed is printed after it, not lost. The
modules on the way to the first frame import no pydantic, agent, tools, httpx or markdown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.messages import UserMessage
from owltui.session.runtime.options import Options
from owltui.testing.host import LocalRuntime
from owltui.testing.scripted import ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.app_options import AppOptions
from owltui.ui.boot import Boot, BootView, Started
from owltui.ui.launch import configured_theme, launch
from owltui.ui.widgets.blocks import InputBlock
from owltui.ui.widgets.main_screen import MainScreen
from tests.ui.conftest import SIZE, WORKSPACE, owl_app, texts, wait_for

pytestmark = pytest.mark.anyio

HEAVY = (
    "pydantic",
    "owltui.agent",
    "owltui.tools",
    "owltui.session.runtime.runtime",
    "owltui.session.commands",
    "owltui.providers.http.stream",
    "httpx",
    "anyio",
    "rich.markdown",
    "markdown_it",
    "mcp",
)


def test_first_frame_path_imports_nothing_heavy(tmp_path: Path) -> None:
    """What the CLI and the app import before the first frame (a fresh interpreter)."""
    code = (
        "import sys, json, os\n"
        "import owltui.cli as cli\n"
        "options = cli.options_from(cli.build_parser().parse_args(['--provider', 'demo']))\n"
        "from owltui.ui.app import OwlApp\n"
        "from owltui.ui.app_options import AppOptions\n"
        "from owltui.ui.boot import Boot\n"
        "from owltui.ui.launch import configured_theme\n"
        "app = OwlApp(Boot(lambda: None, options.workspace), AppOptions(theme=configured_theme(os.environ)))\n"
        "list(app.compose())\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))\n"
    )
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert json.loads(out.stdout) == []


# the modules on the way to the first frame, and the light ones they import (each: stdlib and Textual only)
FIRST_FRAME = {
    "owltui.ui.app",
    "owltui.ui.app_options",
    "owltui.ui.boot",
    "owltui.ui.launch",
    "owltui.ui.look",
    "owltui.ui.main_actions",
    "owltui.ui.textual_compat",
    "owltui.ui.themes.choice",
    "owltui.ui.themes.loader",
    "owltui.session.paths",  # (``launch``: where the config file is)
}


def test_first_frame_modules_import_only_textual_and_the_standard_library(tmp_path: Path) -> None:
    """A fresh interpreter that has Textual's app and widgets loaded: importing the first frame's
    modules loads nothing but them, their packages and the standard library."""
    code = (
        "import sys, json\n"
        "import textual.app, textual.containers, textual.theme, textual.widgets\n"
        "from textual.widgets import Footer, Static, TextArea\n"
        "before = set(sys.modules)\n"
        "import owltui.ui.app, owltui.ui.boot, owltui.ui.launch, owltui.ui.look, owltui.ui.themes.loader\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path, timeout=60
    )
    allowed = {*sys.stdlib_module_names, "textual", "rich"}  # (Textual's own modules it loads lazily)
    loaded = [m for m in json.loads(out.stdout) if m.split(".")[0] not in allowed]
    packages = {"owltui", "owltui.ui", "owltui.ui.themes", "owltui.session"}
    assert set(loaded) - packages <= FIRST_FRAME, sorted(set(loaded) - packages - FIRST_FRAME)


def test_configured_theme_is_read_cheaply(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert configured_theme(env) is None
    (tmp_path / "owltui").mkdir()
    (tmp_path / "owltui" / "config.toml").write_text('theme = "owl-light"\n')
    assert configured_theme(env) == "owl-light"
    assert configured_theme({**env, "OWLTUI_THEME": "owl-forest"}) == "owl-forest"  # as the config does
    (tmp_path / "owltui" / "config.toml").write_text("theme = [broken\n")
    assert configured_theme(env) is None  # the full check in the thread says what is wrong


class Gate:
    """A start function that waits for the test (the runtime "is being built")."""

    def __init__(self, runtime: Any = None, error: Exception | None = None) -> None:
        self.go = threading.Event()
        self.runtime = runtime
        self.error = error
        self.closed = 0

    def __call__(self) -> Started:
        assert self.go.wait(20)
        if self.error is not None:
            raise self.error
        return Started(self.runtime, close=self._close)

    def _close(self) -> None:
        self.closed += 1


def deferred(start: Gate) -> tuple[OwlApp, Boot]:
    """An app in its boot phase, building its runtime with ``start``; and its ``Boot``."""
    boot = Boot(start, WORKSPACE)
    return owl_app(boot), boot


async def test_typed_on_the_first_frame_is_kept_and_sent_in_order() -> None:
    model = ScriptedModel([Step(text="one"), Step(text="two")], name="scripted")
    start = Gate(LocalRuntime(model, workspace=WORKSPACE))
    app, phase = deferred(start)
    async with app.run_test(size=SIZE) as pilot:
        boot = app.query_one(BootView)
        assert app.boot is phase and not phase.taken
        assert "starting" in boot.welcome and "/srv/project" in boot.welcome
        await pilot.press(*"first question", "enter")
        await pilot.press(*"and then this", "ctrl+j")
        await pilot.press(*"a draft")
        await wait_for(pilot, lambda: len(boot.sent) == 2, "both lines kept")
        assert boot.sent == [("first question", "prompt"), ("and then this", "follow_up")]
        start.go.set()
        await wait_for(pilot, lambda: app.boot is None and isinstance(app.screen, MainScreen), "main screen")
        assert app.input.text == "a draft" and app.input.cursor_location == (0, 7)
        assert app.focused is app.input
        await wait_for(pilot, lambda: model.calls >= 2 and not app.agent.running, "both sent")
        users = [m for m in model.requests[-1].messages if isinstance(m, UserMessage)]
        assert [(m.text, m.lane) for m in users][:2] == [
            ("first question", "user"),
            ("and then this", "follow_up"),
        ]
        assert "first question" in texts(app, InputBlock)
        assert not boot.is_attached, "the first frame is gone"
        await app.action_quit()
    assert phase.taken and start.closed == 0  # the app took the runtime: it closed it itself


async def test_quit_on_the_first_frame_leaves_the_runtime_to_launch() -> None:
    """Quitting before the runtime is built: the thread still finishes, the app never takes the
    runtime, and it is left for ``launch`` to close (``test_launch_closes_an_untaken_runtime``)."""
    start = Gate(LocalRuntime(ScriptedModel([]), workspace=WORKSPACE))
    app, boot = deferred(start)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: boot.thread is not None, "the start-up thread")
        await pilot.press("ctrl+c")  # an empty editor: quits
        await wait_for(pilot, lambda: app.quitting, "quitting")
    start.go.set()
    boot.join(20)
    assert boot.started is not None and boot.started.runtime is start.runtime
    assert not boot.taken and app.boot is boot and start.closed == 0


async def test_ctrl_c_on_the_first_frame_clears_first() -> None:
    start = Gate(LocalRuntime(ScriptedModel([]), workspace=WORKSPACE))
    app, _boot = deferred(start)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"oops", "ctrl+c")
        view = app.query_one(BootView)
        assert view.editor.text == "" and not app.quitting
        start.go.set()
        await wait_for(pilot, lambda: app.boot is None, "attached")
        await app.action_quit()


async def test_start_error_ends_the_app_keeping_what_was_typed() -> None:
    start = Gate(error=RuntimeError("no API key for openai"))
    app, boot = deferred(start)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"a long prompt", "enter", *"half typed")
        await wait_for(pilot, lambda: len(app.query_one(BootView).sent) == 1, "sent on the first frame")
        start.go.set()
        await wait_for(pilot, lambda: app.quitting, "the app ends")
    assert app.return_value == 1 and isinstance(boot.error, RuntimeError)
    assert boot.unsent == ["a long prompt", "half typed"]  # launch prints them (below)


def test_launch_start_error_is_one_line_and_keeps_what_was_typed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``launch`` end to end with a headless app: the build fails after the first frame -> one line."""
    import owltui.session.runtime.build as runtime_mod

    def failing(options: Options, warn: Any = None, **_kw: Any) -> Any:
        warn("an early warning")
        raise RuntimeError("config file /x: field 'theme': bad")

    monkeypatch.setattr(runtime_mod, "build_runtime", failing)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))

    def headless(boot: Boot, options: AppOptions) -> OwlApp:
        app = OwlApp(boot, options)
        app.run = lambda: OwlApp.run(app, headless=True)  # type: ignore[method-assign]
        return app

    assert launch(headless, Options(no_session=True, workspace=tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "owltui: config file /x: field 'theme': bad"
    assert "owltui: warning: an early warning" in err and "Traceback" not in err

    hold = threading.Event()

    def failing_later(options: Options, warn: Any = None, **_kw: Any) -> Any:
        assert hold.wait(20)
        raise RuntimeError("no API key for openai")

    def typed_then_fails(boot: Boot, options: AppOptions) -> OwlApp:
        app = OwlApp(boot, options)

        async def pilot(p: Any) -> None:  # type, then let the build fail
            await p.press(*"my prompt", "enter", *"more")
            boot = app.query_one(BootView)
            await wait_for(p, lambda: boot.editor.text == "more" and bool(boot.sent), "typed")
            hold.set()
            await wait_for(p, lambda: app.quitting, "the app ends")

        app.run = lambda: OwlApp.run(app, headless=True, auto_pilot=pilot)  # type: ignore[method-assign]
        return app

    monkeypatch.setattr(runtime_mod, "build_runtime", failing_later)
    assert launch(typed_then_fails, Options(no_session=True, workspace=tmp_path)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-4:] == [
        "owltui: no API key for openai",
        "owltui: not sent (typed while OwlTUI was starting):",
        "my prompt",
        "more",
    ]


def test_launch_closes_an_untaken_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Quit before the runtime is attached: launch waits for the thread and closes the runtime."""
    import owltui.session.runtime.build as runtime_mod

    closed: list[bool] = []
    go = threading.Event()
    real = runtime_mod.build_runtime

    def build(options: Options, warn: Any = None, **kw: Any) -> Any:
        assert go.wait(20)
        rt = real(options, warn=warn, model=ScriptedModel([]), env={"HOME": str(tmp_path)}, **kw)
        original = rt.aclose

        async def aclose() -> None:
            closed.append(True)
            await original()

        rt.aclose = aclose  # type: ignore[method-assign]
        return rt

    monkeypatch.setattr(runtime_mod, "build_runtime", build)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))

    def quits_at_once(boot: Boot, options: AppOptions) -> OwlApp:
        app = OwlApp(boot, options)

        async def pilot(p: Any) -> None:
            await wait_for(p, lambda: boot.thread is not None, "the start-up thread")
            await app.action_quit()
            go.set()  # the runtime is built after the app has quit

        app.run = lambda: OwlApp.run(app, headless=True, auto_pilot=pilot)  # type: ignore[method-assign]
        return app

    assert launch(quits_at_once, Options(no_session=True, workspace=tmp_path)) == 0
    assert closed == [True]
