"""Pages of a text file for ``read`` (and any pager of saved text): the pager itself is the loop's,
``owltui.agent.paging``; this module gives it the file's encoding and ``read``'s visible form of text.

``read_page`` makes one pass over an open file (see ``owltui.agent.paging.read_page``): memory
bounded by the page whatever the length of a line; a line too long for a page is cut at a
character boundary and the notice gives the ``column`` to go on from. ``page_text`` renders a page
so that with its notices it stays under the loop's large-result limits (fewer than MAX_LINES lines,
at most MAX_BYTES bytes). ``text_page`` does both for a path. ``open_text`` opens a text file for
``read_page`` (``read`` and ``@path`` mentions).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from owltui.agent.paging import NOTICE_BYTES, Page, Resume, Stopped, render_page
from owltui.agent.paging import read_page as _read_page
from owltui.agent.tool import ToolError
from owltui.text.codec import (
    HEAD_BYTES,
    UTF8,
    Encoding,
    head_text,
    line_ending,
    read_head,
    sniff,
    visible,
)
from owltui.tools.base import MAX_BYTES, MAX_LINES, open_regular

__all__ = ["open_text", "page_text", "read_page", "read_resume", "text_page"]


def open_text(path: Path, shown: str, refusal: str) -> tuple[int, Encoding, bytes, int]:
    """Open a regular file (``open_regular``) and name its encoding: (fd, encoding, head, size). A
    binary file is a ToolError: "``shown`` is a binary file (N bytes); ``refusal``"."""
    fd = open_regular(path, shown)
    try:
        size = os.fstat(fd).st_size
        with os.fdopen(os.dup(fd), "rb") as fh:
            head = read_head(fh)
        os.lseek(fd, 0, os.SEEK_SET)
        enc = sniff(head, complete=len(head) < HEAD_BYTES)
        if enc is None:
            raise ToolError(f"{shown} is a binary file ({size} bytes); {refusal}")
    except BaseException:
        os.close(fd)
        raise
    return fd, enc, head, size


def read_page(
    fd: int, enc: Encoding, offset: int, limit: int, column: int, budget: int, stop: threading.Event
) -> Page:
    """Lines ``offset``.. (from character ``column`` of the first) as shown by ``read`` (control
    characters visible), within ``budget`` bytes with their number prefixes; plus the file's line
    count. Memory: the page and one chunk."""
    raw_bytes = enc.raw_bytes
    return _read_page(fd, enc, offset, limit, column, budget, stop, lambda text: visible(text, raw_bytes))


def read_resume(offset: int, column: int | None) -> str:
    """The continuation sentence of ``read``."""
    return f"Continue with offset={offset}, column={column}" if column else f"Use offset={offset} to continue"


def page_text(page: Page, enc: Encoding, newline: str, resume: Resume = read_resume) -> tuple[str, int]:
    """The page as text within the loop's size limits: fewer than MAX_LINES lines and MAX_BYTES bytes,
    notices included, so it is never saved as a large result. ``resume(offset, column)`` words how to
    go on. Returns (text, last line shown)."""
    notes: list[str] = []
    if not enc.plain or newline != "\n":
        what = [enc.label] if not enc.plain else []
        if newline != "\n":
            what.append("CRLF line endings")
        notes.append(f"[{', '.join(what)}; edit and write keep {'them' if len(what) > 1 else 'it'}.]")
    return render_page(page, resume, notes, MAX_BYTES, MAX_LINES)


def text_page(
    path: Path,
    shown_name: str,
    offset: int = 1,
    limit: int = MAX_LINES,
    column: int = 1,
    resume: Resume = read_resume,
    stop: threading.Event | None = None,
) -> tuple[str, dict[str, Any]]:
    """One page of a text file, blocking (call it in a worker thread): the text (within the loop's
    limits, see ``page_text``) and details (first, last, total, encoding, ``no_spill``). Empty files and
    offsets past the end are ToolErrors. For ``read_result`` and any other pager of saved text."""
    fd = open_regular(path, shown_name)
    with os.fdopen(os.dup(fd), "rb") as fh:
        head = read_head(fh)
    enc = sniff(head, complete=len(head) < HEAD_BYTES) or UTF8
    newline = line_ending(head_text(head, enc))
    try:
        page = read_page(
            fd,
            enc,
            offset,
            min(limit, MAX_LINES),
            column,
            MAX_BYTES - NOTICE_BYTES,
            stop or threading.Event(),
        )
    except Stopped as exc:
        raise ToolError("Cancelled.") from exc
    if not page.lines:
        if page.total == 0:
            raise ToolError(f"{shown_name} is empty.")
        raise ToolError(f"offset {offset} is past the end of {shown_name} ({page.total} lines).")
    text, last = page_text(page, enc, newline, resume)
    details = {"first": offset, "last": last, "total": page.total, "encoding": enc.label, "no_spill": True}
    return text, details
