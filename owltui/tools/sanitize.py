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


def _collapse_cr(match: re.Match[str]) -> str:
    segments = [s for s in match.group(0).split("\r") if s]
    return segments[-1] if segments else ""


def sanitize(text: str) -> str:
    """Remove CSI/OSC/DCS/C1 sequences and control characters; keep ``\\n`` and ``\\t``.

    Carriage returns end a line segment the way a terminal redraws it: ``"10%\\r50%\\r100%"``
    becomes ``"100%"`` and ``"a\\r\\n"`` becomes ``"a\\n"``.
    """
    if "\r" in text:
        text = _CR.sub(_collapse_cr, text)
    return _PATTERN.sub("", text)


class StreamSanitizer:
    """Incremental ``sanitize`` for byte streams: decodes UTF-8 across chunk boundaries and holds
    back an unfinished line (up to ``hold`` characters) so sequences split between chunks are
    still recognised."""

    def __init__(self, hold: int = 8192) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._hold = hold

    def feed(self, data: bytes) -> str:
        text = self._pending + self._decoder.decode(data)
        cut = text.rfind("\n") + 1
        if len(text) - cut > self._hold:
            cut = len(text)
        self._pending = text[cut:]
        return sanitize(text[:cut])

    def close(self) -> str:
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        return sanitize(text)
