"""The SSE decoder on its own: line endings, comments, fields, splits, end of stream."""

from __future__ import annotations

import pytest

from owltui.providers.http.sse import SSEDecoder


def decode(*pieces: bytes) -> list[tuple[str, str]]:
    dec = SSEDecoder()
    out = [ev for p in pieces for ev in dec.feed(p)]
    return out + dec.close()


def every_split(body: bytes) -> None:
    whole = decode(body)
    for i in range(len(body) + 1):
        assert decode(body[:i], body[i:]) == whole, i
    assert decode(*[body[i : i + 1] for i in range(len(body))]) == whole


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"], ids=["lf", "cr", "crlf"])
def test_line_endings(eol: bytes) -> None:
    body = eol.join([b"event: a", b"data: 1", b"", b"data: 2", b"data: 3", b"", b""])
    assert decode(body) == [("a", "1"), ("message", "2\n3")]
    every_split(body)


def test_mixed_line_endings_and_cr_lf_split_across_reads() -> None:
    assert decode(b"data: 1\r", b"\n\r", b"\ndata: 2\r\r") == [("message", "1"), ("message", "2")]
    assert decode(b"data: 1\r", b"\r") == [("message", "1")]


def test_unicode_separators_are_not_line_breaks() -> None:
    text = "a\u2028b\u2029c\u0085d\x0be\x0cf\x1cg"
    body = ("data: " + text + "\n\n").encode()
    assert decode(body) == [("message", text)]
    every_split(body)


def test_utf8_split_across_reads() -> None:
    body = "data: café 日本 🦉\n\n".encode()
    for i in range(len(body)):
        assert decode(body[:i], body[i:]) == [("message", "café 日本 🦉")]


def test_comments_fields_and_spaces() -> None:
    body = (
        b': ping\n: OPENROUTER PROCESSING\n\ndata:{"a":1}   \n\nid: 7\nretry: 10\nfoo: bar\n'
        b"data\n\nevent:x\ndata:  two spaces\n\n"
    )
    assert decode(body) == [("message", '{"a":1}   '), ("message", ""), ("x", " two spaces")]


def test_last_event_without_blank_line() -> None:
    assert decode(b"data: 1\n\ndata: last") == [("message", "1"), ("message", "last")]
    assert decode(b"data: 1\n\ndata: last\n") == [("message", "1"), ("message", "last")]
    assert decode(b"data: 1\n\n: just a comment") == [("message", "1")]


def test_bom_and_empty_events() -> None:
    assert decode(b"\xef\xbb", b"\xbfdata: x\n\n\n\n") == [("message", "x")]
    assert decode(b"event: lonely\n\n") == []


def test_many_events_in_one_read() -> None:
    body = b"".join(b"data: %d\n\n" % i for i in range(1000))
    assert [int(d) for _, d in decode(body)] == list(range(1000))
