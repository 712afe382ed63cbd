"""The JSONL/RPC encoder and writer, and RPC line parsing, under hostile input (issue 11, items 1
and 3): random bytes, random Unicode (surrogates, separators, controls), random nesting, NaN,
unknown values; write errors, short writes and a full non-blocking pipe."""

from __future__ import annotations

import errno
import fcntl
import io
import json
import math
import os
import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from owltui.modes.output import JsonLines, json_line
from owltui.modes.rpc_input import MAX_DEPTH, parse_line, request_id
from owltui.text.wirejson import dumps

# every code point, lone surrogates included, with the line breakers weighted in
CHARS = st.one_of(
    st.characters(codec=None, categories=None),
    st.sampled_from("\u2028\u2029\u0085\r\n\x0b\x0c\x1c\x1d\x1e\x00\x7f\ud800\udfff\udcff\ufeff"),
)
TEXT = st.text(alphabet=CHARS, max_size=30)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.binary(max_size=10),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4), st.tuples(inner, inner)
    ),
    max_leaves=30,
)


def nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for n in range(depth):
        value = [value] if n % 2 else {"k": value}
    return value


def check_wire(data: bytes) -> list[Any]:
    """Valid UTF-8; every piece any splitter makes is one whole JSON value, with no NaN/Infinity."""
    assert data.endswith(b"\n")
    text = data.decode("utf-8")
    lines = text.splitlines()
    assert len(lines) == text.count("\n") == len(data.split(b"\n")) - 1
    out = []
    for line in lines:
        out.append(json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(AssertionError(c))))
    return out


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_any_value_is_one_valid_line(value: Any) -> None:
    [back] = check_wire(json_line({"type": "x", "v": value}))
    assert back["type"] == "x"


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_valid_text_survives_and_separators_are_escaped(text: str) -> None:
    line = json_line({"text": text})
    [back] = check_wire(line)
    expected = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    assert back["text"] == expected
    assert not any(sep.encode() in line for sep in "\u2028\u2029\u0085")


def test_deep_cyclic_and_odd_values() -> None:
    cyc: list[Any] = []
    cyc.append(cyc)
    value = {
        "deep": nested(5000),
        "cyc": cyc,
        "nan": math.nan,
        "inf": -math.inf,
        "big": 10**5000,
        "set": {1},
        "bytes": b"\xff\xfe",
        3: "int key",
        None: "none key",
        "obj": object(),
    }
    [back] = check_wire(json_line(value))
    assert back["nan"] is None and back["inf"] is None and back["3"] == "int key"
    assert dumps({"a": "\ud800"}, surrogates="escape") == '{"a":"\\ud800"}'


def test_nan_ids_are_never_echoed_as_non_json() -> None:
    for raw in (
        '{"type":"get_state","id":NaN}',
        '{"type":"get_state","id":1e400}',
        '{"type":"get_state","id":-Infinity}',
    ):
        reason = parse_line(raw)
        assert isinstance(reason, str) and reason
        rid = request_id(raw)
        check_wire(json_line({"type": "response", "id": rid, "ok": False, "error": reason}))
        assert rid is None
    assert request_id('{"id": "a\\ud800", "x": NaN}') == "a\ufffd"
    assert request_id('{"id": 7, "x": NaN}') == 7


def test_parse_line_refusals() -> None:
    assert parse_line(b'{"type":"get_state","id":1}') == {"type": "get_state", "id": 1}
    assert parse_line('\ufeff{"type": "x"}') == {"type": "x"}
    assert parse_line('{"text": "a\\ud800b"}') == {"text": "a\ufffdb"}
    assert "nested too deeply" in str(parse_line("[" * 4096))
    assert "nested too deeply" in str(parse_line(json.dumps(nested(MAX_DEPTH + 1))))
    assert parse_line(json.dumps(nested(MAX_DEPTH - 1))) is not None
    assert isinstance(parse_line(json.dumps({"k": nested(MAX_DEPTH - 2)})), dict)
    assert parse_line('{"t": "[[[[' + "[" * 5000 + '"}') == {"t": "[" * 5004}  # brackets in strings
    assert "not valid UTF-8" in str(parse_line(b'{"type": "get_state\xff"}'))
    assert "not valid UTF-8" in str(parse_line(b'{"x":1}'.decode() + "\udcff"))
    assert "NaN" in str(parse_line('{"x": NaN}'))
    assert "too large" in str(parse_line('{"x": 1e400}'))
    assert "digits" in str(parse_line('{"x": ' + "9" * 5000 + "}"))
    assert "JSON object" in str(parse_line("[1, 2]"))
    assert str(parse_line("{not json")).startswith("invalid JSON")


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        TEXT,
        st.builds(lambda d, s: ("[" * d + s)[:5000], st.integers(0, 5000), TEXT),
        st.builds(lambda v: json.dumps({"type": "x", "v": v}, allow_nan=True, default=repr), VALUES),
    )
)
def test_parse_line_never_raises_and_answers_are_valid_lines(line: str | bytes) -> None:
    result = parse_line(line)
    assert isinstance(result, dict | str)
    answer: dict[str, Any]
    if isinstance(result, str):
        answer = {"type": "response", "command": None, "id": request_id(line), "ok": False, "error": result}
    else:
        answer = {
            "type": "response",
            "command": result.get("type"),
            "id": result.get("id"),
            "ok": True,
            "echo": result,
        }
    check_wire(json_line(answer))


class Flaky(io.BytesIO):
    """Fails some writes with an OSError, takes others in small pieces (short writes)."""

    def __init__(self, fail: set[int], piece: int = 7) -> None:
        super().__init__()
        self.calls = 0
        self.fail = fail
        self.piece = piece

    def write(self, data: Any) -> int:
        self.calls += 1
        if self.calls in self.fail:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(bytes(data)[: self.piece])


def test_a_write_error_loses_one_line_and_never_mutes_the_stream(capsys: Any) -> None:
    sink = Flaky(fail={1})
    out = JsonLines(sink)
    out.write({"n": 1, "bad": "\ud800"})  # the first write fails: that line is lost
    out.write({"n": 2, "text": "lone \udcff and \u2028"})
    out.write({"n": 3})
    assert not out.broken and out.lost == 1
    assert [v["n"] for v in check_wire(sink.getvalue())] == [2, 3]
    assert "could not write an output line" in capsys.readouterr().err


def test_a_line_cut_by_a_failure_does_not_spoil_the_next() -> None:
    sink = Flaky(fail={3}, piece=4)  # the third write of line 1 fails after 8 bytes went out
    out = JsonLines(sink)
    out.write({"n": 1, "pad": "x" * 20})
    out.write({"n": 2})
    pieces = sink.getvalue().split(b"\n")
    assert json.loads(pieces[1]) == {"n": 2}  # the cut line ended, the next starts fresh


def test_broken_pipe_stops_writing() -> None:
    r, w = os.pipe()
    os.close(r)
    out = JsonLines(os.fdopen(w, "wb"))
    out.write({"n": 1})
    assert out.broken
    out.write({"n": 2})  # no exception, nothing happens


def test_full_nonblocking_pipe_gets_whole_lines() -> None:
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    received = bytearray()

    def drain() -> None:
        with os.fdopen(r, "rb") as fh:
            while chunk := fh.read1(4096):
                received.extend(chunk)

    stream = os.fdopen(w, "wb")
    out = JsonLines(stream)
    reader = threading.Thread(target=drain)
    reader.start()
    out.write({"n": 0, "big": "y" * 300_000})  # more than the pipe holds: EAGAIN, wait, go on
    for n in range(1, 50):
        out.write({"n": n, "big": "z" * 10_000, "sep": "\u2028"})
    stream.close()
    reader.join(30)
    values = check_wire(bytes(received))
    assert [v["n"] for v in values] == list(range(50)) and not out.broken and out.lost == 0
