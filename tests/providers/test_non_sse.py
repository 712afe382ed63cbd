"""A 200 whose body is not an event stream is an error shown at once (issue 11, item 6), and request
bodies survive lone surrogates, NaN and deep nesting (item 1), against the loopback server."""

from __future__ import annotations

import json

import pytest

from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult, UserMessage
from owltui.agent.model import ModelRequest
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.http.errors import is_error_body, non_stream_message
from owltui.providers.openai_compat.model import OpenAICompatModel
from tests.providers.helpers import Sleeps, collect, fast_retry, fixtures_dir, run
from tests.providers.loopback import LoopbackServer, Reply

REQUEST = ModelRequest(system="sys", messages=[UserMessage(text="hi")])


def anthropic(url: str, sleeps: Sleeps) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-5", api_key="sk-ant", base_url=url, retry=fast_retry(sleeps))


def openai(url: str, sleeps: Sleeps) -> OpenAICompatModel:
    return OpenAICompatModel("gpt-4o", api_key="sk-oa", base_url=url + "/v1", retry=fast_retry(sleeps))


CASES = [
    # (provider, reply, words the error must contain)
    (
        "openai",
        Reply(
            body=b'{"error":{"message":"Invalid model gpt-9","type":"invalid_request_error"}}', stream=False
        ),
        ["Invalid model gpt-9", "HTTP 200"],
    ),
    (
        "anthropic",
        Reply(
            body=b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', stream=False
        ),
        ["anthropic: Overloaded"],
    ),
    (
        "openai",
        Reply(
            body=b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
            b"<body><h1>502 Bad Gateway</h1><hr>nginx</body></html>",
            stream=False,
            headers={"content-type": "text/html"},
        ),
        ["HTML page", "502 Bad Gateway"],
    ),
    (
        "anthropic",
        Reply(
            body=b"<html>\n<body>\n<p>Access denied by the proxy &amp; friends</p></body></html>",
            stream=False,
            headers={"content-type": "text/html; charset=utf-8"},
        ),
        ["HTML page", "Access denied by the proxy & friends"],
    ),
    # labelled as a stream, sent in pieces, with a BOM and blank lines first: the first bytes decide
    (
        "openai",
        Reply(body=b'\xef\xbb\xbf\n\n  {"error": "model not loaded"}', chunking=1),
        ["model not loaded"],
    ),
    # a whole non-streamed completion (the server ignored "stream": true)
    (
        "openai",
        Reply(
            body=json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}],
                }
            ).encode(),
            stream=False,
        ),
        ["JSON instead of an event stream", "chat.completion"],
    ),
    # labelled JSON but plain text
    (
        "openai",
        Reply(
            body=b"upstream connect error\nreset reason: overflow",
            stream=False,
            headers={"content-type": "application/json"},
        ),
        ["application/json instead of an event stream", "upstream connect error"],
    ),
]


@pytest.mark.parametrize(("provider", "reply", "words"), CASES)
def test_200_with_an_error_body_is_shown_without_retries(
    server: LoopbackServer, provider: str, reply: Reply, words: list[str]
) -> None:
    sleeps = Sleeps()
    server.queue(reply)
    model = openai(server.url, sleeps) if provider == "openai" else anthropic(server.url, sleeps)
    out = run(collect(model, REQUEST))
    assert out.error is not None, out.events
    for word in words:
        assert word in out.error.message, out.error.message
    assert "\n" not in out.error.message and "stream ended" not in out.error.message
    assert out.error.message.startswith(f"{provider}: ")
    assert out.retries == [] and sleeps.delays == [] and len(server.requests) == 1
    assert out.message.stop_reason == "error"


def test_real_sse_mislabelled_as_json_still_streams(server: LoopbackServer) -> None:
    body = (fixtures_dir() / "openai_text_usage.sse").read_bytes()
    server.queue(Reply(body=body, headers={"content-type": "application/json"}, chunking=3))
    out = run(collect(openai(server.url, Sleeps()), REQUEST))
    assert out.error is None and out.message.text


def test_empty_200_is_still_an_early_end_and_retried(server: LoopbackServer) -> None:
    body = (fixtures_dir() / "openai_text_usage.sse").read_bytes()
    server.queue(Reply(body=b""), Reply(body=body))
    out = run(collect(openai(server.url, Sleeps()), REQUEST))
    assert out.error is None and len(out.retries) == 1


def test_detection_rules() -> None:
    assert is_error_body("text/event-stream", b"  <html>")
    assert is_error_body("", b"[1]")
    assert is_error_body("application/json; charset=utf-8", b"Not Found")
    assert not is_error_body("application/json", b"data: {}\n\n")
    assert not is_error_body("text/html", b": ping\n\n")
    assert not is_error_body("text/event-stream", b"event: message_start\n")
    assert not is_error_body("application/json", b"  \n")
    assert "an empty page" in non_stream_message("openai", "text/html", b"<html></html>", "http://x")


def test_request_body_survives_surrogates_nan_separators_and_depth(server: LoopbackServer) -> None:
    deep: list[object] = []
    cur = deep
    for _ in range(3000):
        nxt: list[object] = []
        cur.append(nxt)
        cur = nxt
    history: list[Item] = [
        UserMessage(text="list bad_\udcff.txt and a model's \ud800 and \u2028 separators"),
        AssistantMessage(
            text="ok",
            tool_calls=[
                ToolCall(
                    id="c1",
                    name="ls",
                    arguments={"path": "bad_\udcff", "n": float("nan"), "big": float("inf"), "deep": deep},
                )
            ],
            stop_reason="tool_use",
        ),
        ToolResult(call_id="c1", name="ls", content="bad_\udcff.txt\n\udc80\udc81"),
    ]
    body = (fixtures_dir() / "openai_text_usage.sse").read_bytes()
    for make, fixture in ((openai, body), (anthropic, (fixtures_dir() / "anthropic_text.sse").read_bytes())):
        server.reset()
        server.queue(Reply(body=fixture))
        out = run(collect(make(server.url, Sleeps()), ModelRequest(system="s", messages=history)))
        assert out.error is None, out.error
        raw = server.requests[0].body
        text = raw.decode("utf-8")  # strict: valid UTF-8
        data = json.loads(text)  # strict JSON: no NaN
        assert "NaN" not in text and "Infinity" not in text
        assert "bad_\ufffd.txt" in json.dumps(data, ensure_ascii=False)
        assert "\\u2028" in text and "\u2028" not in text
