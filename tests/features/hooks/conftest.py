"""Real hook scripts (bash and Python, as Claude Code's documentation writes them) and a runtime
built the way a user's session is (``build_runtime`` with a scripted model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.events import Event
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import ScriptedModel


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.ws.mkdir()
        self.home = root / "home"
        self.home.mkdir()
        self.cfg_dir = root / "cfg" / "owltui"
        self.cfg_dir.mkdir(parents=True)
        self.warnings: list[str] = []
        self.events: list[Event] = []

    @property
    def env(self) -> dict[str, str]:
        import os

        return {
            "XDG_CONFIG_HOME": str(self.root / "cfg"),
            "XDG_DATA_HOME": str(self.root / "data"),
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }

    def script(self, name: str, text: str) -> Path:
        path = self.root / "scripts" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
        return path

    def config(self, text: str) -> None:
        (self.cfg_dir / "config.toml").write_text(text)

    def claude_settings(self, where: Path, hooks: dict[str, Any]) -> Path:
        path = where / ".claude" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": hooks}))
        return path

    def runtime(self, model: ScriptedModel, **opts: Any) -> Runtime:
        opts.setdefault("no_session", True)
        opts.setdefault("interactive", False)
        rt = build_runtime(
            Options(workspace=self.ws, **opts), model=model, env=self.env, warn=self.warnings.append
        )
        rt.emitter.subscribe(self.events.append)
        return rt

    def hook_ends(self) -> list[dict[str, Any]]:
        return [e.wire() for e in self.events if e.type == "hook_end"]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


async def run_prompt(rt: Runtime, text: str) -> None:
    async with rt:
        rt.agent.prompt(text)
        await rt.wait_settled()


def model_saw(model: ScriptedModel) -> str:
    """Everything the model was sent, as one text (tool results and reminders included)."""
    return "\n".join(json.dumps(m.model_dump(mode="json")) for view in model.views for m in view)
