"""The wire cache: request bytes built from cached pieces equal encoding the whole body at once."""

from __future__ import annotations

import random
from typing import Any

import pytest

from owltui.agent.messages import AssistantMessage, Item, ThinkingBlock, ToolCall, ToolResult, UserMessage
from owltui.agent.model import ForceTool, ModelRequest, ToolChoice, ToolSpec
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.http.stream import HTTPModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.text.wirejson import encode

TOOLS = [
    ToolSpec(name=n, description=f"the {n} tool — ✓", parameters={"type": "object", "properties": {}})
    for n in ("read", "bash", "ls")
]
CHOICES: list[ToolChoice] = ["auto", "none", "required", ForceTool(tool="ls")]


def models(seed: int) -> list[HTTPModel]:
    return [
        OpenAICompatModel("gpt-4o", api_key="k", base_url="https://api.openai.com/v1"),
        OpenAICompatModel("local", base_url="http://127.0.0.1:8080/v1", max_output_tokens=100),
        AnthropicModel("claude-sonnet-4-5", api_key="k", thinking_budget=2048 if seed % 2 else None),
    ]


def deep(n: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(n):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


def random_item(rnd: random.Random, items: list[Item], i: int) -> Item:
    r = rnd.random()
    if r < 0.3:
        args: dict[str, Any] = {"path": rnd.choice(["a.txt", "é\u2028x", "bad_\udcff"])}
        if rnd.random() < 0.05:
            args["n"] = float("nan")
        if rnd.random() < 0.02:
            args["deep"] = deep(150)
        calls = [
            ToolCall(id=f"c{i}_{k}", name=rnd.choice(["read", "ls"]), arguments=args)
            for k in range(rnd.randint(0, 3))
        ]
        thinking = (
            [ThinkingBlock(text="plan", signature=rnd.choice([None, "sig"]), redacted=rnd.random() < 0.1)]
            if rnd.random() < 0.3
            else []
        )
        return AssistantMessage(
            text=rnd.choice(["", "ok", "x\udcff\u0085"]),
            tool_calls=calls,
            thinking=thinking,
            stop_reason="tool_use" if calls else "stop",
        )
    if r < 0.65:
        last = [it for it in items if isinstance(it, AssistantMessage)]
        if last and last[-1].tool_calls and rnd.random() < 0.9:
            call = rnd.choice(last[-1].tool_calls)
            return ToolResult(
                call_id=call.id,
                name=call.name,
                content=rnd.choice(["", "ok", "err \ud800", "x" * 300]),
                is_error=rnd.random() < 0.3,
            )
        return ToolResult(call_id="stray", name="grep", content="stray")
    return UserMessage(
        text=rnd.choice(["", "go on", "more\u2029"]),
        lane=rnd.choice(["user", "steer", "aside", "follow_up", "notice"]),
    )


@pytest.mark.parametrize("seed", range(12))
def test_cached_bytes_equal_whole_encoding_on_long_mixed_histories(seed: int) -> None:
    rnd = random.Random(seed)
    for model in models(seed):
        items: list[Item] = []
        for i in range(400):
            items.append(random_item(rnd, items, i))
            r = rnd.random()
            if r < 0.01:  # compaction: a new view, summary first
                items = [
                    UserMessage(text="Summary", lane="notice", source="system"),
                    *items[rnd.randint(0, len(items)) :],
                ]
            elif r < 0.02:  # rewound in place, then new items
                del items[rnd.randint(0, len(items)) :]
                items.append(UserMessage(text=f"again {i}"))
            if rnd.random() < 0.4:
                continue
            tools = rnd.choice([TOOLS, TOOLS, list(reversed(TOOLS)), []])
            request = ModelRequest(
                system=rnd.choice(["You are OwlTUI — ok", "", "other"]),
                messages=items,
                tools=tools,
                tool_choice=rnd.choice(CHOICES),
                max_output_tokens=rnd.choice([None, 512]),
            )
            assert model.encode_body(request) == encode(model.build_body(request)), (seed, i, model.name)


def test_several_histories_on_one_model_and_the_loop_shape() -> None:
    for model in models(1):
        a: list[Item] = [UserMessage(text="main")]
        b: list[Item] = [UserMessage(text="sub")]
        for i in range(60):
            for items in (a, b):
                items.append(
                    AssistantMessage(
                        text=f"s{i}", tool_calls=[ToolCall(id=f"c{i}", name="ls")], stop_reason="tool_use"
                    )
                )
                items.append(ToolResult(call_id=f"c{i}", name="ls", content=f"file{i}"))
                request = ModelRequest(system="s", messages=items, tools=TOOLS)
                assert model.encode_body(request) == encode(model.build_body(request))


def test_each_turn_is_encoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import owltui.providers.openai_compat.model as body_mod
    import owltui.providers.openai_compat.wire as wire_mod

    calls: list[object] = []
    real_encode, real_piece = body_mod.encode, body_mod.piece

    def counting_encode(obj: object, **kw: Any) -> bytes:
        calls.append(obj)
        return real_encode(obj, **kw)

    def counting_piece(obj: object, **kw: Any) -> tuple[bytes, int]:
        calls.append(obj)
        return real_piece(obj, **kw)

    monkeypatch.setattr(body_mod, "encode", counting_encode)
    monkeypatch.setattr(body_mod, "piece", counting_piece)
    monkeypatch.setattr(wire_mod, "piece", counting_piece)  # each history turn's message
    model = OpenAICompatModel("m", base_url="http://127.0.0.1:1/v1")
    items: list[Item] = [UserMessage(text="go")]
    sizes = []
    for i in range(50):
        items.append(
            AssistantMessage(text="", tool_calls=[ToolCall(id=f"c{i}", name="ls")], stop_reason="tool_use")
        )
        items.append(ToolResult(call_id=f"c{i}", name="ls", content="x"))
        calls.clear()
        model.encode_body(ModelRequest(system="s", messages=items, tools=TOOLS))
        sizes.append(len(calls))
    assert (
        sizes[0] > 4 and max(sizes[1:]) == 4
    )  # head, tool choice, the new assistant message, the new result


def test_a_failing_cache_starts_over_and_the_request_is_still_right(monkeypatch: pytest.MonkeyPatch) -> None:
    import owltui.providers.http.wirecache as wc

    for model in models(0):
        items: list[Item] = [UserMessage(text="go")]
        request = ModelRequest(system="s", messages=items, tools=TOOLS)
        model.encode_body(request)
        items.append(AssistantMessage(text="ok"))
        with monkeypatch.context() as m:
            m.setattr(wc.TurnStream, "advance", lambda self, items: 1 / 0)
            assert model.encode_body(request) == encode(model.build_body(request))
        items.append(UserMessage(text="more"))
        assert model.encode_body(request) == encode(model.build_body(request))
