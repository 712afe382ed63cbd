"""Retries, idle timeout, cancellation and error messages, against the loopback server."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from owltui.agent.messages import UserMessage
from owltui.agent.model import ModelRequest, TextDelta
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.http.retry import RetryPolicy
from owltui.providers.http.stream import HTTPModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from tests.providers.helpers import Sleeps, collect, fast_retry, fixtures_dir, run
from tests.providers.loopback import LoopbackServer, Reply

REQUEST = ModelRequest(system="sys", messages=[UserMessage(text="hi")])


def sse_body(name: str) -> bytes:
    return (fixtures_dir() / f"{name}.sse").read_bytes()


def anthropic(url: str, sleeps: Sleeps | None = None, **kw: object) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-5", api_key="sk-ant", base_url=url, retry=fast_retry(sleeps), **kw)  # type: ignore[arg-type]


def openai(url: str, sleeps: Sleeps | None = None, **kw: object) -> OpenAICompatModel:
    return OpenAICompatModel("gpt-4o", api_key="sk-oa", base_url=url + "/v1", retry=fast_retry(sleeps), **kw)  # type: ignore[arg-type]


def test_429_with_retry_after_then_success(server: LoopbackServer) -> None:
    sleeps = Sleeps()
    server.queue(
        Reply(status=429, body=b'{"error":{"message":"slow down"}}', headers={"retry-after": "3"}),
        Reply(body=sse_body("anthropic_text")),
    )
    out = run(collect(anthropic(server.url, sleeps), REQUEST))
    assert out.error is None and out.message.text == "Hello there!"
    assert [(r.attempt, r.delay_s) for r in out.retries] == [(1, 3.0)]
    assert "slow down" in out.retries[0].reason and "429" in out.retries[0].reason
    assert sleeps.delays == [3.0]
    assert len(server.requests) == 2


def test_retry_after_ms_wins(server: LoopbackServer) -> None:
    sleeps = Sleeps()
    server.queue(
        Reply(status=503, body=b"busy", headers={"retry-after-ms": "250", "retry-after": "9"}),
        Reply(body=sse_body("openai_text_usage")),
    )
    out = run(collect(openai(server.url, sleeps), REQUEST))
    assert out.error is None
    assert sleeps.delays == [0.25]


def test_529_backoff_is_exponential_with_jitter_and_gives_up_after_4_attempts(server: LoopbackServer) -> None:
    sleeps = Sleeps()
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    server.queue(*[Reply(status=529, body=body) for _ in range(4)])
    out = run(collect(anthropic(server.url, sleeps), REQUEST))
    assert len(server.requests) == 4
    assert [r.attempt for r in out.retries] == [1, 2, 3]
    for delay, nominal in zip(sleeps.delays, [0.5, 1.0, 2.0], strict=True):
        assert nominal * 0.75 <= delay <= nominal
    assert out.error is not None
    assert out.error.message == "anthropic: Overloaded (HTTP 529) (gave up after 4 attempts)"
    assert out.message.stop_reason == "error"


def test_backoff_cap() -> None:
    policy = RetryPolicy(jitter=0.0)
    assert [policy.delay(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert RetryPolicy(scale=0.01, jitter=0.0).delay(3) == pytest.approx(0.02)
    assert policy.delay(1, {"retry-after": "600"}) == 60.0


@pytest.mark.parametrize("status", [408, 409, 500, 502])
def test_other_retryable_statuses(status: int, server: LoopbackServer) -> None:
    server.queue(Reply(status=status, body=b"{}"), Reply(body=sse_body("openai_text_usage")))
    out = run(collect(openai(server.url), REQUEST))
    assert out.error is None and len(out.retries) == 1


def test_cut_before_content_is_retried(server: LoopbackServer) -> None:
    body = sse_body("anthropic_text")
    server.queue(Reply(body=body, cut_after=body.index(b"content_block_start")), Reply(body=body))
    out = run(collect(anthropic(server.url), REQUEST))
    assert out.error is None and out.message.text == "Hello there!"
    assert len(out.retries) == 1 and "anthropic" in out.retries[0].reason


def test_cut_after_content_ends_with_error_keeping_partial_text_and_complete_calls(
    server: LoopbackServer,
) -> None:
    body = sse_body("anthropic_parallel_tool_use")
    # cut inside the second tool_use block: text and the first call are complete
    second = body.index(b'"index":2')
    server.queue(Reply(body=body, cut_after=second))
    out = run(collect(anthropic(server.url), REQUEST))
    assert not out.retries and len(server.requests) == 1
    assert out.error is not None
    assert out.error.message.startswith("anthropic: the connection failed mid-response")
    msg = out.message
    assert msg.stop_reason == "error" and msg.error == out.error.message
    assert msg.text  # partial text kept
    assert [c.name for c in msg.tool_calls] == ["add"]


def test_error_event_before_content_is_retried_after_content_is_not(server: LoopbackServer) -> None:
    start = b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3}}}\n\n'
    err = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    text = (
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":'
        b'"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Part"}}\n\n'
    )
    server.queue(Reply(body=start + err), Reply(body=start + text + err))
    out = run(collect(anthropic(server.url), REQUEST))
    assert len(out.retries) == 1
    assert out.error is not None and out.error.message == "anthropic: Overloaded (overloaded_error)"
    assert out.message.text == "Part" and out.message.stop_reason == "error"


def test_idle_stream_is_an_error_not_a_hang(server: LoopbackServer) -> None:
    body = sse_body("openai_text_usage")
    server.queue(Reply(body=body, stall_after=body.index(b"\n\n", 600) + 2))
    t0 = time.monotonic()
    out = run(collect(openai(server.url, idle_timeout=0.3), REQUEST))
    assert time.monotonic() - t0 < 10
    assert out.error is not None and "sent nothing for 0.3 s" in out.error.message
    assert out.error.message.startswith("openai:")
    assert out.message.text  # what came before the stall is kept
    assert server.client_closed.wait(5)


def test_idle_before_any_byte(server: LoopbackServer) -> None:
    server.queue(Reply(body=b"data: {}\n\n", stall_after=0))
    out = run(collect(anthropic(server.url, idle_timeout=0.2), REQUEST))
    assert out.error is not None and "sent nothing" in out.error.message


def test_cancellation_closes_the_connection_at_once(server: LoopbackServer) -> None:
    body = sse_body("openai_text_usage")
    server.queue(Reply(body=body, stall_after=body.index(b"\n\n", 600) + 2))

    async def main() -> float:
        model = openai(server.url)
        got_text = asyncio.Event()

        async def consume() -> None:
            async for ev in model.stream(REQUEST):
                if isinstance(ev, TextDelta):
                    got_text.set()

        task = asyncio.create_task(consume())
        await got_text.wait()
        await asyncio.to_thread(server.stalled.wait, 5)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        closed = await asyncio.to_thread(server.client_closed.wait, 5)
        assert closed
        await model.aclose()
        return time.monotonic() - t0

    assert run(main()) < 1.0


def test_connection_refused_is_retried_then_reported() -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    sleeps = Sleeps()
    out = run(collect(openai(f"http://127.0.0.1:{port}", sleeps), REQUEST))
    assert len(out.retries) == 3 and len(sleeps.delays) == 3
    assert out.error is not None
    assert out.error.message.startswith(f"openai: cannot reach http://127.0.0.1:{port}/v1/chat/completions")
    assert "gave up after 4 attempts" in out.error.message


@pytest.mark.parametrize(("status", "provider"), [(401, "anthropic"), (403, "anthropic"), (401, "openai")])
def test_auth_failure_is_one_clear_line(status: int, provider: str, server: LoopbackServer) -> None:
    server.queue(Reply(status=status, body=b'{"error":{"message":"invalid x-api-key"}}'))
    model: HTTPModel = anthropic(server.url) if provider == "anthropic" else openai(server.url)
    out = run(collect(model, REQUEST))
    env = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    assert out.error is not None
    assert out.error.message == f"{provider}: authentication failed (HTTP {status}): check {env}"
    assert not out.retries and len(server.requests) == 1


def test_400_shows_the_servers_message(server: LoopbackServer) -> None:
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: 999999 > 64000"},
    }
    server.queue(Reply(status=400, body=json.dumps(body).encode()))
    out = run(collect(anthropic(server.url), REQUEST))
    assert out.error is not None
    assert out.error.message == "anthropic: max_tokens: 999999 > 64000 (HTTP 400)"
    server.queue(Reply(status=404, body=b'{"error":"model \'qwen\' not found"}'))
    out = run(collect(openai(server.url), REQUEST))
    assert out.error is not None and out.error.message == "openai: model 'qwen' not found (HTTP 404)"


def test_garbage_data_line_names_provider_and_event(server: LoopbackServer) -> None:
    server.queue(Reply(body=b'data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: <html>oops\n\n'))
    out = run(collect(openai(server.url), REQUEST))
    assert out.error is not None
    assert out.error.message.startswith("openai: could not understand the 'message' event")
    assert "<html>oops" in out.error.message
    assert out.message.text == "ok"
    server.queue(Reply(body=b'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n'))
    out = run(collect(anthropic(server.url), REQUEST))
    assert out.error is not None
    assert out.error.message.startswith("anthropic: could not understand the 'content_block_delta' event")


def test_stream_that_ends_early_is_an_error(server: LoopbackServer) -> None:
    body = b'data: {"choices":[{"delta":{"content":"half"}}]}\n\n'
    server.queue(Reply(body=body))
    out = run(collect(openai(server.url), REQUEST))
    assert out.error is not None and "ended before the response was complete" in out.error.message
    assert out.message.text == "half"


def test_cost_is_filled_from_the_catalog(server: LoopbackServer) -> None:
    server.queue(Reply(body=sse_body("anthropic_parallel_tool_use")))
    out = run(collect(anthropic(server.url), REQUEST))
    u = out.message.usage
    assert u.cost == pytest.approx((u.input_tokens * 3.0 + u.output_tokens * 15.0) / 1e6)
    assert u.cost > 0
