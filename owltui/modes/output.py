"""Writing JSON lines: one object a line, UTF-8, flushed as it happens."""

from __future__ import annotations

import json
from typing import Any, BinaryIO


class JsonLines:
    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.broken = False

    def write(self, obj: dict[str, Any]) -> None:
        if self.broken:
            return
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            self.stream.write(line.encode("utf-8"))
            self.stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.broken = True  # the reader went away: keep running, stop writing
