"""The ``todo`` tool and the session's list: validation, the ``todo`` event on the JSONL wire, the
list a resumed session (``-c``) restores, the list kept word for word through a compaction, and a
tool list that stays the same every round."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from owltui.agent.cancel import CancelToken
from owltui.agent.events import Event, TodoEvent, TodoItem
from owltui.agent.messages import UserMessage
from owltui.agent.services import Services
from owltui.agent.todo import TodoBoard, saved_list, todo_block
from owltui.agent.tool import ToolContext, ToolError
from owltui.modes.print_mode import print_run
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.plan.todo import TodoParams, TodoTool
from owltui.tools.registry import builtin_tools

pytestmark = pytest.mark.anyio

FIRST = [
    {"content": "Read the parser", "status": "in_progress"},
    {"content": "Fix the off-by-one in `split()`", "status": "pending"},
    {"content": "Run the tests: pytest -q tests/unit", "status": "pending"},
]
SECOND = [
    {"content": "Read the parser", "status": "done"},
    {"content": "Fix the off-by-one in `split()`", "status": "in_progress"},
    {"content": "Run the tests: pytest -q tests/unit", "status": "pending"},
]


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
    }


def runtime(tmp_path: Path, model: ScriptedModel, **opts: Any) -> Runtime:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return build_runtime(Options(workspace=ws, **opts), model=model, env=env_for(tmp_path))


def ctx(board: TodoBoard | None = None) -> ToolContext:
    return ToolContext(workspace=Path("/"), cancel=CancelToken(), services=Services(todo=board))


# ---- the tool ----------------------------------------------------------------------------------
async def test_a_valid_list_is_saved_on_the_board_and_emitted_once() -> None:
    seen: list[TodoEvent] = []
    board = TodoBoard(seen.append)
    out = await TodoTool().run(TodoParams.model_validate({"items": FIRST}), ctx(board))
    assert not out.is_error and out.content == "Todo list saved (0/3 done)."
    assert [i.model_dump() for i in board.items] == FIRST
    assert len(seen) == 1 and seen[0].wire() == {"type": "todo", "items": FIRST}


async def test_two_items_in_progress_are_refused_and_the_list_is_kept() -> None:
    board = TodoBoard()
    board.set([TodoItem(content="a", status="pending")])
    both = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]
    with pytest.raises(ToolError, match=r"Items 1, 2 are all in_progress: at most one"):
        await TodoTool().run(TodoParams.model_validate({"items": both}), ctx(board))
    assert board.items == (TodoItem(content="a", status="pending"),)


async def test_empty_content_is_refused() -> None:
    blank = [{"content": "a", "status": "done"}, {"content": "  ", "status": "pending"}]
    with pytest.raises(ToolError, match=r"Item 2 has empty content"):
        await TodoTool().run(TodoParams.model_validate({"items": blank}), ctx())


def test_unknown_status_and_missing_fields_fail_validation_with_the_field_named() -> None:
    with pytest.raises(ValidationError, match=r"items\.0\.status"):
        TodoParams.model_validate({"items": [{"content": "a", "status": "blocked"}]})
    with pytest.raises(ValidationError, match=r"items\.0\.content"):
        TodoParams.model_validate({"items": [{"status": "done"}]})
    with pytest.raises(ValidationError):
        TodoParams.model_validate({"todos": FIRST})  # the list has one name


def test_other_agents_words_for_done_are_taken() -> None:
    params = TodoParams.model_validate(
        {"items": [{"content": "a", "status": "completed", "activeForm": "x"}]}
    )
    assert params.items == [TodoItem(content="a", status="done")]


def test_the_tool_is_read_only_offered_sorted_and_its_schema_names_the_statuses() -> None:
    tools = builtin_tools()
    names = [t.name for t in tools]
    assert "todo" in names and names == sorted(names)
    (tool,) = [t for t in tools if t.name == "todo"]
    assert tool.read_only
    assert '"enum": ["pending", "in_progress", "done"]' in json.dumps(tool.params.model_json_schema())
    assert len(tool.description) < 300


# ---- the session -------------------------------------------------------------------------------
async def test_jsonl_carries_each_list_as_a_todo_event(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    model = ScriptedModel(
        [
            Step(calls=[Call("todo", {"items": FIRST})]),
            Step(calls=[Call("todo", {"items": SECOND})]),
            Step(text="ok"),
        ]
    )
    out = io.BytesIO()
    code = await print_run(
        Options(workspace=tmp_path / "ws", no_session=True),  # not --yes: todo never asks
        "go",
        "jsonl",
        model=model,
        env=env_for(tmp_path),
        out=out,
        err=io.StringIO(),
        handle_signals=False,
    )
    events = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    assert code == 0
    assert [e for e in events if e["type"] == "todo"] == [
        {"type": "todo", "items": FIRST},
        {"type": "todo", "items": SECOND},
    ]
    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["status"] for e in ends] == ["ok", "ok"]


async def test_print_mode_text_output_prints_nothing_of_the_list(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    model = ScriptedModel([Step(calls=[Call("todo", {"items": FIRST})]), Step(text="the answer")])
    out, err = io.BytesIO(), io.StringIO()
    await print_run(
        Options(workspace=tmp_path / "ws", no_session=True),
        "go",
        model=model,
        env=env_for(tmp_path),
        out=out,
        err=err,
        handle_signals=False,
    )
    assert out.getvalue().decode().strip() == "the answer"
    assert "Read the parser" not in out.getvalue().decode()


async def test_continue_restores_the_list_for_the_tool_and_the_front_ends(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("todo", {"items": FIRST})]),
            Step(calls=[Call("todo", {"items": SECOND})]),
            Step(calls=[Call("todo", {"items": [{"content": "x", "status": "in_progress"}] * 2})]),  # refused
            Step(text="ok"),
        ]
    )
    async with runtime(tmp_path, model) as rt:
        await rt.agent.run("go")
    assert [r.is_error for r in model.requests[-1].messages if hasattr(r, "is_error")] == [False, False, True]
    again = runtime(tmp_path, ScriptedModel([Step(text="ok")]), continue_session=True)
    try:
        board = again.agent.config.services.todo
        assert board is not None and [i.model_dump() for i in board.items] == SECOND
        assert [i.model_dump() for i in saved_list(again.agent.history.items()) or []] == SECOND
        seen: list[Event] = []
        again.emitter.subscribe(seen.append)
        await TodoTool().run(TodoParams.model_validate({"items": FIRST}), ctx(board))
        assert [e.wire() for e in seen] == [{"type": "todo", "items": FIRST}]  # through the runtime's emitter
    finally:
        await again.aclose()


async def test_a_compaction_keeps_the_list_word_for_word_in_the_next_request(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("todo", {"items": FIRST})]),
            Step(calls=[Call("todo", {"items": SECOND})]),
            Step(text="step two under way"),
            Step(text="Goals: fix split. Done: most of it."),  # the summary, which says nothing of the list
            Step(text="carrying on"),
        ]
    )
    async with runtime(tmp_path, model) as rt:
        await rt.agent.run("go")
        await rt.compact(keep_turns=0)
        await rt.agent.run("next")
    request = model.requests[-1]
    first = request.messages[0]
    assert isinstance(first, UserMessage) and "Goals: fix split." in first.text
    assert todo_block(rt.agent.history.items()) in first.text
    body = OpenAICompatModel("m", api_key="k", base_url="http://127.0.0.1:9/v1").encode_body(request).decode()
    for item in SECOND:
        assert f"- [{item['status']}] {item['content']}" in json.loads(body)["messages"][1]["content"]
    # resumed from the file, the compacted view still carries it
    again = runtime(tmp_path, ScriptedModel([]), continue_session=True)
    try:
        view = again.agent.history.model_view()
        assert (
            isinstance(view[0], UserMessage)
            and "- [in_progress] Fix the off-by-one in `split()`" in view[0].text
        )
    finally:
        await again.aclose()


async def test_the_tool_list_is_the_same_every_round(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            Step(calls=[Call("todo", {"items": FIRST})]),
            Step(calls=[Call("todo", {"items": SECOND})]),
            Step(text="ok"),
        ]
    )
    async with runtime(tmp_path, model, no_session=True) as rt:
        await rt.agent.run("go")
    tools = [r.tools for r in model.requests]
    assert len(tools) == 3 and tools[0] == tools[1] == tools[2]
    assert "todo" in [spec.name for spec in tools[0]]
