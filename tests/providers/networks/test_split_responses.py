"""The exact bytes the CLI tests' fake OpenAI server sends, cut at every byte boundary: through the
lean transport's connection (llhttp, the body pieces as they are handed on) and then through the
real model stream (peek, SSE decoder, JSON fast path, parser), every cut gives the same answer."""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from owltui.agent.messages import UserMessage
from owltui.agent.model import ModelRequest
from owltui.providers.http.connection import Connection
from owltui.providers.openai_compat.model import OpenAICompatModel
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.providers.helpers import collect, fast_retry

TEXT = "Answer to the early prompt."
REQUEST = ModelRequest(system="s", messages=[UserMessage(text="hi")])


@pytest.fixture(scope="module")
def wire() -> Iterator[bytes]:
    """One whole response of the fake server, as it came off the socket."""
    server = FakeOpenAI().add(Turn(text=TEXT, pieces=3))
    try:
        body = b'{"model":"m","messages":[]}'
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            out = b""
            while data := sock.recv(65536):
                out += data
        yield out
    finally:
        server.close()


def body_pieces(reads: list[bytes]) -> tuple[int, list[tuple[bytes, bytes]], list[bytes]]:
    """What the lean transport's connection makes of these network reads: status, headers, and
    the body pieces it hands on (one per read that carried body bytes)."""
    conn = Connection(asyncio.new_event_loop(), ("http", "x", 80))
    try:
        conn.start()
        pieces = []
        for data in reads:
            conn.data_received(data)
            assert conn.error is None, conn.error
            if conn.head_done and (piece := conn.take()):
                pieces.append(piece)
        conn.eof_received()
        assert conn.complete  # an until-close body, closed cleanly
        return conn.status, conn.headers, pieces
    finally:
        conn.loop.close()


async def answer(status: int, headers: list[tuple[bytes, bytes]], pieces: list[bytes]) -> str:
    async def body() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=headers, stream=_Stream(body()))

    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        m = OpenAICompatModel("m", api_key="k", base_url="http://x/v1", client=client, retry=fast_retry())
        out = await collect(m, REQUEST)
    assert out.error is None, (out.error, pieces)
    return out.message.text


class _Stream(httpx.AsyncByteStream):
    def __init__(self, it: AsyncIterator[bytes]) -> None:
        self.it = it

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for piece in self.it:
            yield piece


def cuts(wire: bytes) -> Iterator[list[bytes]]:
    for k in range(1, len(wire)):
        yield [wire[:k], wire[k:]]
    yield [wire[i : i + 1] for i in range(len(wire))]
    rng = random.Random(22)
    for _ in range(200):
        points = sorted(rng.sample(range(1, len(wire)), rng.randint(2, 12)))
        yield [wire[a:b] for a, b in zip([0, *points], [*points, len(wire)], strict=True)]


def test_every_cut_of_the_fake_servers_response_gives_the_same_answer(wire: bytes) -> None:
    assert wire.startswith(b"HTTP/1.0 200") and b"\r\n0\r\n" not in wire  # until close, not chunked

    async def all_cuts() -> int:
        n = 0
        for reads in cuts(wire):
            status, headers, pieces = body_pieces(reads)
            assert status == 200 and b"".join(pieces) == wire.partition(b"\r\n\r\n")[2]
            assert await answer(status, headers, pieces) == TEXT
            n += 1
        return n

    assert asyncio.run(all_cuts()) > len(wire)
