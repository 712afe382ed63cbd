"""How ``write`` and ``edit`` put a file's new bytes on disk, after the permission check decided they
may: through the editor the session runs in when it has one (``ctx.services.editor``: the editor's
review then sees the change), else with an atomic write of their own.

The editor gets the file only when it can keep the bytes exactly: UTF-8 text without a byte-order
mark, with ``\\n`` line ends and no NUL (an editor may normalise CRLF, add or drop a BOM, and a
``fs/write_text_file`` carries text, not bytes). After the editor's write the bytes on disk are
compared with the bytes meant; when the editor's write failed or they differ, the tool writes the
file itself, so the result is always exactly what the tool computed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio.to_thread

from owltui.agent.tool import ToolContext
from owltui.files.atomic import atomic_write

log = logging.getLogger(__name__)


def editor_text(data: bytes) -> str | None:
    """``data`` as the text an editor would write back byte for byte, or None."""
    if data.startswith(b"\xef\xbb\xbf") or b"\r" in data or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _target(path: Path) -> tuple[Path, bool]:
    """Where a write of ``path`` lands (symlinks followed), and whether that file exists."""
    target = Path(os.path.realpath(path))
    return target, target.exists()


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False


async def put_file(ctx: ToolContext, path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` (through a symlink to its target); True when the file existed.
    Raises ``OSError`` when the local write fails."""
    editor = ctx.services.editor
    text = editor_text(data) if editor is not None else None
    if editor is not None and text is not None:
        target, existed = await anyio.to_thread.run_sync(_target, path)
        try:
            took = await editor.write(target, text)
        except Exception:  # the editor's failure is not the tool's: it writes the file itself
            log.warning("the editor's write of %s failed; writing it locally", target, exc_info=True)
            took = False
        if took and await anyio.to_thread.run_sync(_holds, target, data):
            return existed
        if took:
            log.warning("the editor wrote other bytes to %s; writing it locally", target)
        await anyio.to_thread.run_sync(atomic_write, path, data)
        return existed
    return await anyio.to_thread.run_sync(atomic_write, path, data)
