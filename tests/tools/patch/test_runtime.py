"""The edit tool a session offers: the catalog's choice for the starting model's family (config
``edit_tool`` over it), fixed for the session; and one apply_patch call end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.agent.messages import ToolResult
from owltui.providers.catalog import lookup
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.registry import builtin_tools

pytestmark = pytest.mark.anyio


def runtime(tmp_path: Path, model: ScriptedModel, config: str = "") -> Runtime:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
        "OPENAI_API_KEY": "sk-test",
        "ANTHROPIC_API_KEY": "sk-ant-test",
    }
    if config:
        (tmp_path / "cfg" / "owltui").mkdir(parents=True)
        (tmp_path / "cfg" / "owltui" / "config.toml").write_text(config)
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return build_runtime(Options(workspace=ws, no_session=True, yes=True), model=model, env=env, warn=print)


def names(rt: Runtime) -> list[str]:
    return [t.name for t in rt.agent.config.tools]


@pytest.mark.parametrize(
    ("model", "tool"),
    [
        ("gpt-5", "apply_patch"),
        ("gpt-5-codex", "apply_patch"),
        ("gpt-5-mini-2025-08-07", "apply_patch"),
        ("gpt-4.1", "apply_patch"),
        ("o3", "apply_patch"),
        ("o4-mini", "apply_patch"),
        ("openai/gpt-5", "apply_patch"),
        ("gpt-4o", "edit"),
        ("claude-sonnet-4-5", "edit"),
        ("llama3", "edit"),
    ],
)
def test_the_catalog_names_the_edit_tool_of_a_family(tmp_path: Path, model: str, tool: str) -> None:
    assert lookup("openai", model).edit_tool == tool
    got = names(runtime(tmp_path, ScriptedModel(name=model)))
    other = {"edit": "apply_patch", "apply_patch": "edit"}[tool]
    assert tool in got and other not in got
    assert got == sorted(got)


@pytest.mark.parametrize(
    ("model", "config", "tool"),
    [("gpt-5", "edit", "edit"), ("claude-opus-4-5", "apply_patch", "apply_patch")],
)
def test_config_edit_tool_wins(tmp_path: Path, model: str, config: str, tool: str) -> None:
    got = names(runtime(tmp_path, ScriptedModel(name=model), f'edit_tool = "{config}"\n'))
    assert tool in got and ({"edit", "apply_patch"} - {tool}).isdisjoint(got)


def test_builtin_tools_takes_either_edit_name_for_the_sessions_edit_tool() -> None:
    assert [t.name for t in builtin_tools(["read", "edit"], edit_tool="apply_patch")] == [
        "apply_patch",
        "read",
    ]
    assert [t.name for t in builtin_tools(["apply_patch"])] == ["edit"]
    with pytest.raises(ValueError, match="unknown edit tool"):
        builtin_tools(edit_tool="sed")


async def test_end_to_end_apply_patch_call_and_a_byte_stable_tool_list(tmp_path: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: b/new.txt\n+hello\n"
        "*** Delete File: gone.txt\n*** End Patch"
    )
    model = ScriptedModel(
        [
            Step(calls=[Call("apply_patch", {"input": patch})]),
            Step(calls=[Call("apply_patch", {"input": patch})]),  # now the context is gone: an error result
            Step(text="done"),
        ],
        name="gpt-5",
    )
    rt = runtime(tmp_path, model)
    ws = rt.options.workspace
    (ws / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws / "gone.txt").write_bytes(b"x\n")
    before = names(rt)
    async with rt:
        await rt.agent.run("patch it")
        rt.set_model("openai:gpt-4o")  # /model: the list stays as the session started
        assert names(rt) == before
    assert (ws / "a.txt").read_bytes() == b"one\r\nTWO\r\n"
    assert (ws / "b" / "new.txt").read_bytes() == b"hello\n"
    assert not (ws / "gone.txt").exists()
    results = [item for item in rt.agent.history.items() if isinstance(item, ToolResult)]
    assert [r.is_error for r in results] == [False, True]
    assert "Success. Updated the following files:\nA b/new.txt\nM a.txt\nD gone.txt" in str(
        results[0].content
    )
    assert "hunk 1 (*** Update File: a.txt" in str(results[1].content)
    tools = [request.tools for request in model.requests]
    assert len(tools) == 3 and tools[0] == tools[1] == tools[2]
    assert "apply_patch" in [spec.name for spec in tools[0]] and "edit" not in [
        spec.name for spec in tools[0]
    ]


def test_apply_patch_costs_no_more_request_bytes_than_edit() -> None:
    """The first request stays under 16 KB with every built-in tool (tests/features/test_skills.py
    measures it with edit): apply_patch in edit's place must not make it bigger."""

    def size(name: str) -> int:
        [tool] = [t for t in builtin_tools(edit_tool=name) if t.name == name]
        return len(tool.description) + len(str(tool.params.model_json_schema()))

    assert size("apply_patch") <= size("edit")


async def test_undo_puts_back_what_a_patch_changed(tmp_path: Path) -> None:
    """Checkpoints are taken before each turn, whatever tool changes files: /undo restores them."""
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: b.txt\n+new\n*** End Patch"
    )
    model = ScriptedModel([Step(calls=[Call("apply_patch", {"input": patch})]), Step(text="done")], name="o3")
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"one\r\n")
    options = Options(workspace=ws, no_session=True, yes=True, interactive=True)
    rt = build_runtime(options, model=model, env=env, warn=print)
    assert rt.checkpoints is not None
    async with rt:
        await rt.agent.run("patch it")
        assert (ws / "a.txt").read_bytes() == b"ONE\r\n"
        await rt.checkpoints.rewind(None, conversation=False)
    assert (ws / "a.txt").read_bytes() == b"one\r\n"
    assert not (ws / "b.txt").exists()


def test_a_custom_command_allowing_edit_allows_the_sessions_apply_patch() -> None:
    from owltui.agent.messages import ToolCall
    from owltui.session.custom_commands.scope import allowed, parse_rules

    call = ToolCall(id="c1", name="apply_patch", arguments={"input": ""})
    assert allowed(parse_rules(["Edit"]), call)
    assert allowed(parse_rules(["apply_patch"]), ToolCall(id="c2", name="edit"))
    assert not allowed(parse_rules(["Read"]), call)
