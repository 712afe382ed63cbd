"""Project instructions: AGENTS.md (else CLAUDE.md) and the user's AGENTS.md in the system prompt with
stable bytes; a subdirectory's AGENTS.md joins the conversation once, when a file there is first read."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.agent.messages import UserMessage
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step

pytestmark = pytest.mark.anyio


def _runtime(tmp_path: Path, model: ScriptedModel, env: dict[str, str] | None = None):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = env or {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    return build_runtime(Options(workspace=ws, yes=True, no_session=True), model=model, env=env)


def test_root_agents_md_and_user_file_in_the_system_prompt(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("Run tests with `make check`.\n")
    (ws / "CLAUDE.md").write_text("ignored when AGENTS.md exists\n")
    (tmp_path / "cfg" / "owltui").mkdir(parents=True)
    (tmp_path / "cfg" / "owltui" / "AGENTS.md").write_text("Answer in British English.\n")
    prompt = _runtime(tmp_path, ScriptedModel()).agent.config.system_prompt
    assert "Run tests with `make check`." in prompt and "Answer in British English." in prompt
    assert "ignored when" not in prompt
    assert prompt.index("British") < prompt.index("make check")  # the project's instructions come last
    assert _runtime(tmp_path, ScriptedModel()).agent.config.system_prompt == prompt  # stable bytes


def test_claude_md_is_the_fallback(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "CLAUDE.md").write_text("Use tabs.\n")
    assert "Use tabs." in _runtime(tmp_path, ScriptedModel()).agent.config.system_prompt


def test_no_instructions_no_section(tmp_path: Path) -> None:
    prompt = _runtime(tmp_path, ScriptedModel()).agent.config.system_prompt
    assert "## Project instructions" not in prompt and "## The user" not in prompt


async def test_subdirectory_agents_md_joins_once_when_a_file_there_is_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg" / "sub").mkdir(parents=True)
    (ws / "pkg" / "AGENTS.md").write_text("pkg rule: no globals\n")
    (ws / "pkg" / "sub" / "AGENTS.md").write_text("sub rule: keep it small\n")
    (ws / "pkg" / "sub" / "a.py").write_text("x = 1\n")
    (ws / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    model = ScriptedModel(
        [
            Step(calls=[Call("read", {"path": "pkg/sub/a.py"})]),
            Step(calls=[Call("read", {"path": "pkg/sub/b.py"})]),
            Step(text="done"),
        ]
    )
    runtime = _runtime(tmp_path, model)
    async with runtime:
        out = await runtime.agent.run("look")
    assert out.reason == "done"
    notes = [
        i for i in runtime.agent.history.items() if isinstance(i, UserMessage) and i.source == "instructions"
    ]
    texts = [n.text for n in notes]
    assert len(texts) == 2, texts  # each file once, though two files below them were read
    assert "pkg rule" in texts[0] and "sub rule" in texts[1]
    second_request = str(model.views[1])
    assert "sub rule: keep it small" in second_request
