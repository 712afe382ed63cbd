"""Custom slash commands through the real runtime (ScriptedModel): discovery and namespacing, bad
files, collisions with built-ins, arguments, mentions in a template, allowed-tools refusing other
calls, a model for one run, and the listing in /help, completion and RPC's get_commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.agent.messages import ToolResult, UserMessage
from owltui.session.commands.host import LineFront
from owltui.session.commands.layer import Commands
from owltui.session.custom_commands.offer import load_custom_commands
from owltui.session.custom_commands.template import expand
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.session.test_runtime import _env

pytestmark = pytest.mark.anyio


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class Front(LineFront):
    label = "test"


def _setup(tmp_path: Path, steps: list[Step]) -> tuple[Runtime, ScriptedModel, Commands, list[str]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = _env(tmp_path)
    model = ScriptedModel(steps)
    rt = build_runtime(Options(workspace=ws, no_session=True, yes=True), model=model, env=env)
    said: list[str] = []
    return rt, model, Commands.with_custom(rt, Front(), said.append, env), said


def _user_texts(model: ScriptedModel) -> list[str]:
    return [m.text for r in model.requests for m in r.messages if isinstance(m, UserMessage)]


def _results(rt: Runtime) -> list[ToolResult]:
    return [m for m in rt.agent.history.items() if isinstance(m, ToolResult)]


def test_arguments_all_positional_quoted_and_appended() -> None:
    assert expand("Fix $ARGUMENTS now", 'issue "42 b"') == 'Fix issue "42 b" now'
    assert expand("from $1 to $2, not $3.", '"my file.py" other') == "from my file.py to other, not ."
    assert expand("Review the code.", "src/x.py tests") == "Review the code.\n\nARGUMENTS: src/x.py tests"
    assert expand("Review the code.", "") == "Review the code."
    assert expand("$1 $ARGUMENTS", "$2 x") == "$2 $2 x"  # what is typed is never expanded again


def test_discovery_namespacing_project_over_user_and_bad_files(tmp_path: Path) -> None:
    ws, env = tmp_path / "ws", _env(tmp_path)
    _write(ws, ".owltui/commands/git/review.md", "---\ndescription: review the diff\n---\nReview $1")
    _write(
        ws, ".owltui/commands/fix.md", "---\ndescription: project fix\nargument-hint: [issue]\n---\nFix $1"
    )
    _write(tmp_path, "cfg/owltui/commands/fix.md", "---\ndescription: user fix\n---\nuser fix")
    _write(tmp_path, "cfg/owltui/commands/mine.md", "Just mine")
    _write(ws, ".owltui/commands/broken.md", "---\ndescription: [unclosed\nmodel: x\n")  # no closing ---
    _write(ws, ".owltui/commands/typo.md", "---\ndescriptoin: oops\n---\nbody")
    _write(ws, ".claude/commands/claude.md", "from Claude")  # read only with hooks_from_claude
    found = load_custom_commands(ws, env)
    by = found.by_name()
    assert sorted(by) == ["fix", "git:review", "mine"]
    assert by["fix"].help == "project fix (project; over the user's)" and by["fix"].usage == "[issue]"
    assert by["mine"].source == "user" and by["mine"].help == "Just mine (user)"
    assert len(found.warnings) == 2 and not found.errors
    assert any(".owltui/commands/broken.md" in w and "closing" in w for w in found.warnings)
    assert any(".owltui/commands/typo.md" in w and "descriptoin" in w for w in found.warnings)
    with_claude = load_custom_commands(ws, env, from_claude=True).by_name()
    assert "claude" in with_claude


def test_a_name_of_a_built_in_is_an_error_naming_both(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws, ".owltui/commands/help.md", "my help")
    _write(ws, ".owltui/commands/ok.md", "fine")
    found = load_custom_commands(ws, _env(tmp_path))
    assert [c.name for c in found.commands] == ["ok"]
    assert found.errors == [
        "the custom command file .owltui/commands/help.md is named like the built-in command /help; "
        "rename the file"
    ]


async def test_slash_runs_the_template_with_mentions_attached(tmp_path: Path) -> None:
    rt, model, commands, said = _setup(tmp_path, [Step(text="looked")])
    _write(rt.workspace, "src/x.py", "print('hello owl')\n")
    _write(rt.workspace, ".owltui/commands/git/review.md", "Review @$1 for $2 bugs")
    commands = Commands.with_custom(rt, Front(), said.append, _env(tmp_path))
    async with rt:
        reply = commands.slash('/git:review src/x.py "off by one"')
        assert reply is not None and reply.ok and reply.data["attached"] == ["src/x.py"]
        await rt.wait_settled()
    (text,) = _user_texts(model)
    assert text.startswith("Review @src/x.py for off by one bugs")
    assert '<file path="src/x.py">' in text and "hello owl" in text
    assert not said


async def test_allowed_tools_refuse_other_calls_for_that_run_only(tmp_path: Path) -> None:
    steps = [
        Step(
            calls=[
                Call("write", {"path": "out.txt", "content": "x"}),
                Call("bash", {"command": "git status && touch pwned"}),
                Call("bash", {"command": "git status --short"}),
                Call("read", {"path": "a.txt"}),
            ]
        ),
        Step(text="done"),
        Step(calls=[Call("write", {"path": "later.txt", "content": "y"})]),
        Step(text="wrote"),
    ]
    rt, _model, _c, said = _setup(tmp_path, steps)
    _write(rt.workspace, "a.txt", "alpha\n")
    _write(
        rt.workspace,
        ".owltui/commands/look.md",
        "---\nallowed-tools: Read, Bash(git status:*)\n---\nLook around",
    )
    commands = Commands.with_custom(rt, Front(), said.append, _env(tmp_path))
    before = tuple(rt.agent.config.refusals)
    async with rt:
        reply = commands.slash("/look")
        assert reply is not None and reply.ok, reply
        assert "tools: read, bash(git status …)" in reply.text
        await rt.wait_settled()
        results = {r.call_id: r for r in _results(rt)}
        write, chained, status, read = results.values()
        assert write.status == "refused" and "/look allows only read, bash(git status …)" in write.content
        assert chained.status == "refused" and not (rt.workspace / "pwned").exists()
        assert status.status != "refused" and read.status == "ok" and "alpha" in read.content
        assert tuple(rt.agent.config.refusals) == before  # the run is over: the limit is gone
        assert rt.agent.prompt("now write")
        await rt.wait_settled()
    assert (rt.workspace / "later.txt").read_text() == "y"


async def test_a_model_for_one_run_then_the_one_before(tmp_path: Path) -> None:
    rt, model, _c, said = _setup(tmp_path, [Step(text="scripted again")])
    _write(rt.workspace, ".owltui/commands/demo.md", "---\nmodel: demo\n---\nSay hello")
    commands = Commands.with_custom(rt, Front(), said.append, _env(tmp_path))
    scripted = rt.agent.config.model
    async with rt:
        reply = commands.slash("/demo")
        assert reply is not None and reply.ok and "model: demo" in reply.text
        assert rt.agent.config.model is not scripted
        await rt.wait_settled()
        assert rt.agent.config.model is scripted
        assert model.requests == []  # the command's run went to the demo model
        assert rt.agent.prompt("and you?")
        await rt.wait_settled()
    assert _user_texts(model)[-1] == "and you?"


async def test_listed_in_help_completion_and_get_commands(tmp_path: Path) -> None:
    rt, model, _c, said = _setup(tmp_path, [Step(text="ok")])
    _write(
        rt.workspace,
        ".owltui/commands/review.md",
        "---\ndescription: review a file\nargument-hint: FILE\n---\nR $1",
    )
    commands = Commands.with_custom(rt, Front(), said.append, _env(tmp_path))
    help_text = commands.help_text()
    custom_part = help_text.split("Custom commands", 1)[1]
    assert "/review FILE" in custom_part and "review a file (project)" in custom_part
    assert [c.name for c in commands.complete("/rev")] == ["review"]
    listed = commands.rpc("get_commands", {}).data["commands"]
    assert listed[-1] == {
        "name": "review",
        "description": "review a file (project)",
        "argument_hint": "FILE",
        "source": "project",
    }
    assert {"name": "help", "description": "keys and commands", "source": "builtin"} in listed
    async with rt:  # RPC's prompt runs it too
        reply = commands.rpc("prompt", {"text": "/review a.py"})
        assert reply.ok and reply.data == {}
        await rt.wait_settled()
    assert _user_texts(model) == ["R a.py"]
