"""A command's output as OwlTUI keeps it: ``OutputSink``, a thread-safe store of sanitised text with
secrets scrubbed, bounded in memory (spilled to a file once it passes the large-result limits, so a
command printing 100 MB never sits in memory), with its head, tail and the progress not yet shown."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path
from typing import TextIO

from owltui.agent.services import Scrubber
from owltui.tools.base import MAX_BYTES, MAX_LINES

HEAD_CHARS, HEAD_LINES = 20_000, 800
TAIL_CHARS, TAIL_LINES = 20_000, 800
PROGRESS_CHARS = 64_000
HOLD_CHARS = 256  # an unfinished line is held back this far so a secret split between reads is seen whole


def _last_lines(text: str, lines: int, chars: int) -> str:
    text = text[-chars:]
    parts = text.split("\n")
    if len(parts) > lines + 1:
        parts = parts[-(lines + 1) :]
    return "\n".join(parts)


def _first_lines(text: str, lines: int, chars: int) -> str:
    text = text[:chars]
    return "\n".join(text.split("\n")[:lines])


class OutputSink:
    """Thread-safe store of a command's sanitised output with bounded memory."""

    def __init__(self, spill_dir: Path, scrubber: Scrubber | None = None) -> None:
        self._lock = threading.Lock()
        self._spill_dir = spill_dir
        self._scrubber = scrubber
        self._carry = ""
        self._mem: list[str] = []
        self._head = ""
        self._tail = ""
        self._progress: list[str] = []
        self._progress_chars = 0
        self._progress_dropped = 0
        self._file: TextIO | None = None
        self.path: Path | None = None
        self.chars = 0
        self.lines = 0
        self._note_newlines = 0  # newlines the notes added at the end of the spilled file
        self._ends_line = True  # the last character kept is a newline (or nothing is kept)

    def _scrub(self, text: str, final: bool = False) -> str:
        """Scrub ``text`` after what was held back; hold back the end of an unfinished line."""
        assert self._scrubber is not None
        text = self._scrubber.scrub(self._carry + text)
        if final:
            self._carry = ""
            return text
        hold = max(self._scrubber.longest - 1, HOLD_CHARS)
        cut = text.rfind("\n") + 1
        if len(text) - cut > hold:
            cut = len(text) - hold
        self._carry = text[cut:]
        return text[:cut]

    def write(self, text: str) -> None:
        if self._scrubber is not None and text:
            text = self._scrub(text)
        self._commit(text)

    def _commit(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            self.chars += len(text)
            self.lines += text.count("\n")
            self._ends_line = text.endswith("\n")
            if self._progress_chars < PROGRESS_CHARS:
                self._progress.append(text)
                self._progress_chars += len(text)
            else:
                self._progress_dropped += len(text)
            if len(self._head) < HEAD_CHARS:
                self._head += text[: HEAD_CHARS - len(self._head)]
            self._tail += text
            if len(self._tail) > 2 * TAIL_CHARS:
                self._tail = self._tail[-TAIL_CHARS:]
            if self._file is not None:
                self._file.write(text)
                return
            self._mem.append(text)
            if self.chars > MAX_BYTES or self.lines > MAX_LINES:
                self._spill()

    def _spill(self) -> None:
        self._spill_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="bash-", suffix=".log", dir=self._spill_dir)
        self._file = os.fdopen(fd, "w", encoding="utf-8", errors="replace")
        self.path = Path(name)
        self._file.write("".join(self._mem))
        self._mem = []

    @property
    def file_lines(self) -> int | None:
        """The spilled file's lines as a reader of it counts them (its newlines, plus an unfinished
        last line), kept as it is written so nobody reads 100 MB back to count them; None when the
        output did not spill."""
        with self._lock:
            if self.path is None:
                return None
            return self.lines + self._note_newlines + (0 if self._ends_line else 1)

    def close(self) -> None:
        if self._carry:
            self._commit(self._scrub("", final=True))
        with self._lock:
            if self._file is not None:
                self._file.close()

    def note_in_file(self, note: str) -> None:
        """Append ``note`` (the exit code, what is still running) at the end of the spilled file,
        on a line of its own: whoever shows the file's tail in place of ``preview`` shows it too.
        Nothing happens when the output did not spill."""
        with self._lock:
            if self.path is None:
                return
            sep = "" if not self._tail or self._tail.endswith("\n") else "\n"
            text = f"{sep}\n{note.strip()}\n"
            with contextlib.suppress(OSError), self.path.open("a", encoding="utf-8", errors="replace") as fh:
                fh.write(text)
                self._note_newlines += text.count("\n")
                self._ends_line = True

    def take_progress(self) -> str:
        with self._lock:
            text = "".join(self._progress)
            if self._progress_dropped:
                text += f"\n… ({self._progress_dropped} characters not shown)\n"
            self._progress, self._progress_chars, self._progress_dropped = [], 0, 0
        return text

    def preview(self) -> str:
        """All of the output when small, else its head and tail with a notice between them."""
        with self._lock:
            if self.path is None:
                return "".join(self._mem)
            head = _first_lines(self._head, HEAD_LINES, HEAD_CHARS)
            tail = _last_lines(self._tail, TAIL_LINES, TAIL_CHARS)
            chars, lines = self.chars, self.lines
        return (
            f"{head}\n\n[… output is {lines} lines / {chars} characters; showing the first "
            f"{head.count(chr(10)) + 1} and last {tail.count(chr(10)) + 1} lines; the whole output is "
            f"saved …]\n\n{tail}"
        )

    def tail(self, lines: int = 20, chars: int = 2000) -> str:
        with self._lock:
            source = self._tail if self.path is not None else "".join(self._mem)
        return _last_lines(source.rstrip("\n"), lines - 1, chars)
