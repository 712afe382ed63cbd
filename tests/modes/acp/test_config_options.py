"""The session's config options (mode, model, steering, paused) and setting them through the command
layer, on a real runtime; and ``/mode`` and ``/steering`` as typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError

from owltui.modes.acp.config_options import config_options, set_config_option
from owltui.testing.scripted import Call, Step
from tests.modes.acp.kit import commands, env_for, runtime

pytestmark = pytest.mark.anyio


def by_id(options: list[Any]) -> dict[str, dict[str, Any]]:
    return {o.id: o.model_dump(by_alias=True, exclude_none=True) for o in options}


async def test_the_options_and_their_values(tmp_path: Path) -> None:
    env = {**env_for(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-test"}
    rt = runtime(tmp_path, [], env=env)
    async with rt:
        opts = by_id(config_options(rt))
        assert list(opts) == ["mode", "model", "steering", "paused"]
        assert opts["mode"]["category"] == "mode" and opts["mode"]["currentValue"] == "ask"
        assert {"ask", "edits", "yolo", "read-only"} <= {o["value"] for o in opts["mode"]["options"]}
        models = [o["value"] for o in opts["model"]["options"]]
        assert (
            opts["model"]["category"] == "model" and models[0] == "scripted" == opts["model"]["currentValue"]
        )
        assert any(m.startswith("anthropic:") for m in models)  # the key is present
        assert not any(m.startswith("openai:") for m in models)  # no key
        assert opts["steering"]["currentValue"] == "batch"
        assert opts["paused"] == {
            "type": "select",
            "id": "paused",
            "name": "Paused",
            "currentValue": "off",
            "options": [{"value": "off", "name": "running"}, {"value": "on", "name": "paused"}],
        }
        assert by_id(config_options(rt, boolean=True))["paused"]["type"] == "boolean"


async def test_setting_each_goes_through_the_commands(tmp_path: Path) -> None:
    env = {**env_for(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-test"}
    rt = runtime(tmp_path, [], env=env)
    cmds = commands(rt)
    async with rt:
        after = by_id(await set_config_option(cmds, "mode", "edits"))
        assert after["mode"]["currentValue"] == "edits" and rt.permissions is not None
        assert rt.permissions.mode == "edits"
        after = by_id(await set_config_option(cmds, "steering", "immediate"))
        assert after["steering"]["currentValue"] == "immediate" and rt.agent.config.steering == "immediate"
        target = next(o["value"] for o in after["model"]["options"] if o["value"].startswith("anthropic:"))
        after = by_id(await set_config_option(cmds, "model", target))
        assert rt.model_label == target == after["model"]["currentValue"]
        try:
            after = by_id(await set_config_option(cmds, "paused", True, boolean=True))
            assert after["paused"]["currentValue"] is True and rt.gate.paused
        finally:
            after = by_id(await set_config_option(cmds, "paused", "off"))
        assert after["paused"]["currentValue"] == "off" and not rt.gate.paused


@pytest.mark.parametrize(
    ("config_id", "value"),
    [
        ("mode", "reckless"),
        ("steering", "sometimes"),
        ("model", "nobody:nothing"),
        ("paused", "maybe"),
        ("x", "y"),
    ],
)
async def test_bad_ids_and_values_are_invalid_params(tmp_path: Path, config_id: str, value: str) -> None:
    rt = runtime(tmp_path, [])
    cmds = commands(rt)
    async with rt:
        with pytest.raises(RequestError) as bad:
            await set_config_option(cmds, config_id, value)
        assert bad.value.code == -32602 and bad.value.data is not None and bad.value.data["reason"]
        assert rt.permissions is not None and rt.permissions.mode == "ask"


async def test_mode_set_mid_run_decides_the_next_call(tmp_path: Path) -> None:
    """Set while a run waits: the write that follows runs without asking in ``edits``."""
    hold = anyio.Event()
    steps = [Step(gate=hold, calls=[Call("write", {"path": "a.txt", "content": "x"})]), Step(text="ok")]
    rt = runtime(tmp_path, steps)
    cmds = commands(rt)
    async with rt:
        assert rt.agent.prompt("write")
        await set_config_option(cmds, "mode", "edits")
        seen: list[str] = []
        settled = anyio.Event()

        def watch(ev: Any) -> None:
            if ev.type in ("approval_request", "agent_end"):
                seen.append(ev.type)
                settled.set()

        rt.emitter.subscribe(watch)
        hold.set()
        with anyio.fail_after(20):  # in ask mode the write waits for an answer: approval_request
            await settled.wait()
        assert seen == ["agent_end"]
        assert (rt.workspace / "a.txt").read_text() == "x"


async def test_slash_mode_and_steering(tmp_path: Path) -> None:
    rt = runtime(tmp_path, [])
    cmds = commands(rt)
    async with rt:
        reply = cmds.slash("/mode read-only")
        assert reply is not None and reply.ok and reply.text == "permission mode: read-only"
        bad = cmds.slash("/mode wild")
        assert bad is not None and not bad.ok
        picked = cmds.slash("/steering")
        assert (
            picked is not None and picked.pick is not None and picked.pick.options == ["batch", "immediate"]
        )
        reply = cmds.slash("/steering immediate")
        assert reply is not None and reply.ok and rt.agent.config.steering == "immediate"
