"""``sse_json.loads`` answers as ``json.loads`` does: the same value, or a ``ValueError``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from owltui.providers.sse_json import loads

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(JSON, st.sampled_from([(",", ":"), (", ", ": ")]), st.sampled_from(["", " ", "\n", " \t"]))
def test_same_value_as_json_loads(value: object, separators: tuple[str, str], pad: str) -> None:
    text = json.dumps(value, separators=separators) + pad
    assert loads(text) == json.loads(text)
    assert loads(pad + text) == json.loads(pad + text)


@pytest.mark.parametrize("text", ["", " ", "{", '{"a": 1} x', '{"a": 1}{}', "[DONE]", "nul", '{"a": 1,}'])
def test_not_json_raises_value_error_like_json_loads(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads(text)


def test_lone_surrogates_and_nan_pass_as_json_loads_gives_them() -> None:
    for text in ['"\\ud800"', '{"t": "a\\udfffb"}', "NaN", "[Infinity, -Infinity]"]:
        assert repr(loads(text)) == repr(json.loads(text))
