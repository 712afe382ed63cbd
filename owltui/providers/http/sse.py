"""Server-sent events decoder over raw bytes.

Lines end with ``\\r\\n``, ``\\n`` or ``\\r`` and nothing else: U+2028, U+0085 and friends stay inside
the data, as JSON allows them raw in strings (which is why ``str.splitlines`` and httpx's
``aiter_lines`` are not used). Lines are split as bytes and decoded whole, so a UTF-8 character split
across network reads is never broken. Comments (``: ping``) are skipped, ``data:`` may or may not
have a space, and a last event with no blank line after it is delivered by ``close()``.
"""

from __future__ import annotations

SSEEvent = tuple[str, str]
"""(event name, data); the name is ``"message"`` when the server sent none."""

_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Incremental decoder: ``feed`` bytes as they arrive, ``close`` at end of stream."""

    __slots__ = ("_buf", "_data", "_event", "_skip_lf", "_started")

    def __init__(self) -> None:
        self._buf = b""
        self._data: str | None = None
        self._event = ""
        self._skip_lf = False
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode one network read; returns the events it completed."""
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[0] == 10:  # the \n of a \r\n split across reads
                chunk = chunk[1:]
        if self._buf:
            chunk = self._buf + chunk
        if not self._started:
            if len(chunk) < 3 and _BOM.startswith(chunk):
                self._buf = chunk
                return []
            self._started = True
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
        if b"\r" in chunk:
            if chunk[-1] == 13:
                self._skip_lf = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        self._buf = lines.pop()
        return self._lines(lines) if lines else []

    def close(self) -> list[SSEEvent]:
        """End of stream: deliver a last line and event that had no terminator."""
        lines = [self._buf, b""] if self._buf else [b""]
        self._buf = b""
        return self._lines(lines)

    def _lines(self, lines: list[bytes]) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        data = self._data
        event = self._event
        for line in lines:
            if not line:
                if data is not None:
                    out.append((event or "message", data))
                    data = None
                event = ""
            elif line[:5] == b"data:":
                value = line[6:] if line[5:6] == b" " else line[5:]
                text = value.decode("utf-8", "replace")
                data = text if data is None else data + "\n" + text
            elif line[0] == 58:  # ':' comment
                continue
            else:
                name, sep, value = line.partition(b":")
                if sep and value[:1] == b" ":
                    value = value[1:]
                if name == b"event":
                    event = value.decode("utf-8", "replace").strip()
                elif name == b"data":  # "data" with no colon: an empty data line
                    data = "" if data is None else data + "\n"
                # id, retry and unknown fields are ignored
        self._data = data
        self._event = event
        return out
