"""What a mention attaches: a text file's first page exactly as the ``read`` tool shows it
(numbered lines, encodings and controls made visible, within a byte budget, a last line saying how
to read on), or a directory's listing like ``ls``'s. A ``ToolError`` says why a file cannot be
attached (binary, not a regular file, larger than ``MAX_SCAN_BYTES``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from owltui.agent.paging import NOTICE_BYTES, Stopped
from owltui.agent.tool import ToolError
from owltui.text.codec import head_text, line_ending, show_name
from owltui.tools.base import MAX_BYTES, MAX_LINES
from owltui.tools.files.paging import open_text, page_text, read_page

MAX_SCAN_BYTES = 64 * 1024 * 1024  # a bigger file is not read (paging counts its lines: time)
MAX_LISTING = 500  # entries of a directory listing


def _resume(shown: str) -> Callable[[int, int | None], str]:
    def resume(offset: int, column: int | None) -> str:
        col = f', "column": {column}' if column else ""
        return f'The rest: read {{"path": "{shown}", "offset": {offset}{col}}}'

    return resume


def read_attachment(path: Path, shown: str, budget: int = MAX_BYTES) -> str:
    """The first page of a text file as ``read`` shows it (within ``budget`` bytes); a ToolError
    says why a file cannot be attached (binary, not a regular file, too large to scan)."""
    size = os.stat(path).st_size
    if size > MAX_SCAN_BYTES:
        raise ToolError(f"{shown} is {size // (1 << 20)} MB, too large to attach; read it with the read tool")
    fd, enc, head, _size = open_text(path, shown, "only text is attached")
    newline = line_ending(head_text(head, enc))
    try:  # read_page owns the descriptor from here on
        page = read_page(
            fd, enc, 1, MAX_LINES, 1, max(budget, 2 * NOTICE_BYTES) - NOTICE_BYTES, threading.Event()
        )
    except Stopped as exc:  # pragma: no cover - nothing sets the event
        raise ToolError("cancelled") from exc
    if page.total == 0:
        return f"({shown} is empty)"
    body, _last = page_text(page, enc, newline, _resume(shown))
    return body


def list_directory(path: Path, shown: str) -> str:
    """A listing like ``ls``'s: sorted by name, directories end in ``/``, links show their target."""
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: (e.name.lower(), e.name))
    except OSError as exc:
        raise ToolError(f"cannot list {shown}: {exc.strerror}") from exc
    if not entries:
        return "(empty directory)"
    lines: list[str] = []
    for entry in entries[:MAX_LISTING]:
        name = show_name(entry.name)
        try:
            is_dir = entry.is_dir()
            link = entry.is_symlink()
        except OSError:
            is_dir = link = False
        name += "/" if is_dir else ""
        if link:
            try:
                name += f" -> {show_name(os.readlink(entry.path))}"
            except OSError:
                pass
        lines.append(name)
    if len(entries) > MAX_LISTING:
        lines.append(
            f"\n[{MAX_LISTING} of {len(entries)} entries; the rest: "
            f'ls {{"path": "{shown}", "offset": {MAX_LISTING + 1}}}]'
        )
    return "\n".join(lines)
