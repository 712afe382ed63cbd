"""What the translation, config and extension tests share: a real runtime on the scripted model in a
temporary workspace, and the command layer a front end drives it with."""

from __future__ import annotations

from pathlib import Path

from owltui.modes.acp.session import AcpFront
from owltui.session.commands.layer import Commands
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import ScriptedModel, Step
from tests.ui.test_tools_approvals import env_for


def runtime(tmp_path: Path, steps: list[Step], env: dict[str, str] | None = None, **opts: object) -> Runtime:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    options = Options(workspace=ws, **opts)  # type: ignore[arg-type]
    return build_runtime(
        options, model=ScriptedModel(steps), env=env if env is not None else env_for(tmp_path)
    )


def commands(rt: Runtime) -> Commands:
    return Commands(rt, AcpFront())
