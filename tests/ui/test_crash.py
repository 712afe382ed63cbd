"""An exception nothing in the TUI caught, on the real launch path (``launch``, the Boot, the real
runtime with a session): the exit code is 1, stderr has one line naming the error and the crash log
(no traceback on the screen), the log holds the traceback, what was queued and the input's draft
are printed, the session file is closed and the resume line follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from owltui.session.runtime.options import Options
from owltui.testing.scripted import ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.app_options import AppOptions
from owltui.ui.boot import Boot
from owltui.ui.launch import launch
from tests.ui.conftest import wait_for
from tests.ui.test_input import type_text


def test_a_key_that_raises_ends_with_one_line_a_log_and_nothing_lost(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import owltui.session.runtime.build as runtime_mod
    from owltui.ui.control import actions

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    real = runtime_mod.build_runtime
    built: list[Any] = []

    def build(options: Options, warn: Any = None, **kw: Any) -> Any:
        steps = [Step(text="working"), Step(text="ok"), Step(text="ok")]
        model = ScriptedModel(steps, name="scripted")
        runtime = real(options, warn=warn, model=model, env={"HOME": str(tmp_path)}, **kw)
        built.append(runtime)
        return runtime

    def boom(_app: Any) -> None:
        raise RuntimeError("boom in the pause key")

    monkeypatch.setattr(runtime_mod, "build_runtime", build)
    monkeypatch.setattr(actions, "toggle_pause", boom)

    def crashes(boot: Boot, options: AppOptions) -> OwlApp:
        app = OwlApp(boot, options)

        async def pilot(p: Any) -> None:
            await wait_for(p, lambda: app.boot is None and app.ready, "attached", limit=5000)
            app.runtime.gate.pause()  # the run waits at its first delivery point: what is sent queues
            await type_text(p, "go")
            await p.press("enter")
            await wait_for(p, lambda: app.agent.running, "the run")
            await type_text(p, "queued one")
            await p.press("enter")
            await wait_for(p, lambda: len(app.runtime.inbox) == 1, "queued")
            await type_text(p, "my draft")
            await p.press("f2")  # raises

        app.run = lambda: OwlApp.run(app, headless=True, auto_pilot=pilot)  # type: ignore[method-assign]
        return app

    code = launch(crashes, Options(workspace=workspace))
    out, err = capsys.readouterr()
    assert code == 1
    lines = err.splitlines()
    assert "Traceback" not in err
    first = [line for line in lines if line.startswith("owltui: internal error")]
    assert len(first) == 1
    assert first[0].startswith(
        "owltui: internal error (RuntimeError: boom in the pause key); the traceback is in "
    )
    log = Path(first[0].rsplit(" ", 1)[1])
    assert log.parent == tmp_path / "data" / "owltui" and log.name.startswith("crash-")
    text = log.read_text()
    assert "Traceback" in text and "boom in the pause key" in text and "queued one" in text
    assert lines[lines.index(first[0]) + 1 :] == [
        "owltui: not sent (typed or queued when OwlTUI crashed):",
        "queued one",
        "my draft",
    ]
    (runtime,) = built
    assert runtime.store is not None and runtime.store.closed, "the session file is closed"
    assert f"owltui --resume {runtime.session_id}" in out
