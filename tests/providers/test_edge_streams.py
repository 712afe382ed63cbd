"""OwlTUI's own edge-case streams (tests/providers/edge_fixtures): every SSE and OpenAI-compat quirk.

U+2028/U+0085 raw in JSON, \\r-only and \\r\\n line endings, UTF-8 split across reads (byte chunking),
no trailing blank line, comments, ``data:`` without a space, trailing spaces, duplicate finish_reason,
usage twice, missing ids and indexes, reused index and id, "" arguments, signature replacement.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.messages import AssistantMessage, UserMessage
from owltui.agent.model import MessageAssembler, ModelRequest, StreamDone
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.anthropic.parser import AnthropicParser
from owltui.providers.http.sse import SSEDecoder
from owltui.providers.http.stream import HTTPModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.providers.openai_compat.parser import OpenAIParser
from tests.providers.helpers import collect, fast_retry, run
from tests.providers.loopback import LoopbackServer, Reply, split

EDGE = Path(__file__).resolve().parent / "edge_fixtures"
NAMES = sorted(p.stem for p in EDGE.glob("*.sse"))
REQUEST = ModelRequest(system="sys", messages=[UserMessage(text="hi")])


def _model(name: str, url: str) -> HTTPModel:
    if name.startswith("anthropic"):
        return AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=url, retry=fast_retry())
    return OpenAICompatModel("gpt-4o", api_key="k", base_url=url + "/v1", retry=fast_retry())


def check(msg: AssistantMessage, raw_stop: str | None, exp: dict[str, Any]) -> None:
    assert msg.text == exp["text"]
    assert msg.thinking_text == exp["thinking"]
    if "signature" in exp:
        assert [b.signature for b in msg.thinking] == [exp["signature"]]
    assert raw_stop == exp["stop_reason"]
    assert msg.stop_reason == exp["normalised"]
    for key, value in exp["usage"].items():
        assert getattr(msg.usage, key) == value, key
    assert len(msg.tool_calls) == len(exp["tool_calls"])
    ids = [c.id for c in msg.tool_calls]
    assert len(set(ids)) == len(ids) and all(ids)
    for call, want in zip(msg.tool_calls, exp["tool_calls"], strict=True):
        assert call.name == want["name"]
        assert call.arguments == want["arguments"]
        assert call.parse_error is None
        if want["id"] is not None:
            assert call.id == want["id"]


def _expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EDGE / f"{name}.expected.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("chunking", ["whole", "bytes", 7, "random"], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_edge_over_loopback(name: str, chunking: str | int, server: LoopbackServer) -> None:
    server.queue(Reply(body=(EDGE / f"{name}.sse").read_bytes(), chunking=chunking))
    out = run(collect(_model(name, server.url), REQUEST))
    assert out.error is None, out.error
    assert out.done is not None
    check(out.message, out.done.raw_stop_reason, _expected(name))


@pytest.mark.parametrize("name", NAMES)
def test_edge_every_split(name: str) -> None:
    body = (EDGE / f"{name}.sse").read_bytes()
    exp = _expected(name)
    for pieces in [split(body, 1), split(body, 3), split(body, "random")] + [
        [body[:i], body[i:]] for i in range(1, len(body))
    ]:
        parser = AnthropicParser() if name.startswith("anthropic") else OpenAIParser()
        dec = SSEDecoder()
        asm = MessageAssembler()
        for ev_name, data in [e for p in pieces for e in dec.feed(p)] + dec.close():
            for ev in parser.feed(ev_name, data):
                asm.feed(ev)
        if parser.terminal is None:
            for ev in parser.end():
                asm.feed(ev)
        assert isinstance(parser.terminal, StreamDone)
        asm.feed(parser.terminal)
        check(asm.finish(), parser.terminal.raw_stop_reason, exp)


def test_missing_ids_get_stable_unique_ids() -> None:
    """Generated ids are assigned once: the events carry the same id the message ends with."""
    body = (EDGE / "openai_missing_ids.sse").read_bytes()
    parser = OpenAIParser()
    dec = SSEDecoder()
    starts = []
    for ev_name, data in dec.feed(body) + dec.close():
        starts += [e for e in parser.feed(ev_name, data) if e.type == "tool_call_start"]
    assert [s.index for s in starts] == [0, 1, 2]
    assert all(s.id.startswith("call_") for s in starts)
    assert len({s.id for s in starts}) == 3
