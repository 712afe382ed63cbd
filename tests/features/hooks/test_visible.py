"""Every hook run is visible: ``hook_start``/``hook_end`` lines in print mode's JSONL, a compact line
on stderr in text mode (event, matcher, decision, time)."""

from __future__ import annotations

import io
import json

import pytest

from owltui.modes.print_mode import print_run
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.features.hooks.conftest import World

pytestmark = pytest.mark.anyio


def _setup(world: World) -> None:
    hook = world.script("deny.sh", "#!/bin/bash\necho 'not today' >&2\nexit 2\n")
    world.config(
        f'[[hooks.PreToolUse]]\nmatcher = "bash"\nhooks = [{{ type = "command", command = "{hook}" }}]\n'
    )


def _model() -> ScriptedModel:
    return ScriptedModel([Step(calls=[Call("bash", {"command": "echo hi"})]), Step(text="done")])


async def test_jsonl_carries_hook_start_and_hook_end(world: World) -> None:
    _setup(world)
    out = io.BytesIO()
    await print_run(
        Options(workspace=world.ws, no_session=True, yes=True),
        "go",
        "jsonl",
        model=_model(),
        env=world.env,
        out=out,
        err=io.StringIO(),
        handle_signals=False,
    )
    events = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    start = next(e for e in events if e["type"] == "hook_start")
    end = next(e for e in events if e["type"] == "hook_end")
    assert start["hook_event"] == "PreToolUse" and start["matcher"] == "bash"
    assert end["decision"] == "deny" and isinstance(end["duration_s"], float)
    assert events.index(start) < events.index(end)


async def test_text_mode_prints_one_compact_line(world: World) -> None:
    _setup(world)
    err = io.StringIO()
    await print_run(
        Options(workspace=world.ws, no_session=True, yes=True),
        "go",
        model=_model(),
        env=world.env,
        out=io.BytesIO(),
        err=err,
        handle_signals=False,
    )
    lines = [line for line in err.getvalue().splitlines() if "hook PreToolUse" in line]
    assert len(lines) == 1 and lines[0].startswith("· hook PreToolUse [bash]: deny (")
