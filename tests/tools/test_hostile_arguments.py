"""Hostile arguments through the real loop: one bad call is one error result and the run goes on.

Every built-in tool and a tool of a real MCP server (``mcp_test_server.py`` over stdio) is called by
a scripted model with arguments a model could send: NUL characters, lone surrogates, huge strings,
deeply nested values, wrong types, extra keys, arguments that are not an object. The calls go through
the chat feature's configuration and the real permission policy, as a session runs them. After each
batch: exactly one result per call, in call order; the calls after the hostile ones still run; the
run ends normally; no result says the loop hit an internal error.

Arguments are written as raw JSON text, as a provider sends them, so nesting deeper than the JSON
encoder would write and the non-standard ``NaN`` reach the loop's own parser.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from owltui.agent.agent import Agent
from owltui.agent.messages import ToolResult
from owltui.agent.pause import PauseGate
from owltui.agent.results import ReadResult, ResultStore
from owltui.agent.tool import Tool
from owltui.features.chat import chat_config
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.mcp.config import ServerSpec
from owltui.tools.mcp.selection import load_mcp_servers
from owltui.tools.mcp.source import McpSource
from owltui.tools.registry import builtin_tools
from tests.agent.helpers import check_history

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
DEEP = 100_000  # deeper than any recursive parser or encoder goes
HUGE = 300_000  # characters

NUL_READ = '{"path": "a\\u0000b"}'

# ---- hostile values, as JSON text ------------------------------------------------------------------
_names = st.text(st.characters(blacklist_characters="/\\.~\x00"), min_size=1, max_size=12)
_strings = st.one_of(
    st.sampled_from(["a\x00b", "\x00", "\ud800", "a\udcffb", "\udfff/x", "\x1b[2J", "x" * HUGE, ""]),
    _names.map(lambda s: "w" + s),  # a relative name inside the workspace
    st.builds(lambda a, b: a + "\x00" + b, _names, _names),
    st.builds(lambda a: a + "\ud83d", _names),  # half of a surrogate pair
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([1e308, -0.0, 0.5, float("nan"), float("inf")]),
)
_json_values = st.recursive(
    st.one_of(_scalars, _strings), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names, inner)
)


def _dumps(value: Any) -> str:
    return json.dumps(value)  # ensure_ascii: a lone surrogate travels as its \\u escape


VALUE = st.one_of(
    _json_values.map(_dumps),
    st.just("[" * DEEP + "]" * DEEP),
    st.just('{"a":' * DEEP + "1" + "}" * DEEP),
)
WHOLE = st.sampled_from(["[1]", "null", '"x"', "{", '{"path": }', "[" * DEEP, "1e999", ""])


def arguments(keys: Sequence[str]) -> st.SearchStrategy[str]:
    """Raw argument text for a tool with these parameter names: its keys (some), extra keys, or
    something that is not an object at all."""
    key = st.one_of(st.sampled_from(list(keys) or ["path"]), _names, st.sampled_from(["\x00", "\ud800"]))
    pairs = st.lists(st.tuples(key, VALUE), max_size=4)
    obj = pairs.map(lambda kv: "{" + ",".join(f"{_dumps(k)}:{v}" for k, v in kv) + "}")
    return st.one_of(obj, obj, obj, WHOLE)


def keys_of(tool: Tool) -> list[str]:
    return list(tool.params.model_json_schema().get("properties", {}))


def safe_bash(raw: str) -> str:
    """Bash runs in ``yolo`` mode: a string command becomes ``printf`` of that string (hostile bytes
    still reach the shell and the process launch); any other value is left as the model sent it."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        value["command"] = "printf %s " + shlex.quote(value["command"])
        return _dumps(value)
    return raw


# ---- the loop ----------------------------------------------------------------------------------------
async def run_batch(tools: Sequence[Tool], ws: Path, calls: list[Call], mode: str) -> list[ToolResult]:
    """One model response with ``calls`` and a trailing ``ls``, then a final answer, through the chat
    configuration and the permission policy; the checks every batch must pass."""
    model = ScriptedModel([Step(calls=[*calls, Call("ls", {})]), Step(text="the end")])
    policy = PermissionPolicy(ws, mode, None, config_dir=ws.parent / "config", writable_roots=lambda: [ws])
    cfg = chat_config(
        model, tools, workspace=ws, permission=policy.check, results=ResultStore(ws.parent / "r")
    )
    cfg.failure_limit = len(calls) + 5  # many failing calls in a row is a run's end of its own
    agent = Agent(cfg, gate=PauseGate())
    with anyio.fail_after(60):
        out = await agent.run("go")
    results = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert out.reason == "done" and out.text == "the end", (out.reason, out.error)
    check_history(agent)
    assert len(results) == len(calls) + 1
    assert not any("internal error" in r.content for r in results), [r.content[:200] for r in results]
    assert results[-1].status == "ok", results[-1].content[:200]  # the call after the hostile ones ran
    assert model.calls == 2
    return results


def hostile_calls(tools: Sequence[Tool]) -> st.SearchStrategy[list[Call]]:
    one = st.sampled_from(list(tools)).flatmap(
        lambda t: arguments(keys_of(t)).map(
            lambda raw: Call(t.name, safe_bash(raw) if t.name == "bash" else raw)
        )
    )
    return st.lists(one, min_size=1, max_size=4)


BUILTIN = [*builtin_tools(), *builtin_tools(["apply_patch"], edit_tool="apply_patch")]  # both edit tools
EVERY_BUILTIN: list[Tool] = [*BUILTIN, ReadResult(ResultStore())]  # the loop adds read_result itself
# arguments each tool accepts, for the deterministic cases: one value at a time turned hostile
VALID: dict[str, dict[str, Any]] = {
    "apply_patch": {"input": "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\n*** End Patch"},
    "bash": {"command": "true"},
    "edit": {"path": "f.txt", "old_text": "a", "new_text": "b"},
    "exit_plan": {"plan": "# Plan"},  # outside plan mode: a short error
    "fetch": {"url": "http://127.0.0.1:9/"},  # a local address: refused with nobody to ask
    "find": {"pattern": "*"},
    "grep": {"pattern": "x"},
    "job_kill": {"job_id": "1"},
    "job_output": {"job_id": "1"},
    "ls": {},
    "read": {"path": "f.txt"},
    "read_result": {"result_id": "r1"},
    "todo": {"items": [{"content": "a", "status": "pending"}]},
    "write": {"path": "f.txt", "content": "c"},
}
NASTY = ["a\x00b", "\ud800", "a\udcffb", "x" * HUGE, None, 2**70, [["x"]], {"k": "v"}]
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


async def test_a_nul_in_a_read_path_is_that_call_s_error_and_the_run_goes_on(ws: Path) -> None:
    (bad, after) = await run_batch(BUILTIN, ws, [Call("read", NUL_READ)], "ask")
    assert bad.is_error and "NUL" in bad.content
    assert after.content == "(empty directory)"


def one_value_hostile(tool: Tool) -> list[Call]:
    """The tool's valid arguments with one parameter at a time set to each nasty value, then an
    extra key and a value nested deeper than any parser goes."""
    calls = []
    for key in keys_of(tool):
        for value in NASTY:
            raw = _dumps({**VALID[tool.name], key: value})
            calls.append(Call(tool.name, safe_bash(raw) if tool.name == "bash" else raw))
    calls.append(Call(tool.name, {**VALID[tool.name], "extra": 1}))
    calls.append(
        Call(tool.name, _dumps(VALID[tool.name])[:-1] + ', "deep": ' + "[" * DEEP + "]" * DEEP + "}")
    )
    return calls


@pytest.mark.parametrize("mode", ["ask", "yolo"])
@pytest.mark.parametrize("tool", EVERY_BUILTIN, ids=lambda t: t.name)
async def test_every_built_in_tool_answers_each_hostile_value_with_one_result(
    ws: Path, tool: Tool, mode: str
) -> None:
    (ws / "f.txt").write_text("a\n")
    calls = one_value_hostile(tool)
    results = await run_batch(BUILTIN, ws, calls, mode)
    assert all(r.name == tool.name for r in results[:-1])
    assert any(r.is_error for r in results[:-1])


@PROPERTY
@given(calls=hostile_calls(EVERY_BUILTIN), mode=st.sampled_from(["ask", "yolo"]))
async def test_hostile_arguments_to_the_built_in_tools(ws: Path, calls: list[Call], mode: str) -> None:
    await run_batch(BUILTIN, ws, calls, mode)


# ---- an MCP tool -------------------------------------------------------------------------------------
def server_specs(ws: Path) -> list[ServerSpec]:
    path = ws.parent / "mcp.json"
    server = {"command": sys.executable, "args": [str(HERE / "mcp_test_server.py"), "stdio"]}
    path.write_text(json.dumps({"mcpServers": {"t": server}}))
    found, notices = load_mcp_servers(ws, {}, path, None, {})
    assert notices == []
    return found


UNSAFE_MCP = ("slow", "spawn_child", "change_tools")  # sleeps, leaves a process, changes the list


@asynccontextmanager
async def mcp_tools(ws: Path) -> AsyncIterator[list[Tool]]:
    """The test server's tools (those safe to call with anything) and ``ls``, the server running."""
    src = McpSource(server_specs(ws), workspace=ws, warn=lambda _: None)
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        try:
            assert await src.wait_ready()
            tools = [t for t in src.tools() if not any(n in t.name for n in UNSAFE_MCP)]
            assert any(t.name == "mcp__t__echo" for t in tools)
            yield [*tools, *builtin_tools(["ls"])]
        finally:
            with anyio.fail_after(10):
                await src.aclose()
            tg.cancel_scope.cancel()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_arguments_to_an_mcp_tool(ws: Path, data: st.DataObject) -> None:
    """The server starts for each example (a sync test: one event loop an example)."""

    async def main() -> None:
        async with mcp_tools(ws) as tools:
            mcp = [t for t in tools if t.name.startswith("mcp__")]
            calls = data.draw(st.lists(hostile_calls(mcp), min_size=1, max_size=3))
            for batch in calls:
                await run_batch(tools, ws, batch, "yolo")
            (echo, _) = await run_batch(tools, ws, [Call("mcp__t__echo", {"text": "still here"})], "yolo")
            assert "still here" in echo.content, "the server survived the hostile calls"

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:  # the task group wraps what a draw raises (older hypothesis
        inner: BaseException = group  # stops an example with StopTest): hand hypothesis its own error
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        raise inner from None
