"""The session file on disk: errors, the lock, whole-line writes, the sessions directory, and
reading a file back into JSON records (``parse_lines``: corrupt lines skipped, a torn last line
found). ``owltui.session.store.store`` builds the store on these."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from owltui.text.wirejson import encode

Warn = Callable[[str], None]


class SessionError(Exception):
    """A session cannot be found, read, locked or written: the message is one sentence for stderr."""


def wire_line(obj: Any) -> bytes:
    """One JSONL/RPC output line with its newline, from the total encoder (never fails)."""
    return encode(obj) + b"\n"


def new_id() -> str:
    return uuid.uuid4().hex[:12]


def now() -> datetime:
    return datetime.now(UTC)


def stderr_warn(text: str) -> None:
    try:
        print(f"owltui: warning: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def reason(exc: OSError) -> str:
    """What went wrong, in words (the common storage failures get a hint)."""
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EFBIG:
        return "file too large (the file size limit, ulimit -f, was reached)"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return (exc.strerror or str(exc) or type(exc).__name__).rstrip(".").lower()


def nearest_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if os.path.lexists(p):
            return p
    return path


def unwritable_dir(directory: Path, exc: OSError | None = None) -> SessionError:
    """The one sentence for a sessions directory that cannot be created or written."""
    blocker = nearest_existing(directory)
    if exc is not None:
        why = reason(exc)
    elif not blocker.is_dir():
        why = "it is not a directory"
    else:
        why = "it is not writable"
    where = "" if blocker == directory else f" ({blocker}: {why})"
    detail = f": {why}" if blocker == directory else where
    return SessionError(
        f"Cannot write sessions to {directory}{detail}; fix the data directory "
        "(XDG_DATA_HOME) or run with --no-session."
    )


def ensure_writable_dir(directory: Path) -> None:
    """Create ``directory`` if needed; SessionError (naming it and --no-session) when it cannot be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = nearest_existing(directory)
        raise unwritable_dir(
            directory,
            None
            if blocker != directory and not isinstance(exc, PermissionError | FileNotFoundError)
            else exc,
        ) from None
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise unwritable_dir(directory)


def in_use(path: Path) -> SessionError:
    sid = path.stem.split("_", 1)[-1]
    return SessionError(
        f"Session {sid} is in use by another OwlTUI process ({path}); finish that one "
        "first, or start a new session (without -c/--resume)."
    )


def lock_file(fd: int, path: Path) -> None:
    """Exclusive, non-blocking lock on the open session file; held until the descriptor is closed."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise in_use(path) from None
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise in_use(path) from None
        # ENOLCK / EOPNOTSUPP (some network file systems): carry on without a lock


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a short write is continued, never ignored)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[n:]


def parse_lines(data: bytes, path: Path, warn: Warn | None) -> tuple[list[dict[str, Any]], int, bool]:
    """JSON records of a session file, the byte offset after the last good line, and whether a torn
    last line was dropped."""
    records: list[dict[str, Any]] = []
    offset = 0
    good_end = 0
    torn = False
    lines = data.split(b"\n")
    for n, raw in enumerate(lines):
        last = n == len(lines) - 1
        end = offset + len(raw) + (0 if last else 1)
        if raw.strip():
            try:
                rec = json.loads(raw)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
            except (ValueError, RecursionError):
                if last or all(not rest.strip() for rest in lines[n + 1 :]):
                    torn = True
                    if warn:
                        warn(f"skipped a torn last line in session file {path}")
                    break
                if warn:
                    warn(f"skipped an unreadable line {n + 1} in session file {path}")
                offset = end
                good_end = end
                continue
            records.append(rec)
        offset = end
        good_end = end
    return records, good_end, torn
