"""Text and thinking deltas of one network read come out as one event, in order, concatenating to
the same message (the events contract)."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest

from owltui.agent.model import MessageAssembler, StreamEvent, TextDelta, ThinkingDelta
from owltui.providers.anthropic.parser import AnthropicParser
from owltui.providers.http.sse import SSEDecoder
from owltui.providers.openai_compat.parser import OpenAIParser
from tests.providers.helpers import collect, fast_retry, fixtures_dir, run, summary
from tests.providers.loopback import LoopbackServer, Reply


def oa(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return (
        b"data: "
        + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).encode()
        + b"\n\n"
    )


def an(obj: dict[str, Any]) -> bytes:
    return b"event: " + obj["type"].encode() + b"\ndata: " + json.dumps(obj).encode() + b"\n\n"


OPENAI = b"".join(
    [
        oa({"role": "assistant", "content": ""}),
        *[oa({"reasoning_content": f"r{i} "}) for i in range(5)],
        *[oa({"content": f"w{i} "}) for i in range(50)],
        oa({"reasoning_content": "late "}),
        oa({"content": "after "}),
        oa(
            {
                "tool_calls": [
                    {"index": 0, "id": "c1", "type": "function", "function": {"name": "ls", "arguments": ""}}
                ]
            }
        ),
        oa({"content": "tail"}),
        oa({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
)

ANTHROPIC = b"".join(
    [
        an({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        an(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}
        ),
        *[
            an(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": f"t{i} "},
                }
            )
            for i in range(5)
        ],
        an(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig"},
            }
        ),
        an({"type": "content_block_stop", "index": 0}),
        an(
            {"type": "content_block_start", "index": 1, "content_block": {"type": "thinking", "thinking": ""}}
        ),
        an(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "thinking_delta", "thinking": "second"},
            }
        ),
        an({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        *[
            an({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": f"w{i} "}})
            for i in range(50)
        ],
        an({"type": "ping"}),
        an({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "end"}}),
        an({"type": "content_block_stop", "index": 2}),
        an({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        an({"type": "message_stop"}),
    ]
)


def decode(parser: Any, reads: list[bytes]) -> list[StreamEvent]:
    """As the provider does: feed each read's events, then flush once per read."""
    dec = SSEDecoder()
    out: list[StreamEvent] = []
    for read in reads:
        for name, data in dec.feed(read):
            out += parser.feed(name, data)
        out += parser.flush()
    for name, data in dec.close():
        out += parser.feed(name, data)
    out += parser.end()
    return out


def folded(events: list[StreamEvent], parser: Any) -> Any:
    asm = MessageAssembler()
    for ev in events:
        asm.feed(ev)
    asm.feed(parser.terminal)
    return summary(asm.finish(), parser.terminal.raw_stop_reason), asm.finish().thinking


@pytest.mark.parametrize(
    "make,body", [(OpenAIParser, OPENAI), (AnthropicParser, ANTHROPIC)], ids=["openai", "anthropic"]
)
def test_one_delta_per_kind_per_read_and_the_same_message(make: Any, body: bytes) -> None:
    whole = make()
    one = decode(whole, [body])
    per_byte = make()
    many = decode(per_byte, [body[i : i + 1] for i in range(len(body))])
    assert folded(one, whole) == folded(many, per_byte)
    kinds = [(e.type, getattr(e, "block", None), bool(getattr(e, "signature", None))) for e in one]
    assert all(a != b for a, b in pairwise(kinds) if a[0] in ("text", "thinking"))
    assert len([e for e in one if isinstance(e, TextDelta | ThinkingDelta)]) <= 6
    text = "".join(e.text for e in one if isinstance(e, TextDelta))
    assert text == folded(one, whole)[0]["text"]


def test_order_is_kept_around_tool_calls() -> None:
    parser = OpenAIParser()
    types = [e.type for e in decode(parser, [OPENAI]) if e.type != "tool_call_delta"]
    assert types == ["thinking", "text", "thinking", "text", "tool_call_start", "text", "tool_call_end"]


def test_over_loopback_a_whole_body_is_one_delta(server: LoopbackServer) -> None:
    from owltui.agent.messages import UserMessage
    from owltui.agent.model import ModelRequest
    from owltui.providers.openai_compat.model import OpenAICompatModel

    body = b"".join([oa({"content": f"w{i} "}) for i in range(300)] + [oa({}, "stop"), b"data: [DONE]\n\n"])
    server.queue(Reply(body=body))
    model = OpenAICompatModel("m", api_key="k", base_url=server.url + "/v1", retry=fast_retry())
    out = run(collect(model, ModelRequest(system="s", messages=[UserMessage(text="hi")])))
    deltas = [e for e in out.events if isinstance(e, TextDelta)]
    assert out.message.text == "".join(f"w{i} " for i in range(300))
    assert len(deltas) < 10


def test_fixtures_give_the_same_message_coalesced() -> None:
    for path in sorted(fixtures_dir().glob("*.sse")):
        make = AnthropicParser if path.name.startswith("anthropic") else OpenAIParser
        body = path.read_bytes()
        a, b = make(), make()
        one, many = decode(a, [body]), decode(b, [body[i : i + 7] for i in range(0, len(body), 7)])
        if a.terminal is None or b.terminal is None or a.terminal.type != "done":
            continue
        assert folded(one, a) == folded(many, b), path.name
