"""The settings shape, bad input as one line, Claude Code's matcher rule, exit codes and JSON output."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.features.hooks.config import ConfiguredHook, Source, load_hooks
from owltui.features.hooks.names import claude_input, owltui_input
from owltui.features.hooks.outcome import read_outcome
from owltui.features.hooks.runner import Finished
from owltui.testing.scripted import ScriptedModel, Step
from tests.features.hooks.conftest import World, run_prompt

pytestmark = pytest.mark.anyio


def _hook(matcher: str) -> ConfiguredHook:
    return ConfiguredHook("PreToolUse", matcher, "true", 60, Source(Path("x"), "claude", False))


def test_matchers_follow_claude_code() -> None:
    assert _hook("").matches("Bash") and _hook("*").matches("anything")
    assert _hook("Edit|Write").matches("Write") and not _hook("Edit|Write").matches("WriteX")
    assert _hook("mcp__github__.*").matches("mcp__github__create_issue")
    assert not _hook("bash").matches("Bash")  # case-sensitive
    assert _hook("[").matches("[") and not _hook("[").matches("Bash")  # a bad pattern: itself only


def test_a_bad_table_or_file_is_one_warning_and_loses_the_rest_of_nothing(tmp_path: Path) -> None:
    warnings: list[str] = []
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    (tmp_path / ".claude" / "settings.local.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo ok"}]}]}}'
    )
    found = load_hooks(
        {"PreToolUs": []},
        tmp_path / "config.toml",
        from_claude=True,
        workspace=tmp_path,
        home=tmp_path / "home",
        warn=warnings.append,
    )
    assert [h.command for h in found] == ["echo ok"]
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert "PreToolUs" in warnings[0] and "settings.json" in warnings[1]


async def test_a_malformed_config_table_does_not_stop_the_session(world: World) -> None:
    world.config('[[hooks.PreToolUse]]\nhooks = [{ type = "command" }]\n')
    model = ScriptedModel([Step(text="fine")])
    await run_prompt(world.runtime(model), "hi")
    assert model.calls == 1 and len(world.warnings) == 1 and "hooks.PreToolUse" in world.warnings[0]


def test_claude_names_both_ways(tmp_path: Path) -> None:
    args = {"path": "a.py", "old_text": "x", "new_text": "y"}
    claude = claude_input("edit", args, tmp_path)
    assert claude == {"file_path": str(tmp_path / "a.py"), "old_string": "x", "new_string": "y"}
    assert owltui_input("edit", claude) == {"path": str(tmp_path / "a.py"), "old_text": "x", "new_text": "y"}
    assert owltui_input("bash", {"command": "ls", "timeout": 5000, "description": "list"}) == {
        "command": "ls",
        "timeout": 5.0,
    }


def _done(code: int | None, out: str = "", err: str = "") -> Finished:
    return Finished(code, out, err, 0.1, None if code is not None else "timed out")


def test_exit_codes_and_json_output() -> None:
    assert read_outcome("PreToolUse", _done(2, err="no\n")).decision == "deny"
    assert read_outcome("Stop", _done(2, err="tests first")).reason == "tests first"
    failed = read_outcome("PostToolUse", _done(1, err="boom\nlast line"))
    assert failed.decision is None and failed.error == "exit code 1: last line"
    assert read_outcome("PreToolUse", _done(None)).error == "timed out"
    rewrite = read_outcome(
        "PreToolUse",
        _done(0, '{"hookSpecificOutput": {"permissionDecision": "ask", "updatedInput": {"command": "ls"}}}'),
    )
    assert rewrite.decision == "ask" and rewrite.updated_input == {"command": "ls"}
    stop = read_outcome("PostToolUse", _done(0, '{"continue": false, "stopReason": "enough"}'))
    assert stop.stop and stop.stop_reason == "enough"
    assert read_outcome("UserPromptSubmit", _done(0, "plain context")).context == "plain context"
    assert read_outcome("PostToolUse", _done(0, "plain text")).context == ""
