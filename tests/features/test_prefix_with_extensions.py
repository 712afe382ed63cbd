"""Every request extends the previous one byte for byte in a 20-round session that uses a skill (its
catalog in the system prompt, its SKILL.md read, its script run), a custom command (the first turn)
and hooks that add context (UserPromptSubmit with the prompt, PostToolUse after every bash call),
then ``/skill`` (a second turn): the system prompt and tools never change, and each request's
messages start with the previous request's messages, encoded the same."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.session.commands.host import LineFront
from owltui.session.commands.layer import Commands
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step

pytestmark = pytest.mark.anyio
ROUNDS = 20


def _workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "ws"
    skill = ws / ".agents" / "skills" / "notes"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Keep release notes. Use when asked for notes.\n---\n"
        "Run `sh scripts/show.sh N` for note N.\n"
    )
    (skill / "scripts" / "show.sh").write_text('echo "note $1"\n')
    (ws / ".owltui" / "commands").mkdir(parents=True)
    (ws / ".owltui" / "commands" / "notes.md").write_text(
        "---\ndescription: write the notes\n---\nWrite the release notes for $ARGUMENTS."
    )
    cfg = tmp_path / "cfg" / "owltui"
    cfg.mkdir(parents=True)
    post = tmp_path / "post.py"
    post.write_text(
        "import json, sys\nd = json.load(sys.stdin)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse', "
        "'additionalContext': 'lint ok after ' + d['tool_input']['command']}}))\n"
    )
    (cfg / "config.toml").write_text(
        '[[hooks.UserPromptSubmit]]\nhooks = [{ type = "command", command = "echo sprint 7" }]\n'
        '[[hooks.PostToolUse]]\nmatcher = "bash"\n'
        f'hooks = [{{ type = "command", command = "python3 {post}" }}]\n'
    )
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": os.environ["PATH"],
    }
    return ws, env


def _steps() -> list[Step]:
    steps = [Step(calls=[Call("read", {"path": ".agents/skills/notes/SKILL.md"})])]
    steps += [
        Step(calls=[Call("bash", {"command": f"sh .agents/skills/notes/scripts/show.sh {n}"})])
        for n in range(1, ROUNDS - 1)
    ]
    return [*steps, Step(text="notes written"), Step(text="skill turn done")]


async def test_the_prefix_holds_across_a_session_with_a_skill_a_command_and_hooks(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path)
    model = ScriptedModel(_steps())
    rt = build_runtime(Options(workspace=ws, no_session=True, yes=True), model=model, env=env)
    said: list[str] = []
    commands = Commands.with_custom(rt, LineFront(), said.append, env)
    async with rt:
        reply = commands.slash("/notes v1.2")
        assert reply is not None and reply.ok, reply
        await rt.wait_settled()
        reply = commands.slash("/skill notes for v1.3")
        assert reply is not None and reply.ok, reply
        await rt.wait_settled()
    assert not said and len(model.requests) == ROUNDS + 1
    wire = OpenAICompatModel("m", api_key="k", base_url="http://127.0.0.1:9/v1")
    sent_then = [dataclasses.replace(r, messages=v) for r, v in zip(model.requests, model.views, strict=True)]
    bodies: list[dict[str, Any]] = [json.loads(wire.encode_body(r)) for r in sent_then]
    first = bodies[0]
    assert (
        "## Skills" in first["messages"][0]["content"]
        and "notes: Keep release notes" in first["messages"][0]["content"]
    )
    for before, now in itertools.pairwise(bodies):
        assert {k: v for k, v in now.items() if k != "messages"} == {
            k: v for k, v in before.items() if k != "messages"
        }
        old = before["messages"]
        assert len(now["messages"]) > len(old)
        assert json.dumps(now["messages"][: len(old)]) == json.dumps(old)
    sent = json.dumps(bodies[-1]["messages"])
    assert "Write the release notes for v1.2." in sent and "sprint 7" in sent
    assert sent.count("lint ok after sh .agents/skills/notes/scripts/show.sh") == ROUNDS - 2
    assert "note 18" in sent and "[skill notes, activated by the user" in sent
