"""Conversation items of one shape share pydantic's set of given field names, and each instance's
``model_fields_set`` stays exactly what it was given or assigned."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from owltui.agent.messages import ITEM_ADAPTER, AssistantMessage, ToolCall, ToolResult, Usage

OPTIONAL = {"text": "hi", "stop_reason": "tool_use", "error": "boom", "model": "m", "usage": Usage(cost=1.0)}


def test_items_of_one_shape_share_one_set() -> None:
    a = ToolResult(call_id="a", name="ls", content="x")
    b = ToolResult(call_id="b", name="read", content="y")
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    loaded = [
        ITEM_ADAPTER.validate_json(a.model_dump_json()),
        ITEM_ADAPTER.validate_json(b.model_dump_json()),
    ]
    assert loaded[0].__pydantic_fields_set__ is loaded[1].__pydantic_fields_set__
    assert (
        ToolCall(id="1", name="ls").__pydantic_fields_set__
        is ToolCall(id="2", name="x").__pydantic_fields_set__
    )


def test_assigning_a_field_changes_only_that_instance() -> None:
    first, second = AssistantMessage(stop_reason="stop"), AssistantMessage(stop_reason="stop")
    first.text = "fallback"
    assert first.model_fields_set == {"stop_reason", "text"}
    assert second.model_fields_set == {"stop_reason"}
    assert AssistantMessage(stop_reason="stop").model_fields_set == {"stop_reason"}
    assert first.model_dump(exclude_unset=True) == {"stop_reason": "stop", "text": "fallback"}
    assert second.model_dump(exclude_unset=True) == {"stop_reason": "stop"}


@given(st.lists(st.tuples(st.sets(st.sampled_from(sorted(OPTIONAL))), st.sampled_from(sorted(OPTIONAL)))))
def test_fields_set_is_exact_per_instance(shapes: list[tuple[set[str], str]]) -> None:
    built: list[tuple[AssistantMessage, set[str]]] = []
    for names, assigned in shapes:
        fields: dict[str, Any] = {n: OPTIONAL[n] for n in names}
        msg = AssistantMessage(**fields)
        built.append((msg, set(names)))
        if len(built) % 2:
            setattr(msg, assigned, OPTIONAL[assigned])
            built[-1] = (msg, set(names) | {assigned})
    for msg, expected in built:
        assert msg.model_fields_set == expected
