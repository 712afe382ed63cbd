"""What goes over the wire: URLs, auth headers, tools, tool choice, cache breakpoints, history mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from owltui.agent.messages import AssistantMessage, Item, ThinkingBlock, ToolCall, ToolResult, UserMessage
from owltui.agent.model import ForceTool, ModelRequest, ToolChoice, ToolSpec
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from tests.providers.helpers import collect, fast_retry, fixtures_dir, run
from tests.providers.loopback import LoopbackServer, Reply

TOOLS = [
    ToolSpec(name=n, description=f"the {n} tool", parameters={"type": "object", "properties": {}})
    for n in ("read", "bash", "ls", "grep")
]


def strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache(v) for v in value]
    return value


def count_cache(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(count_cache(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_cache(v) for v in value)
    return 0


def history(rounds: int) -> list[Item]:
    items: list[Item] = [UserMessage(text="list the files")]
    for i in range(rounds):
        items.append(
            AssistantMessage(
                text=f"step {i}",
                tool_calls=[ToolCall(id=f"c{i}", name="ls", arguments={})],
                stop_reason="tool_use",
            )
        )
        items.append(ToolResult(call_id=f"c{i}", name="ls", content=f"file{i}.txt"))
    return items


def anthropic_model(url: str = "https://api.anthropic.com") -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-5", api_key="sk-ant-test", base_url=url, retry=fast_retry())


def openai_model(url: str = "https://api.openai.com/v1") -> OpenAICompatModel:
    return OpenAICompatModel("gpt-4o", api_key="sk-test", base_url=url, retry=fast_retry())


def req(items: list[Item], choice: ToolChoice = "auto") -> ModelRequest:
    return ModelRequest(system="You are OwlTUI.", messages=items, tools=TOOLS, tool_choice=choice)


def test_auth_headers_urls_and_body_over_the_wire(server: LoopbackServer) -> None:
    body = (fixtures_dir() / "anthropic_text.sse").read_bytes()
    server.queue(Reply(body=body), Reply(body=body))
    run(collect(anthropic_model(server.url), req(history(0))))
    run(collect(anthropic_model(server.url + "/v1/"), req(history(0))))
    for r in server.requests:
        assert r.method == "POST" and r.path == "/v1/messages"
        assert r.headers["x-api-key"] == "sk-ant-test"
        assert r.headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in r.headers
        assert r.json()["stream"] is True
    server.queue(Reply(body=(fixtures_dir() / "openai_text_usage.sse").read_bytes()))
    run(collect(openai_model(server.url + "/v1"), req(history(0))))
    r = server.requests[-1]
    assert r.path == "/v1/chat/completions"
    assert r.headers["authorization"] == "Bearer sk-test"
    assert r.json()["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("make", [anthropic_model, openai_model], ids=["anthropic", "openai"])
def test_tools_sorted_and_byte_identical_across_rounds_and_when_off(make: Any) -> None:
    model = make()
    bodies = [model.encode_body(req(history(n))) for n in range(3)]
    off = model.encode_body(req(history(3), "none"))
    cut = [b[: b.index(b'"messages":')] for b in bodies]
    assert cut[0] == cut[1] == cut[2]  # tools, system, tool choice: the same bytes every round
    segments = []
    for b in [*bodies, off]:
        start = b.index(b'"tools":')
        segments.append(b[start : b.index(b',"', b.index(b"]", b.rindex(b'"grep"')))])
    assert len(set(segments)) == 1
    parsed = json.loads(off)
    names = [t["name"] if "name" in t else t["function"]["name"] for t in parsed["tools"]]
    assert names == ["bash", "grep", "ls", "read"]
    assert parsed["tool_choice"] == ({"type": "none"} if make is anthropic_model else "none")


def test_tool_choice_mapping() -> None:
    a, o = anthropic_model(), openai_model()
    cases: list[tuple[ToolChoice, Any, Any]] = [
        ("auto", {"type": "auto"}, "auto"),
        ("none", {"type": "none"}, "none"),
        ("required", {"type": "any"}, "required"),
        (
            ForceTool(tool="read"),
            {"type": "tool", "name": "read"},
            {"type": "function", "function": {"name": "read"}},
        ),
    ]
    for choice, want_a, want_o in cases:
        assert a.build_body(req(history(0), choice))["tool_choice"] == want_a
        assert o.build_body(req(history(0), choice))["tool_choice"] == want_o
    no_tools = ModelRequest(system="s", messages=[UserMessage(text="hi")])
    assert "tools" not in a.build_body(no_tools) and "tool_choice" not in a.build_body(no_tools)
    assert "tools" not in o.build_body(no_tools) and "tool_choice" not in o.build_body(no_tools)


def test_cache_breakpoints_share_the_prefix_between_rounds() -> None:
    model = anthropic_model()
    prev: dict[str, Any] | None = None
    for n in range(5):
        body = model.build_body(req(history(n)))
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert [("cache_control" in t) for t in body["tools"]] == [False, False, False, True]
        assert count_cache(body) <= 4
        msgs = body["messages"]
        assert "cache_control" in msgs[-1]["content"][-1]
        if prev is not None:
            old = prev["messages"]
            # what the previous round sent is an exact prefix of this round (breakpoints aside) ...
            assert strip_cache(msgs[: len(old)]) == strip_cache(old)
            # ... and the block where it wrote the cache is still a breakpoint, so this round reads it
            assert msgs[len(old) - 1] == old[-1]
            assert json.dumps(msgs[len(old) - 1]) == json.dumps(old[-1])
            prefix = model.encode_body(req(history(n - 1)))
            now = model.encode_body(req(history(n)))
            cut = prefix.index(b'"messages":')
            assert prefix[:cut] == now[:cut]
        prev = body


def test_anthropic_history_mapping() -> None:
    items: list[Item] = [
        UserMessage(text="do things"),
        UserMessage(text="and quickly", lane="steer"),
        AssistantMessage(
            text="",
            thinking=[ThinkingBlock(text="plan", signature="sig"), ThinkingBlock(text="unsigned")],
            tool_calls=[ToolCall(id="a", name="ls"), ToolCall(id="b", name="read", arguments={"path": "x"})],
            stop_reason="tool_use",
        ),
        ToolResult(call_id="a", name="ls", content="x"),
        UserMessage(text="fyi", lane="aside"),
        ToolResult(call_id="b", name="read", content="boom", is_error=True, status="error"),
        AssistantMessage(text="", stop_reason="error", error="cut"),  # empty: skipped
        AssistantMessage(
            text="partial",
            tool_calls=[ToolCall(id="c", name="bash", arguments={"command": "x"})],
            stop_reason="aborted",
        ),
        ToolResult(call_id="c", name="bash", content="", status="cancelled", is_error=True),
        ToolResult(call_id="zzz", name="grep", content="stray"),
        UserMessage(text="next"),
    ]
    msgs = anthropic_model().build_body(req(items))["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert strip_cache(msgs[0]["content"]) == [
        {"type": "text", "text": "do things"},
        {"type": "text", "text": "[steering] and quickly"},
    ]
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig"},
        {"type": "tool_use", "id": "a", "name": "ls", "input": {}},
        {"type": "tool_use", "id": "b", "name": "read", "input": {"path": "x"}},
    ]
    assert strip_cache(msgs[2]["content"]) == [
        {"type": "tool_result", "tool_use_id": "a", "content": "x"},
        {"type": "tool_result", "tool_use_id": "b", "content": "boom", "is_error": True},
        {"type": "text", "text": "[aside] fyi"},
    ]
    assert msgs[3]["content"][0] == {"type": "text", "text": "partial"}
    last = strip_cache(msgs[4]["content"])
    assert last[0]["tool_use_id"] == "c" and last[0]["is_error"] is True
    assert last[1]["text"].endswith("stray") and last[2] == {"type": "text", "text": "next"}


def test_missing_results_get_a_synthetic_one() -> None:
    items: list[Item] = [
        UserMessage(text="go"),
        AssistantMessage(tool_calls=[ToolCall(id="a", name="ls")], stop_reason="tool_use"),
        UserMessage(text="stop that"),
    ]
    msgs = anthropic_model().build_body(req(items))["messages"]
    assert msgs[2]["content"][0]["tool_use_id"] == "a" and msgs[2]["content"][0]["is_error"] is True
    omsgs = openai_model().build_body(req(items))["messages"]
    assert [m["role"] for m in omsgs] == ["system", "user", "assistant", "tool", "user"]


def test_openai_history_mapping() -> None:
    items: list[Item] = [
        UserMessage(text="go"),
        UserMessage(text="now", lane="follow_up"),
        AssistantMessage(
            text="",
            tool_calls=[ToolCall(id="a", name="read", arguments={"path": "é"}), ToolCall(id="b", name="ls")],
            stop_reason="tool_use",
        ),
        ToolResult(call_id="a", name="read", content="text"),
        ToolResult(call_id="b", name="ls", content="nope", is_error=True, status="error"),
        AssistantMessage(text="", stop_reason="error", error="x"),
        AssistantMessage(text="done"),
    ]
    body = openai_model().build_body(req(items))
    assert body["messages"] == [
        {"role": "system", "content": "You are OwlTUI."},
        {"role": "user", "content": "go\n\n[follow-up] now"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "read", "arguments": '{"path": "é"}'}},
                {"id": "b", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "text"},
        {"role": "tool", "tool_call_id": "b", "content": "Error: nope"},
        {"role": "assistant", "content": "done"},
    ]
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "the bash tool",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    limited = ModelRequest(system="s", messages=[UserMessage(text="x")], max_output_tokens=100)
    assert openai_model().build_body(limited)["max_completion_tokens"] == 100
    assert openai_model("http://127.0.0.1:11434/v1").build_body(limited)["max_tokens"] == 100


@pytest.mark.parametrize(
    "name",
    [
        "anthropic_parallel_tool_use",
        "anthropic_thinking_tool_use",
        "openai_compat_groq_parallel_oneshot",
        "openai_compat_kimi_double_finish",
        "openai_compat_llamacpp_tool",
        "openai_compat_openrouter_comments",
    ],
)
def test_matches_recorded_requests(name: str) -> None:
    recorded = json.loads((fixtures_dir() / f"{name}.request.json").read_text(encoding="utf-8"))["body"]
    anthropic = name.startswith("anthropic")
    if anthropic:
        system = recorded["system"][0]["text"]
        text = recorded["messages"][0]["content"][0]["text"]
        tools = [
            ToolSpec(name=t["name"], description=t["description"], parameters=t["input_schema"])
            for t in recorded["tools"]
        ]
    else:
        system = recorded["messages"][0]["content"]
        text = recorded["messages"][1]["content"]
        tools = [
            ToolSpec(
                name=t["function"]["name"],
                description=t["function"]["description"],
                parameters=t["function"]["parameters"],
            )
            for t in recorded["tools"]
        ]
    request = ModelRequest(
        system=system,
        messages=[UserMessage(text=text)],
        tools=tools,
        max_output_tokens=recorded.get("max_tokens"),
    )
    if anthropic:
        body = AnthropicModel(recorded["model"], api_key="k").build_body(request)
        assert strip_cache(body["messages"]) == recorded["messages"]
        assert strip_cache(body["system"]) == recorded["system"]
        assert strip_cache(body["tools"]) == sorted(recorded["tools"], key=lambda t: t["name"])
        assert body["tool_choice"]["type"] == recorded["tool_choice"]["type"]
    else:
        body = OpenAICompatModel(recorded["model"], base_url="http://localhost:8080/v1").build_body(request)
        assert body["messages"] == recorded["messages"]
        want = sorted(recorded["tools"], key=lambda t: t["function"]["name"])
        for t in want:
            t["function"].pop("strict", None)
        assert body["tools"] == want
        assert body["tool_choice"] == recorded["tool_choice"]
        assert body["stream_options"] == recorded["stream_options"]
    assert body.get("max_tokens") == recorded.get("max_tokens")
    assert body["model"] == recorded["model"] and body["stream"] is True
