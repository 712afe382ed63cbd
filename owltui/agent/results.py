"""Large tool results: saved whole to a file; the model gets head and tail plus the exact reread call.

``ResultStore`` owns the files (one directory, usually the session's ``results/``); ``ReadResult``
is the ``read_result`` tool the loop adds to every run that carries at least one tool. Lines are
counted from 1. Files are streamed, never loaded whole.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from itertools import islice
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from .tool import ToolContext, ToolError, ToolOutput

MAX_BYTES = 50 * 1024
MAX_LINES = 2000
HEAD_BYTES = 30 * 1024
TAIL_BYTES = 16 * 1024


def is_large(text: str) -> bool:
    return len(text) > MAX_BYTES or text.count("\n") >= MAX_LINES


def reread_call(result_id: str, offset: int, limit: int = MAX_LINES) -> str:
    args = json.dumps({"result_id": result_id, "offset": offset, "limit": limit})
    return f"read_result {args}"


class ResultStore:
    def __init__(self, directory: Path | None = None) -> None:
        self._dir = directory
        self._count = 0

    @property
    def directory(self) -> Path:
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="owltui-results-"))
        self._dir.mkdir(parents=True, exist_ok=True)
        return self._dir

    def _next_id(self) -> str:
        self._count += 1
        rid = f"r{self._count}"
        while (self.directory / f"{rid}.txt").exists():
            self._count += 1
            rid = f"r{self._count}"
        return rid

    def path(self, result_id: str) -> Path:
        if not result_id.replace("r", "", 1).isdigit():
            raise ToolError(f"Unknown result id {result_id!r}: ids look like 'r7'.")
        return self.directory / f"{result_id}.txt"

    def save(self, content: str | None, source: Path | None = None) -> tuple[str, Path]:
        rid = self._next_id()
        dest = self.path(rid)
        if source is not None:
            try:
                source.replace(dest)
            except OSError:
                shutil.copyfile(source, dest)
        else:
            dest.write_text(content or "", encoding="utf-8", errors="replace")
        return rid, dest

    def preview(self, result_id: str, path: Path, name: str) -> str:
        """Head and tail of a saved result, with the exact call that reads the rest."""
        total_lines = 0
        head: list[str] = []
        head_bytes = 0
        tail: list[str] = []
        tail_bytes = 0
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                total_lines += 1
                if head_bytes + len(line) <= HEAD_BYTES and len(head) < MAX_LINES // 2:
                    head.append(line)
                    head_bytes += len(line)
                    continue
                tail.append(line[:2000])
                tail_bytes += len(line[:2000])
                while tail and (tail_bytes > TAIL_BYTES or len(tail) > 200):
                    tail_bytes -= len(tail.pop(0))
        size = path.stat().st_size
        head_n = len(head)
        tail_start = total_lines - len(tail) + 1
        parts = ["".join(head).rstrip("\n")]
        if tail and tail_start > head_n + 1:
            parts.append(f"\n[... lines {head_n + 1}-{tail_start - 1} omitted ...]\n")
        if tail:
            parts.append("".join(tail).rstrip("\n"))
        parts.append(
            f"\n[The full output of {name} ({total_lines} lines, {size} bytes) was saved as result "
            f"{result_id}. Read the omitted part with exactly this call: "
            f"{reread_call(result_id, head_n + 1)}]"
        )
        return "\n".join(p for p in parts if p)


class ReadResultParams(BaseModel):
    result_id: str = Field(description="The id of a saved result, e.g. 'r7'.")
    offset: int = Field(1, ge=1, description="First line to read, counting from 1.")
    limit: int = Field(MAX_LINES, ge=1, le=MAX_LINES, description="How many lines to read.")


class ReadResult:
    name: ClassVar[str] = "read_result"
    description: ClassVar[str] = (
        "Read part of a tool result that was too large to show whole and was saved. Use the exact call "
        "given in the truncated result; offset and limit count lines from 1."
    )
    params: ClassVar[type[BaseModel]] = ReadResultParams
    read_only: ClassVar[bool] = True

    def __init__(self, store: ResultStore) -> None:
        self.store = store

    async def run(self, args: ReadResultParams, ctx: ToolContext) -> ToolOutput:
        path = self.store.path(args.result_id)
        if not path.exists():
            raise ToolError(f"No saved result {args.result_id!r}.")
        out: list[str] = []
        size = 0
        last = args.offset - 1
        cut = False
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(islice(fh, args.offset - 1, args.offset - 1 + args.limit), args.offset):
                if size + len(line) > MAX_BYTES and out:
                    cut = True
                    break
                out.append(f"{n}\t{line.rstrip(chr(10))}")
                size += len(line)
                last = n
            more = cut or fh.readline() != ""
        if not out:
            return ToolOutput(f"Result {args.result_id} has no lines from {args.offset} on.")
        text = "\n".join(out)
        if more:
            text += f"\n[More lines follow. Continue with: {reread_call(args.result_id, last + 1)}]"
        return ToolOutput(text)
