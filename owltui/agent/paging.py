"""Pages of a text file, memory bounded by the page whatever the length of a line.

The loop's pager (``read_result``) and the tools' pager (``read``, ``owltui.tools.files.paging``) are this
one module: the tools pass their file's decoding and their visible form of text, ``read_result``
pages its own UTF-8 result files as they are.

``read_page`` makes one pass over an open file: it skips to line ``offset`` (counting newline bytes
when the decoding allows, decoding nothing), collects lines - from character ``column`` of the
first - until the page's byte budget (line-number prefixes included) or ``limit`` lines, and counts
the rest of the file in 1 MiB chunks. A line too long for a page is cut at a character boundary and
the notice gives the ``column`` to go on from. ``render_page`` renders a page so that with its
notices it stays under the loop's large-result limits (fewer than MAX_LINES lines, at most
MAX_BYTES bytes): a page is never saved as a large result again.
"""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from owltui.agent.tool import ToolError

MAX_BYTES = 50 * 1024  # the loop's large-result limits: a result over either is saved to a file
MAX_LINES = 2000
CHUNK = 1 << 20
NOTICE_BYTES = 1024  # of the page budget, kept for the notices at its end

Show = Callable[[str], str]  # the form a line is shown in (the tools: control characters visible)
Resume = Callable[[int, "int | None"], str]  # (offset, column) -> how to go on, in words


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="replace"))


def as_is(text: str) -> str:
    return text


class Decoding(Protocol):
    """How the file's bytes become text (``owltui.text.codec.Encoding`` is one)."""

    @property
    def codec(self) -> str: ...
    @property
    def bom(self) -> bytes: ...
    @property
    def ascii_newlines(self) -> bool:
        """``b"\\n"`` in the bytes is exactly a newline."""
        ...

    def decoder(self) -> Any: ...


@dataclass(frozen=True)
class Utf8Text:
    """UTF-8 without a BOM, undecodable bytes replaced: the loop's saved results."""

    codec: str = "utf-8"
    bom: bytes = b""
    ascii_newlines: bool = True

    def decoder(self) -> Any:
        return codecs.getincrementaldecoder("utf-8")(errors="replace")


UTF8_TEXT = Utf8Text()


class Stopped(Exception):
    """The call was cancelled while the file was being read."""


@dataclass
class Page:
    lines: list[tuple[int, str]] = field(default_factory=list)  # (number, shown text)
    total: int = 0
    column: int = 1  # first character shown of the first line
    cut: tuple[int, int] | None = None  # (last character shown, characters in the line) of the last line
    next_offset: int | None = None  # first line not shown, when the page ended before the file


class _Reader:
    """One pass over a file: skip to a line, collect a page within a byte budget, count the rest."""

    def __init__(self, fh: Any, enc: Decoding, stop: threading.Event) -> None:
        self.fh = fh
        self.enc = enc
        self.stop = stop
        self.dec = enc.decoder()
        self.newlines = 0  # "\n" consumed so far
        self.ended_nl = True  # the last character consumed was "\n" (or nothing consumed)
        self.eof = False

    def raw(self) -> bytes:
        if self.stop.is_set():
            raise Stopped
        data: bytes = self.fh.read(CHUNK)
        if not data:
            self.eof = True
        return data

    def text(self) -> str | None:
        """The next decoded piece, None at the end of the file."""
        while not self.eof:
            data = self.raw()
            piece: str = self.dec.decode(data, final=not data)
            if piece:
                return piece
        return None

    def skip_lines(self, count: int) -> str:
        """Consume ``count`` lines; returns the decoded text that follows them in the chunk."""
        if count <= 0:
            return ""
        if self.enc.ascii_newlines:  # count bytes; decode only from the line wanted
            while True:
                data = self.raw()
                if not data:
                    return ""
                n = data.count(b"\n")
                if self.newlines + n >= count:
                    idx = -1
                    for _ in range(count - self.newlines):
                        idx = data.index(b"\n", idx + 1)
                    self.newlines = count
                    self.ended_nl = True
                    rest = data[idx + 1 :]
                    return str(self.dec.decode(rest)) if rest else ""
                self.newlines += n
                self.ended_nl = data.endswith(b"\n")
        while (piece := self.text()) is not None:
            n = piece.count("\n")
            if self.newlines + n >= count:
                idx = -1
                for _ in range(count - self.newlines):
                    idx = piece.index("\n", idx + 1)
                self.newlines = count
                self.ended_nl = True
                return piece[idx + 1 :]
            self.newlines += n
            self.ended_nl = piece.endswith("\n")
        return ""

    def finish_line(self, text: str) -> int:
        """Characters left in the current line (from ``text`` on); consumes its newline."""
        chars = 0
        while True:
            nl = text.find("\n")
            if nl != -1:
                chars += nl
                self.newlines += 1
                self.ended_nl = True
                self.count_rest(text[nl + 1 :])
                return chars
            chars += len(text)
            if text:
                self.ended_nl = False
            if self.enc.ascii_newlines:
                data = self.raw()
                if not data:
                    return chars
                cut = data.find(b"\n")
                part = data if cut == -1 else data[:cut]
                if part.isascii() and self.enc.codec == "utf-8" and not self.dec.getstate()[0]:
                    chars += len(part)
                else:
                    chars += len(self.dec.decode(part))
                if cut != -1:
                    self.newlines += 1
                    self.ended_nl = True
                    self.count_rest_raw(data[cut + 1 :])
                    return chars
                self.ended_nl = False
                text = ""
                continue
            piece = self.text()
            if piece is None:
                return chars
            text = piece

    def count_rest_raw(self, data: bytes) -> None:
        while True:
            if data:
                self.newlines += data.count(b"\n")
                self.ended_nl = data.endswith(b"\n")
            data = self.raw()
            if not data:
                return

    def count_rest(self, text: str) -> None:
        if text:
            self.newlines += text.count("\n")
            self.ended_nl = text.endswith("\n")
        if self.enc.ascii_newlines:
            self.count_rest_raw(b"")
            return
        while (piece := self.text()) is not None:
            self.newlines += piece.count("\n")
            self.ended_nl = piece.endswith("\n")

    @property
    def total(self) -> int:
        return self.newlines + (0 if self.ended_nl else 1)


def _fit(line: str, room: int, show: Show) -> int:
    """The most characters of ``line`` whose shown form fits in ``room`` bytes."""
    lo, hi = 0, min(len(line), room)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if utf8_len(show(line[:mid])) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo


def read_page(
    fd: int,
    enc: Decoding,
    offset: int,
    limit: int,
    column: int,
    budget: int,
    stop: threading.Event,
    show: Show = as_is,
    pad: int = 6,
) -> Page:
    """Lines ``offset``.. (from character ``column`` of the first) in their ``show`` form, within
    ``budget`` bytes with their number prefixes (the number right-aligned in ``pad`` places, then a
    tab); plus the file's line count. Takes ``fd`` over. Memory: the page and one chunk."""
    page = Page(column=column)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        fh.seek(len(enc.bom))
        rd = _Reader(fh, enc, stop)
        text = rd.skip_lines(offset - 1)
        if rd.eof and not text:
            page.total = rd.total
            return page
        number = offset
        skip = column - 1
        parts: list[str] = []
        kept = 0  # characters kept of the current line
        length = 0  # characters of the current line seen so far (after the skipped ones)
        started = False  # anything of the current line consumed
        used = 0

        def close_line(complete: bool) -> bool:
            """Add the current line to the page; False when the page is full."""
            nonlocal used
            line = "".join(parts)
            whole = kept == length
            if complete and whole and line.endswith("\r"):
                line = line[:-1]
            prefix = f"{number:>{pad}}\t"
            room = budget - used - utf8_len(prefix) - 1
            shown = show(line) if whole else ""
            if whole and utf8_len(shown) <= room:
                page.lines.append((number, shown))
                used += utf8_len(prefix) + utf8_len(shown) + 1
                return len(page.lines) < limit
            if page.lines:  # does not fit after other lines: it starts the next page
                page.next_offset = number
                return False
            k = _fit(line, max(room, 1), show)
            page.lines.append((number, show(line[:k])))
            page.cut = (column + k - 1, length)  # length completed by the caller when unknown
            return False

        full = False
        while not full:
            if not text:
                piece = rd.text()
                if piece is None:
                    break
                text = piece
            nl = text.find("\n")
            seg = text if nl == -1 else text[:nl]
            text = "" if nl == -1 else text[nl + 1 :]
            started = True
            if skip:
                dropped = min(skip, len(seg))
                seg = seg[dropped:]
                skip -= dropped
            length += len(seg)
            room = budget - used
            if kept < room:
                take = seg[: room - kept]
                parts.append(take)
                kept += len(take)
            if nl == -1:
                rd.ended_nl = False
                if kept >= room:  # cannot be whole within the budget: decide now
                    if page.lines:
                        page.next_offset = number
                    else:
                        close_line(False)
                        assert page.cut is not None
                        page.cut = (page.cut[0], column - 1 + length + rd.finish_line(text))
                        text = ""
                        page.total = rd.total
                        return page
                    full = True
                    rd.count_rest(text)
                    text = ""
                continue
            rd.newlines += 1
            rd.ended_nl = True
            if skip:
                raise ToolError(
                    f"column {column} is past the end of line {number} ({column - 1 - skip} characters)."
                )
            if not close_line(True):
                if page.cut is not None:
                    page.cut = (page.cut[0], column - 1 + length)
                full = True
                rd.count_rest(text)
                text = ""
                break
            number += 1
            parts, kept, length, started, skip = [], 0, 0, False, 0
        if not full and started:
            if skip:
                raise ToolError(
                    f"column {column} is past the end of line {number} ({column - 1 - skip} characters)."
                )
            if close_line(False) is False and page.cut is not None:
                page.cut = (page.cut[0], column - 1 + length)
        page.total = rd.total
    if page.next_offset is None and page.lines and page.lines[-1][0] < page.total and page.cut is None:
        page.next_offset = page.lines[-1][0] + 1
    return page


def render_page(
    page: Page,
    resume: Resume,
    notes: Sequence[str] = (),
    max_bytes: int = MAX_BYTES,
    max_lines: int = MAX_LINES,
    pad: int = 6,
) -> tuple[str, int]:
    """The page as text within the loop's size limits: fewer than ``max_lines`` lines and
    ``max_bytes`` bytes, its notices (the continuation, then ``notes``) included, so it is never
    saved as a large result. ``resume(offset, column)`` words how to go on. Returns (text, last
    line shown)."""
    lines = list(page.lines)
    cut = page.cut
    next_offset = page.next_offset
    while True:
        shown: list[str] = []
        last = lines[-1][0] if lines else 0
        if cut is not None and cut[0] < cut[1]:
            start = page.column if len(lines) == 1 else 1
            shown.append(
                f"[Line {last} has {cut[1]} characters; characters {start}-{cut[0]} are shown "
                f"(the file has {page.total} line{'s' if page.total != 1 else ''}). "
                f"{resume(last, cut[0] + 1)}.]"
            )
        else:
            after = next_offset if next_offset is not None else last + 1
            if after <= page.total:
                shown.append(f"[Showing lines {lines[0][0]}-{last} of {page.total}. {resume(after, None)}.]")
        shown.extend(notes)
        body = "\n".join(f"{n:>{pad}}\t{text}" for n, text in lines)
        out = body + ("\n\n" + "\n".join(shown) if shown else "")
        if (out.count("\n") < max_lines and utf8_len(out) <= max_bytes) or len(lines) <= 1:
            return out, last
        dropped = lines.pop()
        cut = None
        next_offset = dropped[0]
