"""Every recorded SSE fixture, served over loopback at every chunking, decodes to its .expected.json."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from owltui.agent.messages import UserMessage
from owltui.agent.model import MessageAssembler, ModelRequest, StreamDone
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.anthropic.parser import STOP_REASONS as A_STOP
from owltui.providers.anthropic.parser import AnthropicParser
from owltui.providers.http.sse import SSEDecoder
from owltui.providers.http.stream import HTTPModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.providers.openai_compat.parser import STOP_REASONS as O_STOP
from owltui.providers.openai_compat.parser import OpenAIParser
from tests.providers.helpers import FIXTURES, collect, fast_retry, fixtures_dir, load_expected, run, summary
from tests.providers.loopback import LoopbackServer, Reply, split

NAMES = sorted(p.stem for p in FIXTURES.glob("*.sse")) if FIXTURES.is_dir() else ["(fixtures missing)"]
CHUNKINGS = ["whole", "lines", "bytes", 7, "random"]
REQUEST = ModelRequest(system="sys", messages=[UserMessage(text="hi")])


def _model(name: str, url: str) -> HTTPModel:
    if name.startswith("anthropic"):
        return AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=url, retry=fast_retry())
    return OpenAICompatModel("gpt-4o", api_key="k", base_url=url + "/v1", retry=fast_retry())


def _normalised(name: str, raw: str) -> str:
    return (A_STOP if name.startswith("anthropic") else O_STOP)[raw]


@pytest.mark.parametrize("chunking", CHUNKINGS, ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_fixture_over_loopback(name: str, chunking: str | int, server: LoopbackServer) -> None:
    root = fixtures_dir()
    body = (root / f"{name}.sse").read_bytes()
    expected = load_expected(root / f"{name}.expected.json")
    server.queue(Reply(body=body, chunking=chunking))
    out = run(collect(_model(name, server.url), REQUEST))
    assert out.error is None, out.error
    assert out.done is not None
    got = summary(out.message, out.done.raw_stop_reason)
    assert got == expected
    assert out.message.stop_reason == _normalised(name, expected["stop_reason"])
    assert not out.retries
    assert len(server.requests) == 1


def _decode_direct(name: str, pieces: list[bytes]) -> dict[str, object]:
    parser = AnthropicParser() if name.startswith("anthropic") else OpenAIParser()
    dec = SSEDecoder()
    asm = MessageAssembler()
    events = [ev for piece in pieces for ev in dec.feed(piece)] + dec.close()
    for ev_name, data in events:
        if parser.terminal is not None:
            break
        for ev in parser.feed(ev_name, data):
            asm.feed(ev)
    if parser.terminal is None:
        for ev in parser.end():
            asm.feed(ev)
    term = parser.terminal
    assert isinstance(term, StreamDone), term
    asm.feed(term)
    return summary(asm.finish(), term.raw_stop_reason)


@pytest.mark.parametrize("name", NAMES)
def test_fixture_every_split_exactly(name: str) -> None:
    """Exact read boundaries (no TCP coalescing): fixed sizes, random sizes, and every 2-way split."""
    root = fixtures_dir()
    body = (root / f"{name}.sse").read_bytes()
    expected = load_expected(root / f"{name}.expected.json")
    for size in (1, 2, 3, 5, 7, 13, 64, 1000):
        assert _decode_direct(name, split(body, size)) == expected, size
    for seed in range(5):
        assert _decode_direct(name, split(body, "random", seed=seed)) == expected, seed
    rng = random.Random(name)
    for cut in sorted(rng.sample(range(1, len(body)), min(200, len(body) - 1))):
        assert _decode_direct(name, [body[:cut], body[cut:]]) == expected, cut


def test_fixture_list_is_complete() -> None:
    root = fixtures_dir()
    for sse in root.glob("*.sse"):
        assert Path(str(sse)[:-4] + ".expected.json").exists()
