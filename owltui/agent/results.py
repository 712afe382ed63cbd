"""Large tool results: saved whole to a file; the model gets head and tail plus the exact reread call.

``ResultStore`` owns the files (one directory, usually the session's ``results/``); ``ReadResult``
is the ``read_result`` tool the loop adds to every run that carries at least one tool. Lines are
counted from 1; a line longer than a page is read in character ranges (``column``). Files are
streamed, never loaded whole, a huge single line included: the preview reads bounded pieces (its
head from the start, its tail back from the end; the lines between are only counted, in bytes, so
its cost does not grow with them) and a page is the pager's (``paging.py``), within the
large-result limits with its prefixes and notices, and marked ``no_spill`` so the loop never saves
it again.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, ClassVar, TextIO

from pydantic import BaseModel, Field

from owltui.agent.paging import (
    MAX_BYTES,
    MAX_LINES,
    NOTICE_BYTES,
    UTF8_TEXT,
    Page,
    Stopped,
    read_page,
    render_page,
    utf8_len,
)
from owltui.agent.tool import ToolContext, ToolError, ToolOutput, in_thread

__all__ = ["HEAD_BYTES", "TAIL_BYTES", "ReadResult", "ResultStore", "is_large", "reread_call"]

HEAD_BYTES = 30 * 1024
TAIL_BYTES = 16 * 1024
TAIL_LINES = 200
TAIL_LINE = 2000  # characters of one tail line shown (its start and its end)
PIECE = 64 * 1024  # characters read at a time: a line of any length is never held whole
COUNT_CHUNK = 1 << 18  # bytes read at a time to count the lines


def is_large(text: str) -> bool:
    return len(text) > MAX_BYTES or text.count("\n") >= MAX_LINES


def reread_call(result_id: str, offset: int, limit: int = MAX_LINES, column: int | None = None) -> str:
    """The exact ``read_result`` call, written as the tool name followed by its JSON arguments."""
    args: dict[str, object] = {"result_id": result_id, "offset": offset, "limit": limit}
    if column is not None and column > 1:
        args["column"] = column
    return f"read_result {json.dumps(args)}"


def _fit_chars(text: str, room: int) -> int:
    """The most characters of ``text`` within ``room`` UTF-8 bytes."""
    if len(text.encode("utf-8", errors="replace")) <= room:
        return len(text)
    return len(text.encode("utf-8", errors="replace")[:room].decode("utf-8", errors="ignore"))


class ResultStore:
    def __init__(self, directory: Path | None = None) -> None:
        self._dir = directory
        self._count = 0
        self._lock = threading.RLock()  # the loop saves in worker threads, several at once in a group

    @property
    def directory(self) -> Path:
        if self._dir is None:
            with self._lock:
                if self._dir is None:
                    self._dir = Path(tempfile.mkdtemp(prefix="owltui-results-"))
        self._dir.mkdir(parents=True, exist_ok=True)
        return self._dir

    def _next_id(self) -> str:
        self._count += 1
        rid = f"r{self._count}"
        while (self.directory / f"{rid}.txt").exists():
            self._count += 1
            rid = f"r{self._count}"
        return rid

    def path(self, result_id: str) -> Path:
        if not result_id.replace("r", "", 1).isdigit():
            raise ToolError(f"Unknown result id {result_id!r}: ids look like 'r7'.")
        return self.directory / f"{result_id}.txt"

    def save(self, content: str | None, source: Path | None = None) -> tuple[str, Path]:
        """Save a result under a new id; safe from several threads at once (ids never repeat)."""
        with self._lock:
            rid = self._next_id()
            dest = self.path(rid)
        if source is not None:
            try:
                source.replace(dest)
            except OSError:
                shutil.copyfile(source, dest)
        else:
            dest.write_text(content or "", encoding="utf-8", errors="replace")
        return rid, dest

    def preview(self, result_id: str, path: Path, name: str, lines: int | None = None) -> str:
        """Head and tail of a saved result, with the exact call that reads the rest. Its cost does
        not grow with the number of lines: the head is read from the start and the tail from the
        end (at most a few hundred lines each), the lines between are only counted, in bytes. A
        line of any length is never held whole (a first line over the head's budget shows its first
        part, and the call goes on from the next character). ``lines``: the file's line count when
        whoever wrote it kept it (then not even counted)."""
        with path.open("rb") as raw:
            size = os.fstat(raw.fileno()).st_size
            head, cut, closing, ended = _read_head(raw)
            total = len(head) if ended else lines if lines is not None else _count_lines(raw, size)
            tail = [] if ended else _read_tail(raw, size, total, head, cut, closing)
        parts = ["\n".join(head)]
        shown = len(head)
        if tail and tail[0][0] > shown + 1:
            parts.append(f"[... lines {shown + 1}-{tail[0][0] - 1} omitted ...]")
        for number, start, end, length in tail:
            if cut and number == 1:  # never repeat what the head showed
                gap = length - len(end)
                parts.append(
                    f"[... characters {cut + 1}-{gap} of line 1 omitted ...] {end}"
                    if gap > cut
                    else f"[... line 1 goes on:] {end[len(end) - (length - cut) :]}"
                )
            elif end:
                parts.append(
                    f"{start} [... characters {len(start) + 1}-{length - len(end)} of line {number} "
                    f"omitted ...] {end}"
                )
            else:
                parts.append(start)
        call = reread_call(result_id, 1, column=cut + 1) if cut else reread_call(result_id, shown + 1)
        parts.append(
            f"[The full output of {name} ({total} lines, {size} bytes) was saved as result "
            f"{result_id}. Read the omitted part with exactly this call: {call}]"
        )
        return "\n".join(p for p in parts if p)


Entry = tuple[int, str, str, int]  # a tail line: (number, start, end, length); end only when cut


def _tail_entry(number: int, start: str, end: str, length: int) -> Entry:
    return (
        (number, start, "", length) if length <= TAIL_LINE else (number, start[: TAIL_LINE // 2], end, length)
    )


def _entry_bytes(entry: Entry) -> int:
    return utf8_len(entry[1]) + utf8_len(entry[2]) + 1


def _text(raw: BinaryIO) -> io.TextIOWrapper:
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")


def _read_head(raw: BinaryIO) -> tuple[list[str], int, Entry | None, bool]:
    """The head's lines (within HEAD_BYTES and half a page of lines), the characters shown of line
    1 when it alone is over the budget (0: not cut), the tail entry of the line that closed the head
    (line 1's end when cut), and whether the file ended within the head."""
    head: list[str] = []
    head_bytes = 0
    fh = _text(raw)
    try:
        for start, end, length in _scan(fh):
            size = utf8_len(start) + 1
            if head_bytes + size <= HEAD_BYTES and len(head) < MAX_LINES // 2 and len(start) == length:
                head.append(start)
                head_bytes += size
                continue
            if not head:
                cut = _fit_chars(start, HEAD_BYTES)
                return [start[:cut]], cut, (1, "", end, length), False
            return head, 0, _tail_entry(len(head) + 1, start, end, length), False
        return head, 0, None, True
    finally:
        fh.detach()


def _count_lines(raw: BinaryIO, size: int) -> int:
    """Lines of the file as ``_scan`` counts them: its newline bytes, plus an unfinished last line."""
    raw.seek(0)
    newlines = 0
    last = b"\n"
    while chunk := raw.read(COUNT_CHUNK):
        newlines += chunk.count(b"\n")
        last = chunk[-1:]
    return newlines + (0 if size == 0 or last == b"\n" else 1)


def _line_starts_backward(raw: BinaryIO, size: int) -> Iterator[int]:
    """Byte offsets where the file's lines start, from the last line back to the first; each line
    is found by searching back for a newline, a chunk at a time."""
    raw.seek(max(0, size - 1))
    hi = size - 1 if size and raw.read(1) == b"\n" else size  # the final newline ends the last line
    buf, buf_lo = b"", hi  # buf holds the bytes from buf_lo on; no newline in it from hi on
    while True:
        found = buf.rfind(b"\n", 0, hi - buf_lo)
        if found != -1:
            yield buf_lo + found + 1
            hi = buf_lo + found
            continue
        if buf_lo == 0:
            yield 0
            return
        lo = max(0, buf_lo - PIECE)
        raw.seek(lo)
        buf, hi, buf_lo = raw.read(buf_lo - lo), buf_lo, lo


def _read_tail(
    raw: BinaryIO, size: int, total: int, head: list[str], cut: int, closing: Entry | None
) -> list[Entry]:
    """The longest run of last lines within TAIL_BYTES and TAIL_LINES (at least one), after the
    head: read from the end of the file, a line at a time."""
    floor = 1 if cut else len(head)  # lines up to here are the head's
    if total <= floor:
        return [closing] if closing is not None else []
    tail: list[Entry] = []
    used = 0
    number = total
    for pos in _line_starts_backward(raw, size):
        if number <= floor:
            break
        if closing is not None and number == closing[0]:
            entry = closing
        else:
            raw.seek(pos)
            fh = _text(raw)
            try:
                start, end, length = next(_scan(fh))
            finally:
                fh.detach()
            entry = _tail_entry(number, start, end, length)
        cost = _entry_bytes(entry)
        if tail and (used + cost > TAIL_BYTES or len(tail) >= TAIL_LINES):
            break
        tail.append(entry)
        used += cost
        number -= 1
    tail.reverse()
    return tail


def _scan(fh: TextIO) -> Iterator[tuple[str, str, int]]:
    """Each line of ``fh`` (opened with ``newline=""``) as (its first characters - at most a piece
    -, its last TAIL_LINE // 2 characters, its length), without its line ending."""
    keep = TAIL_LINE // 2 + 2
    while piece := fh.readline(PIECE):
        start = piece
        end = piece[-keep:]
        length = len(piece)
        while not piece.endswith("\n"):
            piece = fh.readline(PIECE)
            if not piece:
                break
            length += len(piece)
            end = (end + piece)[-keep:]
        ending = 2 if end.endswith("\r\n") else 1 if end.endswith("\n") else 0
        length -= ending
        yield start[:length], end[: len(end) - ending][-(TAIL_LINE // 2) :], length


class ReadResultParams(BaseModel):
    result_id: str = Field(description="The id of a saved result, e.g. 'r7'.")
    offset: int = Field(1, ge=1, description="First line to read, counting from 1.")
    limit: int = Field(MAX_LINES, ge=1, le=MAX_LINES, description="How many lines to read.")
    column: int = Field(
        1,
        ge=1,
        description="First character of the first line to read, counting "
        "from 1 (for a line longer than a page).",
    )


class ReadResult:
    name: ClassVar[str] = "read_result"
    description: ClassVar[str] = (
        "Read part of a tool result that was too large to show whole and was saved. Use the exact call "
        "given in the truncated result; offset and limit count lines from 1, and a line longer than a "
        "page is read in character ranges with column (the notice at the end of a page gives the exact "
        "next call)."
    )
    params: ClassVar[type[BaseModel]] = ReadResultParams
    read_only: ClassVar[bool] = True

    def __init__(self, store: ResultStore) -> None:
        self.store = store

    async def run(self, args: ReadResultParams, ctx: ToolContext) -> ToolOutput:
        rid = args.result_id
        path = self.store.path(rid)
        if not path.is_file():
            raise ToolError(f"No saved result {rid!r}.")

        def work(stop: threading.Event) -> Page:
            fd = os.open(path, os.O_RDONLY)
            try:
                return read_page(
                    fd, UTF8_TEXT, args.offset, args.limit, args.column, MAX_BYTES - NOTICE_BYTES, stop, pad=0
                )
            except Stopped as exc:
                raise ToolError("Cancelled.") from exc

        page = await in_thread(work, ctx)
        if not page.lines:
            return ToolOutput(
                f"Result {rid} has no lines from {args.offset} on ({page.total} lines).",
                details={"no_spill": True},
            )

        def resume(offset: int, column: int | None) -> str:
            more = "The line goes on" if column else "More lines follow"
            return f"{more}; continue with exactly this call: {reread_call(rid, offset, column=column)}"

        text, last = render_page(page, resume, pad=0)
        return ToolOutput(
            text,
            details={
                "result_id": rid,
                "first": args.offset,
                "last": last,
                "total": page.total,
                "no_spill": True,
            },
        )
