"""Stream-parsing benchmark: OwlTUI's OpenAI-compatible client against the least httpx code.

A 40,000-event OpenAI-style text stream is served over loopback (chunked, 16 KB writes) by a server
in a child process (so it does not compete with the readers for the GIL). Both readers
run in the same process: OwlTUI's ``OpenAICompatModel.stream`` folded through ``MessageAssembler``,
and a minimal reader (``aiter_raw`` + split on ``b"\\n\\n"`` + ``json.loads``). Reports µs per event
for each and the ratio (target: within 1.5×).

    python bench/stream_parse.py [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import threading
import time

import httpx

from owltui.agent.messages import UserMessage
from owltui.agent.model import MessageAssembler, ModelRequest
from owltui.providers.http.retry import RetryPolicy
from owltui.providers.openai_compat.model import OpenAICompatModel


def make_stream(n: int) -> bytes:
    words = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", "."]
    parts = []
    for i in range(n):
        chunk = {
            "id": "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL",
            "object": "chat.completion.chunk",
            "created": 1727346168,
            "model": "gpt-4o-2024-08-06",
            "system_fingerprint": "fp_5050236cbd",
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": words[i % len(words)]},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
        }
        parts.append(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
    end = {
        "id": "x",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    usage = {
        "id": "x",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": n},
    }
    parts.append(b"data: " + json.dumps(end).encode() + b"\n\n")
    parts.append(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
    return b"".join(parts)


class Server:
    """Serves ``body`` to every POST, chunked in 16 KB writes, one request per connection."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                part = conn.recv(65536)
                if not part:
                    return
                data += part
            head, _, rest = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            )
            body = self.body
            for i in range(0, len(body), 16384):
                piece = body[i : i + 16384]
                conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            conn.sendall(b"0\r\n\r\n")


async def baseline(url: str) -> int:
    """The least httpx code that reads the stream: aiter_raw, split on blank lines, json.loads."""
    n = 0
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", url + "/v1/chat/completions", content=b"{}") as resp,
    ):
        buf = b""
        async for chunk in resp.aiter_raw():
            buf += chunk
            events = buf.split(b"\n\n")
            buf = events.pop()
            for ev in events:
                if ev.startswith(b"data: ") and ev[6:] != b"[DONE]":
                    json.loads(ev[6:])
                    n += 1
    return n


async def owltui(url: str) -> int:
    model = OpenAICompatModel("gpt-4o", api_key="k", base_url=url + "/v1", retry=RetryPolicy(max_attempts=1))
    request = ModelRequest(system="s", messages=[UserMessage(text="go")])
    asm = MessageAssembler(model.name)
    feed = asm.feed
    n = 0
    async for ev in model.stream(request):
        feed(ev)
        n += 1
    msg = asm.finish()
    assert msg.stop_reason == "stop" and msg.usage.output_tokens > 0, msg.error
    await model.aclose()
    return n


async def measure(fn: object, url: str, events: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn(url)  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best / events * 1e6


def serve_forever(events: int, conn: object) -> None:
    """Child process: serve the stream and report the URL through ``conn``."""
    server = Server(make_stream(events))
    conn.send(server.url)  # type: ignore[attr-defined]
    threading.Event().wait()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=40_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=serve_forever, args=(args.events, child), daemon=True)
    proc.start()
    try:
        url: str = parent.recv()
        assert await baseline(url) == args.events + 2
        await owltui(url)  # warm up
        base_us = await measure(baseline, url, args.events, args.repeat)
        ours_us = await measure(owltui, url, args.events, args.repeat)
        base_us = min(base_us, await measure(baseline, url, args.events, args.repeat))
        ours_us = min(ours_us, await measure(owltui, url, args.events, args.repeat))
    finally:
        proc.terminate()
        proc.join()
    size = len(make_stream(args.events))
    print(f"events: {args.events} ({size / 1e6:.1f} MB), best of {2 * args.repeat}")
    print(f"baseline httpx (aiter_raw + split + json.loads): {base_us:6.2f} us/event")
    print(f"owltui OpenAICompatModel + MessageAssembler:     {ours_us:6.2f} us/event")
    print(f"ratio: {ours_us / base_us:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    asyncio.run(main())
