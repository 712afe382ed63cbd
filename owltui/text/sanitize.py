"""Terminal safety: strip escape sequences and control characters from text.

Command output, file contents and the model's own text pass through ``sanitize`` before they reach
the model or the terminal, so nothing can retitle the window, clear the screen or hide text.
"""

from __future__ import annotations

import codecs
import re

# ESC-introduced strings (OSC, DCS, SOS, PM, APC) and their 8-bit forms, ended by BEL or ST; an
# unterminated one runs to the end of the text.
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"
_CSI = r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
_ESC = r"\x1b[\x20-\x2f]*[\x30-\x7e]?"
_CONTROLS = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
_PATTERN = re.compile(f"{_STRING}|{_CSI}|{_ESC}|{_CONTROLS}")
_CR = re.compile(r"[^\n]*\r[^\n]*")
# the ASCII characters that never need a change (printable, tab, newline): a plain ASCII text is
# checked for the others with one C-level pass instead of the pattern's slower scan
_PLAIN_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n"


def _collapse_cr(match: re.Match[str]) -> str:
    segments = [s for s in match.group(0).split("\r") if s]
    return segments[-1] if segments else ""


def sanitize(text: str) -> str:
    """Remove CSI/OSC/DCS/C1 sequences and control characters; keep ``\\n`` and ``\\t``.

    Carriage returns end a line segment the way a terminal redraws it: ``"10%\\r50%\\r100%"``
    becomes ``"100%"`` and ``"a\\r\\n"`` becomes ``"a\\n"``.
    """
    if text.isascii() and not text.encode("ascii").translate(None, _PLAIN_ASCII):
        return text
    if "\r" in text:
        text = _CR.sub(_collapse_cr, text)
    return _PATTERN.sub("", text)


def last_frame(line: str) -> str:
    """What a terminal keeps of an unfinished line that carriage returns redraw: the text after the
    last ``\\r`` that has any (a trailing ``\\r`` is kept, it may be the first half of ``\\r\\n``).
    ``sanitize(last_frame(x) + rest) == sanitize(x + rest)`` for any ``rest``."""
    cut = line.rfind("\r")
    if cut == -1:
        return line
    if cut < len(line) - 1:
        return line[cut + 1 :]
    start = line.rfind("\r", 0, cut)
    while start != -1 and start == cut - 1:  # "\r\r": look further back for the frame
        cut, start = start, line.rfind("\r", 0, start)
    return line[start + 1 : cut] + "\r" if cut > start + 1 else "\r"


class StreamSanitizer:
    """Incremental ``sanitize`` for byte streams: decodes UTF-8 across chunk boundaries and holds
    back the unfinished line so sequences split between chunks are still recognised.

    Carriage-return frames (progress bars) are reduced as they arrive: of an unfinished line only
    its last frame is held, so a line of any length redrawn by ``\\r`` comes out as its last frame.
    A single frame longer than ``hold`` characters is let through in pieces."""

    def __init__(self, hold: int = 8192) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._hold = hold

    def feed(self, data: bytes) -> str:
        text = self._pending + self._decoder.decode(data)
        cut = text.rfind("\n") + 1
        pending = last_frame(text[cut:])
        if len(pending) > self._hold:
            self._pending = ""
            return sanitize(text[:cut] + pending)
        self._pending = pending
        return sanitize(text[:cut])

    def close(self) -> str:
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        return sanitize(text)
