"""Writing JSON lines: one object a line, UTF-8, flushed as it happens, and never failing.

Every line goes through the one total encoder (``owltui.text.wirejson``, reached through the
session layer): lone surrogates become U+FFFD, U+2028/U+2029/U+0085 are escaped, NaN and Infinity
become ``null``, unknown values are converted. So no value can mute the stream.

A write error mutes nothing for good either: only a reader that went away (broken pipe, closed
stream) stops the writing, because nobody is left to read. Any other error (no space on a file,
``EAGAIN`` on a non-blocking pipe that stays full) loses that one line, says so once on stderr, and
the next line is tried again. A short write is finished before the next line starts, so a line is
never cut in the middle.
"""

from __future__ import annotations

import errno
import select
import sys
from typing import Any, BinaryIO

from owltui.session.store.file import wire_line

_GONE = (errno.EPIPE, errno.EBADF, errno.ECONNRESET)


def json_line(obj: Any) -> bytes:
    """One encoded line with its ``\\n``: valid UTF-8, valid JSON, no other line break."""
    return wire_line(obj)


class JsonLines:
    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.broken = False  # the reader went away: keep running, stop writing
        self.lost = 0  # lines lost to other write errors
        self._said = False
        self._cut = False  # a lost line was partly written: the next one starts on a fresh line

    def write(self, obj: Any) -> None:
        if self.broken:
            return
        data = json_line(obj)
        if self._cut:
            data = b"\n" + data
        try:
            self._write_all(data)
            self._flush()
        except BrokenPipeError:
            self.broken = True
        except ValueError:  # the stream was closed
            self.broken = True
        except OSError as exc:
            if exc.errno in _GONE:
                self.broken = True
                return
            self.lost += 1
            if not self._said:
                self._said = True
                try:
                    print(
                        f"owltui: warning: could not write an output line ({exc.strerror or exc}); "
                        "continuing",
                        file=sys.stderr,
                        flush=True,
                    )
                except (OSError, ValueError):
                    pass

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = self.stream.write(view)
            except BlockingIOError as exc:  # a non-blocking pipe is full: wait, then finish the line
                n = exc.characters_written
                self._wait_writable()
            if n is None:  # a raw non-blocking stream that took nothing
                self._wait_writable()
                continue
            if n:
                self._cut = True
            view = view[n:]
        self._cut = False

    def _flush(self) -> None:
        while True:
            try:
                self.stream.flush()
                return
            except BlockingIOError:
                self._wait_writable()

    def _wait_writable(self) -> None:
        try:
            fd = self.stream.fileno()
        except (OSError, ValueError, AttributeError):
            return
        _, ready, _ = select.select([], [fd], [], 30.0)
        if not ready:
            raise OSError(errno.EAGAIN, "the output pipe stayed full for 30 s")
