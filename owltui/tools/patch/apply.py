"""Hunks -> new file text, pure: where each chunk's lines are (Codex's ``seek_sequence``) and the
text they give, or which hunk and chunk failed and why.

Matching follows Codex: the chunk's ``@@`` context line is looked for first (from where the last
chunk ended), then its old lines, each pass trying the exact lines, then the lines with trailing
whitespace ignored, then with surrounding whitespace ignored, then with typographic dashes, quotes
and spaces read as ASCII; ``*** End of File`` looks only at the end. A chunk with no old lines adds
its lines at the end of the file. The result always ends with a line end, as Codex's does.

Unlike Codex, the file's own bytes are kept where the patch keeps a line: a CRLF file is matched
without its ``\\r``, every line outside the chunks and every context line keeps its own text
(whitespace a fuzzy match ignored included) and line end; added lines get the file's style
(``line_ending``), and a blank last line is not dropped.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from owltui.text.codec import unvisible, visible
from owltui.tools.patch.parser import Chunk, Hunk

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


class PatchApplyError(ValueError):
    """A hunk that does not apply; ``str()`` names the hunk, the chunk and why."""


def _normalise(line: str) -> str:
    return line.strip().translate(_PUNCTUATION)


_PASSES = (
    lambda s: s,
    lambda s: s.rstrip(),
    lambda s: s.strip(),
    _normalise,
)


def seek_sequence(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> int | None:
    """Where ``pattern`` starts in ``lines`` at or after ``start`` (at the end only when ``eof``),
    trying exact, trailing-whitespace, whitespace and punctuation-normalised comparisons in turn."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if eof else start
    last = len(lines) - len(pattern)
    for norm in _PASSES:
        want = [norm(p) for p in pattern]
        for i in range(first, last + 1):
            if all(norm(lines[i + k]) == want[k] for k in range(len(want))):
                return i
    return None


@dataclass(frozen=True)
class _Line:
    text: str  # without its end
    end: str  # "\n", "\r\n" or "" (the last line of a file without a final line end)


def split_lines(text: str) -> list[_Line]:
    """``text`` as lines with their ends (a final line end makes no extra empty line)."""
    out: list[_Line] = []
    for piece in text.split("\n"):
        out.append(_Line(piece.removesuffix("\r"), "\r\n" if piece.endswith("\r") else "\n"))
    last = out.pop()
    if last.text or last.end == "\r\n":
        out.append(_Line(last.text + ("\r" if last.end == "\r\n" else ""), ""))
    return out


def where(hunk: Hunk, index: int) -> str:
    """How an error names hunk number ``index`` (from 1)."""
    name = hunk.header + (f" -> {hunk.move_to}" if hunk.move_to else "")
    return f"hunk {index} ({name}, patch line {hunk.line})"


def _quote(lines: Sequence[str]) -> str:
    shown = [f"    {line}" for line in lines[:12]]
    if len(lines) > 12:
        shown.append(f"    ... ({len(lines) - 12} more lines)")
    return "\n".join(shown)


_Replacement = tuple[int, tuple[str, ...], tuple[str, ...]]  # where, the old lines, the new lines


def _replacements(lines: list[str], chunks: Sequence[Chunk], where: str, name: str) -> list[_Replacement]:
    found: list[_Replacement] = []
    at = 0
    for number, chunk in enumerate(chunks, 1):
        label = f"{where}, chunk {number} (patch line {chunk.line})"
        if chunk.context is not None:
            idx = seek_sequence(lines, [chunk.context], at, False)
            if idx is None:
                raise PatchApplyError(
                    f"{label}: failed to find the context line '@@ {chunk.context}' in {name}"
                    + (f" after line {at}" if at else "")
                    + "."
                )
            at = idx + 1
        if not chunk.old_lines:
            insert = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            found.append((insert, (), chunk.new_lines))
            continue
        old, new = chunk.old_lines, chunk.new_lines
        idx = seek_sequence(lines, old, at, chunk.end_of_file)
        if idx is None and old[-1] == "":
            old = old[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            idx = seek_sequence(lines, old, at, chunk.end_of_file)
        if idx is None:
            place = " at the end of the file" if chunk.end_of_file else (f" after line {at}" if at else "")
            raise PatchApplyError(
                f"{label}: failed to find the expected lines in {name}{place}:\n{_quote(chunk.old_lines)}\n"
                "Read the file again and copy the context lines exactly."
            )
        found.append((idx, old, new))
        at = idx + len(old)
    return sorted(found, key=lambda r: r[0])


def _merge(
    region: list[_Line], old: Sequence[str], new: Sequence[str], newline: str, back: Callable[[str], str]
) -> list[_Line]:
    """``new`` in place of ``region`` (the file's lines ``old`` matched): the lines the chunk keeps
    (context) stay the file's own, with their whitespace and line ends; the others (``back``: their
    visible forms turned into the characters) end in ``newline``."""
    out: list[_Line] = []
    ops = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False).get_opcodes()
    for op, a0, a1, b0, b1 in ops:
        if op == "equal":
            out += region[a0:a1]
        else:
            out += [_Line(back(s), newline) for s in new[b0:b1]]
    return out


def _hidden_tokens(lines: Sequence[str], raw_bytes: bool) -> set[str]:
    """The visible forms of the hidden characters ``lines`` hold."""
    return {shown for line in lines for ch in line if (shown := visible(ch, raw_bytes)) != ch}


def apply_chunks(
    text: str, chunks: Sequence[Chunk], *, newline: str, where: str, name: str, raw_bytes: bool = True
) -> str:
    """``text`` with ``chunks`` applied; new lines end in ``newline``. PatchApplyError (naming
    ``where`` and the chunk) when one does not apply.

    A patch that does not apply to the text is tried on the text as ``read`` shows it (hidden
    characters as ``␛``, ``\\xNN``...; ``raw_bytes`` as ``Encoding.raw_bytes``), as ``edit`` accepts
    it; its added lines then get those characters back for the forms the file holds."""
    lines = split_lines(text)
    plain = [line.text for line in lines]

    def same(line: str) -> str:
        return line

    back: Callable[[str], str] = same
    try:
        found = _replacements(plain, chunks, where, name)
    except PatchApplyError as first:
        shown = [visible(line, raw_bytes) for line in plain]
        if shown == plain:
            raise
        try:
            found = _replacements(shown, chunks, where, name)
        except PatchApplyError:
            raise first from None  # the error on the text itself is the one to show
        tokens = _hidden_tokens(plain, raw_bytes)
        back = functools.partial(unvisible, tokens=tokens, raw_bytes=raw_bytes)
    for start, old, new in reversed(found):
        region = lines[start : start + len(old)]
        lines[start : start + len(old)] = _merge(region, old, new, newline, back)
    if lines and lines[-1].end == "":
        lines[-1] = _Line(lines[-1].text, newline)
    return "".join(line.text + line.end for line in lines)
