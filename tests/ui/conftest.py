"""Fixtures for UI tests: an app around a scripted model, and helpers to wait without sleeping."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from textual.pilot import Pilot

from owltui.agent.pause import GATE
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.testing.host import LocalRuntime
from owltui.testing.scripted import ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.app_options import AppOptions
from owltui.ui.themes.loader import PACKAGE_THEMES

SIZE = (100, 32)
WORKSPACE = Path("/srv/project")  # shown in the welcome line (snapshots): the same everywhere


def owl_app(host: Any, **kw: Any) -> OwlApp:
    """``OwlApp(host, AppOptions(**kw))`` (``host``: a runtime, or a ``Boot``) with the tests' defaults:
    the shipped themes, a fixed pause time, a clock that stands still and Alt+Enter told apart."""
    kw.setdefault("theme_dirs", [PACKAGE_THEMES])
    kw.setdefault("elapsed", lambda: 12.0)
    kw.setdefault("clock", lambda: 100.0)  # the status bar's run timer stands still: 0s, one frame
    kw.setdefault("alt_enter", True)
    return OwlApp(host, AppOptions(**kw))


def make_app(
    steps: list[Step] | None = None, *, tools: list[Any] | None = None, workspace: Path = WORKSPACE, **kw: Any
) -> OwlApp:
    runtime = LocalRuntime(ScriptedModel(steps or [], name="scripted"), tools=tools, workspace=workspace)
    return owl_app(runtime, **kw)


async def wait_for(
    pilot: Pilot[Any], cond: Callable[[], bool], what: str = "condition", limit: int = 400
) -> None:
    """Let the app process messages until ``cond()`` holds (bounded by a number of rounds)."""
    for _ in range(limit):
        if cond():
            return
        await pilot.pause()
    raise AssertionError(f"timed out waiting for {what}")


def texts(app: OwlApp, cls: type) -> list[str]:
    return [getattr(w, "text", "") for w in app.conversation.query(cls)]


@pytest.fixture(autouse=True)
def _open_gate() -> Any:
    yield
    GATE.resume()
    GATE.parked.clear()


@pytest.fixture
def tmp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


class SlowParams(BaseModel):
    text: str = ""


class SlowTool:
    """A test tool: streams two progress lines, then waits on ``release`` (if set) before finishing."""

    name = "slow"
    description = "test tool"
    params = SlowParams
    read_only = False

    def __init__(self) -> None:
        self.release: anyio.Event | None = None
        self.calls: list[str] = []

    async def run(self, args: SlowParams, ctx: ToolContext) -> ToolOutput:
        self.calls.append(args.text)
        ctx.progress("line one\n")
        ctx.progress("line two\n")
        if self.release is not None:
            await self.release.wait()
        return ToolOutput(f"done: {args.text}")


def make_runtime_app(
    steps: list[Step],
    workspace: Path,
    env: dict[str, str],
    *,
    tools: list[Any] | None = None,
    warn: Callable[[str], None] | None = None,
    options: dict[str, Any] | None = None,
    **kw: Any,
) -> OwlApp:
    """An app around the real runtime (``build_runtime``) and a scripted model; ``options`` are more
    ``Options`` fields (no session unless ``no_session=False``), ``kw`` go to ``owl_app``."""
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options

    chosen = Options(**{"no_session": True, "workspace": workspace, **(options or {})})
    runtime = build_runtime(
        chosen, model=ScriptedModel(steps, name="scripted"), env=env, tools=tools, warn=warn
    )
    return owl_app(runtime, **kw)
