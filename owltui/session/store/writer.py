"""The append side of a session file: the header first in a new file, then one whole line per entry
(``id``, ``parent_id``: the entry it hangs on, ``ts``), fsynced, secrets scrubbed.

- Lines are encoded by the total encoder (``owltui.text.wirejson``): a lone surrogate (a
  non-UTF-8 file name) is kept as a ``\\udcXX`` escape, so the text comes back exactly on load.
- A short write is finished and a failed line is cut off again, so the file only ever holds whole
  lines; a torn last line left by a crash is cut off when the file is opened (``_repair_tail``).
- The file is locked (``flock``, exclusive, non-blocking) while a process has it open.
- A write that fails (disk full, ``ulimit -f``, I/O error) raises ``SessionError`` once from
  ``append`` (the loop ends the run with it as its error: one line, exit 1), is warned about once
  for other entries, and the next write tries again.
"""

from __future__ import annotations

import errno
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from owltui.session.redact import Redactor
from owltui.session.store.file import (
    SessionError,
    Warn,
    lock_file,
    new_id,
    now,
    reason,
    stderr_warn,
    unwritable_dir,
    write_all,
)
from owltui.text.wirejson import dumps

FORMAT_VERSION = 1


class SessionWriter:
    """Writes a session's entries to its file; ``SessionStore`` builds the conversation on it."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        cwd: Path,
        model: str,
        created: datetime,
        redactor: Redactor | None = None,
        warn: Warn | None = None,
    ) -> None:
        self.path = path
        self.id = session_id
        self.cwd = cwd
        self.model = model
        self.created = created
        self.redactor = redactor or Redactor()
        self.warn: Warn = warn or stderr_warn
        self._leaf: str | None = None
        self._fd: int | None = None
        self._size = 0  # bytes of whole lines in the file (a failed line is cut back to this)
        self._failure: str | None = None  # while writes fail: the sentence describing it
        self._raised = False  # this failure was raised from append already
        self.unsaved = 0  # entries lost to write failures (kept in memory only)
        self.closed = False

    def _repair_tail(self, fd: int, data: bytes, good_end: int, torn: bool) -> int:
        """Cut a torn last line off the file (``parse_lines`` found it: ``torn``, the whole lines end
        at ``good_end``) and end the last line with a newline; the new size."""
        size = len(data)
        try:
            if torn:
                os.ftruncate(fd, good_end)  # the next append starts a clean line
                size = good_end
            if size and not data[:size].endswith(b"\n"):
                write_all(fd, b"\n")  # a complete last record that lost only its newline
                size += 1
        except OSError as exc:
            raise SessionError(f"Cannot repair session file {self.path}: {reason(exc)}.") from None
        return size

    def _header(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "cwd": str(self.cwd),
            "created": self.created.isoformat(),
            "model": self.model,
        }

    def _open_file(self) -> int:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            if exc.errno in (
                errno.EACCES,
                errno.EPERM,
                errno.ENOENT,
                errno.ENOTDIR,
                errno.EROFS,
                errno.EEXIST,
            ):
                raise unwritable_dir(directory, exc) from None
            raise
        try:
            lock_file(fd, self.path)
            self._size = os.fstat(fd).st_size
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _line(self, record: dict[str, Any]) -> bytes:
        text = self.redactor.scrub(dumps(record, surrogates="escape"))
        return (text + "\n").encode("utf-8", "replace")

    def _put(self, data: bytes) -> None:
        """Append whole lines and fsync; on failure cut the file back to its last whole line."""
        assert self._fd is not None
        try:
            write_all(self._fd, data)
            os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
            raise
        self._size += len(data)

    def _write(self, record: dict[str, Any], strict: bool = False) -> bool:
        """Write one line (the header first in a new file). True when it is on disk.

        A failure raises SessionError when ``strict`` (``append``) and it was not raised yet; it is
        otherwise warned about once. The next write tries again."""
        if self.closed:
            return False
        try:
            if self._fd is None:
                self._fd = self._open_file()
            data = self._line(record)
            if self._size == 0:
                data = self._line(self._header()) + data
            self._put(data)
        except SessionError as exc:
            return self._failed(str(exc), strict)
        except OSError as exc:
            return self._failed(f"Cannot write session file {self.path}: {reason(exc)}.", strict)
        self._failure = None
        self._raised = False
        return True

    def _failed(self, message: str, strict: bool) -> bool:
        """One message per outage: raised from ``append`` (the run ends with it), else warned."""
        first = self._failure is None
        self._failure = message
        if strict and not self._raised:
            self._raised = True
            raise SessionError(message)
        self.unsaved += 1
        if first:
            self.warn(f"{message} Later entries of this session may not be saved.")
        return False

    @property
    def failure(self) -> str | None:
        """While writes fail: the sentence describing why (None when the file is healthy)."""
        return self._failure

    def _entry(self, kind: str, moves_leaf: bool = True, strict: bool = False, **fields: Any) -> str:
        eid = new_id()[:8]
        self._write(
            {"type": kind, "id": eid, "parent_id": self._leaf, "ts": now().isoformat(), **fields}, strict
        )
        if moves_leaf:
            self._leaf = eid
        return eid

    def __del__(self) -> None:
        # a store dropped without close() must not keep the session locked for the process's life
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            try:
                os.close(fd)
            except Exception:
                pass

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.closed = True
