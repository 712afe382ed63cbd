"""Fixtures for UI tests: an app around a scripted model, and helpers to wait without sleeping."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from owltui.agent.pause import GATE
from owltui.agent.scripted import ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.host import LocalRuntime

SIZE = (100, 32)


def make_app(steps: list[Step] | None = None, *, tools: list[Any] | None = None, **kw: Any) -> OwlApp:
    runtime = LocalRuntime(ScriptedModel(steps or [], name="scripted"), tools=tools)
    kw.setdefault("theme_dirs", [])
    kw.setdefault("elapsed", lambda: 12.0)
    return OwlApp(runtime, **kw)


async def wait_for(pilot: Pilot[Any], cond: Callable[[], bool], what: str = "condition",
                   limit: int = 400) -> None:
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
