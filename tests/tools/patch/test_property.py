"""A patch made from two texts (difflib's groups with three lines of context, as a model writes
them) turns the first into the second byte for byte, LF or CRLF."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from owltui.tools.patch.apply import apply_chunks
from owltui.tools.patch.parser import parse_patch

LINE = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)
LINES = st.lists(LINE, unique=True, max_size=30)  # unique: every chunk has one place to go


def make_patch(a: list[str], b: list[str]) -> str:
    out = ["*** Begin Patch", "*** Update File: f.txt"]
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        out.append("@@")
        for op, a0, a1, b0, b1 in group:
            if op == "equal":
                out += [" " + s for s in a[a0:a1]]
                continue
            out += ["-" + s for s in a[a0:a1]]
            out += ["+" + s for s in b[b0:b1]]
    out.append("*** End Patch")
    return "\n".join(out)


@settings(max_examples=300, deadline=None)
@given(a=LINES, b=LINES, newline=st.sampled_from(["\n", "\r\n"]))
def test_a_generated_patch_applies_exactly(a: list[str], b: list[str], newline: str) -> None:
    if a == b:
        return
    [hunk] = parse_patch(make_patch(a, b))
    before = "".join(s + newline for s in a)
    after = apply_chunks(before, hunk.chunks, newline=newline, where="hunk 1", name="f.txt")
    assert after == "".join(s + newline for s in b)


HEADERS = ["*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: ", "*** Begin Patch"]
NOISE = st.sampled_from(["", " ", "  ", "\t", "\r", "\v", "\f", "\u00a0", "\u2028", "\x85"])
PIECE = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=6)


@st.composite
def hostile_patch(draw: st.DrawFn) -> str:
    """Patch-shaped text whose header lines carry odd whitespace, line ends and paths."""
    lines = ["*** Begin Patch"]
    for _ in range(draw(st.integers(1, 6))):
        head = draw(st.sampled_from(HEADERS))
        lines.append(draw(NOISE) + head + draw(PIECE) + draw(NOISE))
        lines += draw(st.lists(st.sampled_from(["+x", "-y", " z", "@@", "", "*** End of File"]), max_size=3))
    lines.append("*** End Patch")
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)


@settings(max_examples=500, deadline=None)
@given(text=hostile_patch())
def test_the_policy_reviews_every_path_the_parser_would_write(text: str) -> None:
    """Two readers of one patch: the permission policy's (which cannot import the tool) must name
    every path the tool's parser takes, whatever whitespace or line ends the headers carry."""
    from owltui.policy.permissions.patch import patch_paths
    from owltui.tools.patch.parser import PatchParseError

    try:
        hunks = parse_patch(text)
    except PatchParseError:
        return
    touched = {p for h in hunks for p in h.touched() if p}
    assert touched <= set(patch_paths(text))
