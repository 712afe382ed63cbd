"""One bad call is one error result: whatever raises while a call is checked or run (expansion, a
parameter model, a refusal check, the permission review, the tool, saving its output), that call
gets an error result, the other calls of the batch run, and the run ends normally."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, model_validator

from owltui.agent.messages import ToolCall, ToolResult
from owltui.agent.state import RunState
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Echo, check_history, make_agent

pytestmark = pytest.mark.anyio


class BuggyArgs(BaseModel):
    text: str = ""

    @model_validator(mode="before")
    @classmethod
    def _buggy(cls, data: Any) -> Any:
        raise TypeError("a bug in the parameter model")  # not a ValueError: pydantic lets it through


class BuggyModel(Echo):
    name: ClassVar[str] = "buggy"
    params: ClassVar[type[BaseModel]] = BuggyArgs


class HugeError(Echo):
    name: ClassVar[str] = "huge"

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        raise KeyError("x" * 100_000)


def bad(name: str) -> list[Step]:
    return [Step(calls=[Call(name, {"text": "t"}), Call("echo", {"text": "after"})]), Step(text="end")]


async def run(steps: list[Step], tools: list[Any], **cfg: Any) -> list[ToolResult]:
    agent, model, _ = make_agent(steps, tools, **cfg)
    out = await agent.run("go")
    assert out.reason == "done" and out.text == "end", (out.reason, out.error)
    check_history(agent)
    results = [i for i in agent.history.items() if isinstance(i, ToolResult)]
    assert results[-1].content == "after" and results[-1].status == "ok"
    assert not any("internal error" in r.content for r in results)
    return results


async def test_a_permission_review_that_raises_a_tool_error_is_that_call_s_error() -> None:
    async def permission(call: ToolCall, read_only: bool) -> str | None:
        if call.arguments.get("text") == "t":
            raise ToolError("path contains a NUL character")
        return None

    first, _ = await run(bad("echo"), [Echo()], permission=permission)
    assert first.status == "error" and first.content == "path contains a NUL character"


async def test_a_permission_review_with_a_bug_is_that_call_s_error() -> None:
    async def permission(call: ToolCall, read_only: bool) -> str | None:
        if call.arguments.get("text") == "t":
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return None

    first, _ = await run(bad("echo"), [Echo()], permission=permission)
    assert first.status == "error" and "lone surrogate (\\ud800)" in first.content


async def test_a_refusal_check_that_raises_is_that_call_s_error() -> None:
    async def check(state: RunState, call: ToolCall) -> str | None:
        if call.arguments.get("text") == "t":
            raise RuntimeError("check broke")
        return None

    first, _ = await run(bad("echo"), [Echo()], refusals=[check])
    assert first.status == "error" and "RuntimeError: check broke" in first.content


async def test_an_expansion_that_raises_is_that_call_s_error() -> None:
    def expand(call: ToolCall) -> ToolCall:
        if call.arguments.get("text") == "t":
            raise ValueError("cannot expand")
        return call

    first, _ = await run(bad("echo"), [Echo()], expand=expand)
    assert first.status == "error" and "ValueError: cannot expand" in first.content


async def test_a_parameter_model_with_a_bug_is_that_call_s_error() -> None:
    first, _ = await run(bad("buggy"), [BuggyModel(), Echo()])
    assert first.status == "error" and "a bug in the parameter model" in first.content


async def test_arguments_nested_deeper_than_the_parser_goes_are_that_call_s_error() -> None:
    deep = '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}"
    steps = [Step(calls=[Call("echo", deep), Call("echo", {"text": "after"})]), Step(text="end")]
    first, _ = await run(steps, [Echo()])
    assert first.status == "error" and "nested too deeply" in first.content


async def test_a_tool_s_huge_exception_message_is_cut_to_one_short_line() -> None:
    first, _ = await run(bad("huge"), [HugeError(), Echo()])
    assert first.status == "error" and "crashed: KeyError" in first.content and len(first.content) < 700
