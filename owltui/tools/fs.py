"""File tools: ``read`` (numbered, truncated, binary-safe), ``write`` (atomic), ``edit`` (exact replace)."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from pathlib import Path

import anyio
from pydantic import Field

from owltui.agent.tool import ToolContext, ToolError, ToolOutput

from .base import MAX_BYTES, MAX_LINES, Params, display_path, resolve_path, utf8_len
from .sanitize import sanitize

BOM = b"\xef\xbb\xbf"


def _similar_names(path: Path, workspace: Path) -> list[str]:
    """Close matches for a missing file: siblings first, then same-named files in the workspace."""
    parent = path.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    try:
        siblings = [p.name for p in parent.iterdir()]
    except OSError:
        siblings = []
    matches = difflib.get_close_matches(path.name, siblings, 5, 0.6)
    close = [display_path(workspace, parent / n) for n in matches]
    if len(close) < 5:
        seen = 0
        for root, dirs, files in os.walk(workspace):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
            seen += len(files)
            if path.name in files:
                hit = display_path(workspace, Path(root) / path.name)
                if hit not in close:
                    close.append(hit)
            if seen > 20000 or len(close) >= 5:
                break
    return close


def _missing(path: Path, workspace: Path) -> ToolError:
    names = _similar_names(path, workspace)
    hint = f" Did you mean: {', '.join(names)}?" if names else ""
    return ToolError(f"File not found: {display_path(workspace, path)}.{hint}")


def _is_binary(sample: bytes) -> bool:
    if b"\0" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 4  # a cut multibyte character at the end is fine
    return False


class ReadParams(Params):
    path: str = Field(description="File to read, relative to the workspace or absolute.")
    offset: int | None = Field(None, ge=1, description="First line to show, counting from 1.")
    limit: int | None = Field(
        None, ge=1, description=f"How many lines to show (at most {MAX_LINES} are shown per call)."
    )


def _read_lines(path: Path, offset: int, limit: int) -> tuple[list[str], int, bool]:
    """Lines [offset, offset+limit) within the byte budget, the file's line count, and whether the
    last shown line was cut by the budget."""
    shown: list[str] = []
    budget = MAX_BYTES
    cut = False
    total = 0
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            total = number
            if number < offset or len(shown) >= limit or budget <= 0:
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
            size = utf8_len(line) + 8
            if size > budget:
                if shown:
                    budget = 0
                    continue
                line = line.encode("utf-8")[: budget - 8].decode("utf-8", errors="ignore")
                cut = True
                budget = 0
            else:
                budget -= size
            shown.append(line)
    return shown, total, cut


class ReadTool:
    name = "read"
    description = (
        "Read a text file with numbered lines. `offset` and `limit` count lines from 1. At most "
        f"{MAX_LINES} lines or {MAX_BYTES // 1024} KB are shown per call; the notice at the end gives the "
        "offset to continue from. Binary files are refused."
    )
    params = ReadParams
    read_only = True

    async def run(self, args: ReadParams, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(ctx.workspace, args.path)
        shown_name = display_path(ctx.workspace, path)
        if path.is_dir():
            raise ToolError(f"{shown_name} is a directory; use ls to list it.")
        if not path.exists():
            raise _missing(path, ctx.workspace)
        try:
            with path.open("rb") as fh:
                sample = fh.read(8192)
        except OSError as exc:
            raise ToolError(f"Cannot read {shown_name}: {exc.strerror}") from exc
        if _is_binary(sample):
            size = path.stat().st_size
            raise ToolError(f"{shown_name} is a binary file ({size} bytes); read shows text files only.")
        offset = args.offset or 1
        limit = min(args.limit or MAX_LINES, MAX_LINES)
        lines, total, cut = await anyio.to_thread.run_sync(_read_lines, path, offset, limit)
        if total == 0:
            return ToolOutput(f"({shown_name} is empty)")
        if offset > total:
            raise ToolError(f"offset {offset} is past the end of {shown_name} ({total} lines).")
        body = "\n".join(f"{offset + i:>6}\t{sanitize(line)}" for i, line in enumerate(lines))
        last = offset + len(lines) - 1
        if cut:
            body += (
                f"\n\n[Line {last} is longer than {MAX_BYTES // 1024} KB and was cut; "
                f"use bash (e.g. `sed -n '{last}p' {shown_name} | cut -c1-...`) to see the rest.]"
            )
        if last < total:
            body += f"\n\n[Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.]"
        return ToolOutput(body, details={"path": str(path), "first": offset, "last": last, "total": total})


def atomic_write(path: Path, data: bytes) -> bool:
    """Write via a temp file in the same directory and rename; keeps an existing file's mode and
    writes through a symlink to its target. Returns True when the file already existed."""
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        new_mode = 0o666 & ~umask
    else:
        new_mode = mode
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, new_mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return mode is not None


class WriteParams(Params):
    path: str = Field(description="File to write, relative to the workspace or absolute.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool:
    name = "write"
    description = (
        "Write a file with the given content, replacing it if it exists. Parent directories are "
        "created; the write is atomic and keeps the file's permissions. Use edit for small changes."
    )
    params = WriteParams
    read_only = False

    async def run(self, args: WriteParams, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(ctx.workspace, args.path)
        if path.is_dir():
            raise ToolError(f"{display_path(ctx.workspace, path)} is a directory.")
        data = args.content.encode("utf-8")
        try:
            existed = await anyio.to_thread.run_sync(atomic_write, path, data)
        except OSError as exc:
            raise ToolError(f"Cannot write {display_path(ctx.workspace, path)}: {exc.strerror}") from exc
        lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
        verb = "Overwrote" if existed else "Created"
        return ToolOutput(
            f"{verb} {display_path(ctx.workspace, path)} ({len(data)} bytes, {lines} lines).",
            details={"path": str(path), "created": not existed},
        )


class EditParams(Params):
    path: str = Field(description="File to edit, relative to the workspace or absolute.")
    old_text: str = Field(
        description="Exact text to replace, including whitespace and indentation; must occur exactly once "
        "unless replace_all is set."
    )
    new_text: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring one.")


def _small_diff(before: str, after: str, name: str, max_lines: int = 80) -> str:
    diff = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{name}", f"b/{name}", n=2, lineterm=""
        )
    )
    if len(diff) > max_lines:
        diff = [*diff[:max_lines], f"... ({len(diff) - max_lines} more diff lines)"]
    return sanitize("\n".join(diff))


class EditTool:
    name = "edit"
    description = (
        "Replace exact text in a file. `old_text` must match the file exactly (whitespace included) and "
        "occur once, unless `replace_all` is true. Line endings and a UTF-8 BOM are kept. Returns a diff."
    )
    params = EditParams
    read_only = False

    async def run(self, args: EditParams, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(ctx.workspace, args.path)
        name = display_path(ctx.workspace, path)
        if not path.is_file():
            raise _missing(path, ctx.workspace) if not path.exists() else ToolError(f"{name} is not a file.")
        if not args.old_text:
            raise ToolError("old_text is empty; use write to create or replace a whole file.")
        raw = path.read_bytes()
        bom = raw.startswith(BOM)
        try:
            text = raw[len(BOM) if bom else 0 :].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{name} is not UTF-8 text; edit cannot change it.") from exc
        old, new = args.old_text, args.new_text
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old:
            old = old.replace("\r\n", "\n").replace("\n", "\r\n")
            new = new.replace("\r\n", "\n").replace("\n", "\r\n")
            count = text.count(old)
        if count == 0:
            hint = ""
            if " ".join(args.old_text.split()) in " ".join(text.split()):
                hint = " It matches when whitespace is ignored: check indentation and spaces."
            raise ToolError(f"old_text was not found in {name}.{hint} Read the file and copy it exactly.")
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_text matches {count} times in {name}; include more surrounding lines to make it "
                "unique, "
                "or set replace_all to replace every occurrence."
            )
        updated = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
        if updated == text:
            raise ToolError("No change: new_text is the same as old_text.")
        data = (BOM if bom else b"") + updated.encode("utf-8")
        await anyio.to_thread.run_sync(atomic_write, path, data)
        replaced = count if args.replace_all else 1
        diff = _small_diff(text.replace("\r\n", "\n"), updated.replace("\r\n", "\n"), name)
        return ToolOutput(
            f"Replaced {replaced} occurrence{'s' if replaced != 1 else ''} in {name}.\n{diff}",
            details={"path": str(path), "replacements": replaced},
        )
