"""PreToolUse and PostToolUse hooks on the real runtime: a validator blocking ``rm -rf`` with exit 2,
a rewrite (``updatedInput``) still judged by the rules, a formatter editing the written file, lint
errors fed back, Claude Code's ``Bash`` matcher and field names working unchanged."""

from __future__ import annotations

import json

import pytest

from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.features.hooks.conftest import World, model_saw, run_prompt

pytestmark = pytest.mark.anyio

# as in Claude Code's hooks guide: read the JSON on stdin, exit 2 with the reason on stderr
BLOCK_RM = """#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
cmd = data.get("tool_input", {}).get("command", "")
if "rm -rf" in cmd:
    print("Blocked: rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"""

REWRITE = """#!/bin/bash
input=$(cat)
cmd=$(printf '%s' "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
if [ "$cmd" = "ls" ]; then
  printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
    "updatedInput": {"command": "touch rewritten.txt"}}}'
fi
exit 0
"""


def _bash(command: str) -> ScriptedModel:
    return ScriptedModel([Step(calls=[Call("bash", {"command": command})]), Step(text="done")])


async def test_a_pre_tool_use_validator_blocks_rm_rf_with_exit_2(world: World) -> None:
    hook = world.script("block_rm.py", BLOCK_RM)
    world.config(
        f'permission_mode = "yolo"\n[[hooks.PreToolUse]]\nmatcher = "bash"\nhooks = [{{ type = "command", command = "{hook}" }}]\n'
    )
    (world.ws / "keep").mkdir()
    model = _bash("rm -rf keep")
    await run_prompt(world.runtime(model), "clean up")
    assert (world.ws / "keep").is_dir()  # never ran
    saw = model_saw(model)
    assert "Refused by the PreToolUse hook" in saw and "Blocked: rm -rf is not allowed here" in saw
    assert world.hook_ends()[0]["decision"] == "deny"
    start = next(e.wire() for e in world.events if e.type == "hook_start")
    assert start == {
        "type": "hook_start",
        "hook_event": "PreToolUse",
        "matcher": "bash",
        "command": str(hook),
    }


async def test_without_the_hook_the_same_call_runs(world: World) -> None:
    world.config('permission_mode = "yolo"\n')
    (world.ws / "keep").mkdir()
    await run_prompt(world.runtime(_bash("rm -rf keep")), "clean up")
    assert not (world.ws / "keep").exists()  # the protection the test above proves


async def test_a_rewrite_is_judged_by_the_rules_after_it(world: World) -> None:
    hook = world.script("rewrite.sh", REWRITE)
    world.config(
        f'permission_mode = "yolo"\n[[hooks.PreToolUse]]\nmatcher = "bash"\nhooks = [{{ type = "command", command = "{hook}" }}]\n'
    )
    (world.ws / ".owltui").mkdir()
    (world.ws / ".owltui" / "permissions.toml").write_text('[deny]\nbash = ["touch*"]\n')
    model = _bash("ls")  # allowed as written; the rewrite is denied by the rules
    await run_prompt(world.runtime(model), "list")
    assert not (world.ws / "rewritten.txt").exists()
    assert "deny rule bash = 'touch*'" in model_saw(model)


async def test_a_rewrite_runs_when_the_rules_allow_it(world: World) -> None:
    hook = world.script("rewrite.sh", REWRITE)
    world.config(
        f'permission_mode = "yolo"\n[[hooks.PreToolUse]]\nmatcher = "bash"\nhooks = [{{ type = "command", command = "{hook}" }}]\n'
    )
    await run_prompt(world.runtime(_bash("ls")), "list")
    assert (world.ws / "rewritten.txt").exists()  # the rewritten command ran, not `ls`


FORMATTER = """#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"]["file_path"]
with open(path) as fh:
    text = fh.read()
with open(path, "w") as fh:
    fh.write(text.upper())
"""

LINT = """#!/bin/bash
echo "lint: line 1: trailing whitespace" >&2
exit 2
"""


async def test_post_tool_use_formatter_and_lint_feedback_from_a_claude_settings_file(world: World) -> None:
    fmt = world.script("fmt.py", FORMATTER)
    lint = world.script("lint.sh", LINT)
    world.claude_settings(
        world.home,
        {
            "PostToolUse": [
                {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": str(fmt)}]},
                {"matcher": "Write", "hooks": [{"type": "command", "command": str(lint), "timeout": 30}]},
            ]
        },
    )
    world.config('permission_mode = "yolo"\nhooks_from_claude = true\n')
    model = ScriptedModel(
        [Step(calls=[Call("write", {"path": "a.txt", "content": "hello "})]), Step(text="done")]
    )
    await run_prompt(world.runtime(model), "write it")
    assert (world.ws / "a.txt").read_text() == "HELLO "  # the formatter edited the file
    assert "lint: line 1: trailing whitespace" in json.dumps(
        [m.model_dump(mode="json") for m in model.views[1]]
    )


async def test_a_claude_bash_matcher_sees_claude_names(world: World) -> None:
    seen = world.root / "seen.json"
    hook = world.script("log.sh", f"#!/bin/bash\ncat > {seen}\n")
    world.claude_settings(
        world.home,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(hook)}]}]},
    )
    world.config('permission_mode = "yolo"\nhooks_from_claude = true\n')
    await run_prompt(world.runtime(_bash("echo hi")), "say hi")
    data = json.loads(seen.read_text())
    assert data["tool_name"] == "Bash" and data["tool_input"]["command"] == "echo hi"
    assert data["hook_event_name"] == "PreToolUse" and data["cwd"] == str(world.ws)
    assert {"session_id", "transcript_path", "tool_use_id"} <= data.keys()


ASK = """#!/usr/bin/env python3
import json, sys
json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                          "permissionDecisionReason": "double-check deploys"}}))
"""


@pytest.mark.parametrize("hooked", [True, False])
async def test_ask_makes_the_call_ask_even_in_yolo_mode(world: World, hooked: bool) -> None:
    """``permissionDecision: ask`` asks about a call the rules (yolo) would run; where nobody can
    answer (no front end here) it is refused with the hook's reason. Without the hook it runs."""
    hook = world.script("ask.py", ASK)
    table = f'[[hooks.PreToolUse]]\nmatcher = "bash"\nhooks = [{{ type = "command", command = "{hook}" }}]\n'
    world.config('permission_mode = "yolo"\n' + (table if hooked else ""))
    model = _bash("touch deployed")
    await run_prompt(world.runtime(model), "deploy")
    assert (world.ws / "deployed").exists() is not hooked
    if hooked:
        saw = model_saw(model)
        assert "needs approval even with --yes" in saw and "double-check deploys" in saw, saw
