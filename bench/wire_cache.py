"""Request encoding per round as the history grows: the wire cache against encoding the whole body.

A tool loop (an assistant tool call and a 20-line result per round, 12 tool schemas, an 8 KB system
prompt) is encoded after every round by each provider; the time of round 10, 150 and 1,000 is shown
for ``encode_body`` (cached pieces) and for ``encode(build_body(...))`` (everything again), and the
bytes are checked equal.

    python bench/wire_cache.py
"""

from __future__ import annotations

import time

from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult, UserMessage
from owltui.agent.model import ModelRequest, ToolSpec
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.http.stream import HTTPModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.text.wirejson import encode

TOOLS = [
    ToolSpec(
        name=f"tool{i}",
        description="d" * 500,
        parameters={"type": "object", "properties": {"p": {"type": "string"}}},
    )
    for i in range(12)
]
RESULT = "".join(f"{i}\tline {i} of a small file\n" for i in range(1, 21))
SYSTEM = "You are OwlTUI — " + "s" * 8000


def main() -> None:
    models: list[HTTPModel] = [
        OpenAICompatModel("m", base_url="http://127.0.0.1:1/v1"),
        AnthropicModel("claude-sonnet-4-5", api_key="k"),
    ]
    for model in models:
        items: list[Item] = [UserMessage(text="go")]
        for r in range(1, 1001):
            items.append(
                AssistantMessage(
                    text="",
                    stop_reason="tool_use",
                    tool_calls=[ToolCall(id=f"c{r}", name="read", arguments={"path": "f.txt"})],
                )
            )
            items.append(ToolResult(call_id=f"c{r}", name="read", content=RESULT))
            request = ModelRequest(system=SYSTEM, messages=items, tools=TOOLS)
            if r not in (10, 150, 1000):
                model.encode_body(request)
                continue
            t0 = time.perf_counter()
            cached = model.encode_body(request)
            t1 = time.perf_counter()
            whole = encode(model.build_body(request))
            t2 = time.perf_counter()
            assert cached == whole
            print(
                f"{model.provider:<9} round {r:5d}: cached {(t1 - t0) * 1e6:7.0f} µs, whole "
                f"{(t2 - t1) * 1e6:7.0f} µs, body {len(cached) // 1024:4d} KB"
            )


if __name__ == "__main__":
    main()
