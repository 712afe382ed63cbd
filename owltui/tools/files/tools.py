"""File tools: ``read`` (numbered pages of faithful text), ``write`` (atomic), ``edit`` (exact replace);
the new bytes go to disk through ``put`` (the editor the session runs in, else an atomic write).

All three open regular files only (pipes, sockets, devices and ``/dev/stdin`` get a clear error) and
do their file work in a worker thread. ``read`` streams the file in 1 MiB chunks and keeps only the
page (``paging``), so memory is bounded by the page whatever the length of a line; a line too long
for one page is read by character ranges (``column``). Encodings, visible control characters and the
way ``edit`` matches the text as ``read`` shows it are in ``textcodec``.
"""

from __future__ import annotations

import difflib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import Field

from owltui.agent.paging import NOTICE_BYTES, Page, Stopped
from owltui.agent.tool import ToolContext, ToolError, ToolOutput, in_thread
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.text.codec import (
    HEAD_BYTES,
    Encoding,
    ViewMap,
    follow_style,
    head_text,
    line_ending,
    read_head,
    sniff,
    unvisible,
    visible,
)
from owltui.tools.base import MAX_BYTES, MAX_LINES, Params, display_path, open_regular, resolve_path
from owltui.tools.files.image import read_image
from owltui.tools.files.paging import open_text, page_text, read_page
from owltui.tools.files.put import put_file
from owltui.tools.files.suggest import suggestions

MAX_EDIT_BYTES = 64 * 1024 * 1024


def _missing(path: Path, workspace: Path, stop: threading.Event) -> ToolError:
    names = suggestions(path, workspace, stop)
    hint = f" Did you mean: {', '.join(names)}?" if names else ""
    return ToolError(f"File not found: {display_path(workspace, path)}.{hint}")


def _open_text(path: Path, workspace: Path, stop: threading.Event) -> tuple[int, Encoding, bytes, int]:
    """Open a regular file and name its encoding: (fd, encoding, head, size). Directories, missing
    files (with suggestions), special files and binary files are ToolErrors."""
    shown = display_path(workspace, path)
    if os.path.isdir(path):
        raise ToolError(f"{shown} is a directory; use ls to list it.")
    if not os.path.exists(path):
        raise _missing(path, workspace, stop)
    return open_text(path, shown, "read shows text files only.")


# --- read ------------------------------------------------------------------------------------------
class ReadParams(Params):
    path: str = Field(description="File to read, relative to the workspace or absolute.")
    offset: int | None = Field(None, ge=1, description="First line to show, counting from 1.")
    limit: int | None = Field(
        None, ge=1, description=f"How many lines to show (at most {MAX_LINES} are shown per call)."
    )
    column: int | None = Field(
        None,
        ge=1,
        description="First character of line `offset` to show, counting from 1: reads a line too long "
        "for one page in character ranges (the notice gives the next column).",
    )


class ReadTool:
    name = "read"
    description = (
        "Read a text file with numbered lines. `offset` and `limit` count lines from 1. A page holds up "
        f"to {MAX_LINES} lines and {MAX_BYTES // 1024} KB; the notice at its end says how to continue. "
        "Text is decoded from "
        "UTF-8, UTF-16 with a BOM, or else Windows-1252/Latin-1, and the notice names "
        "any encoding but UTF-8; only binary files are refused. Characters a terminal would hide or act on "
        "are shown visibly: controls other than tab as Control Pictures (carriage return ␍, form feed ␌, "
        "escape ␛, NUL ␀), invisible format characters as \\uXXXX, bytes that are not UTF-8 as \\xNN; the "
        "\\r of CRLF line endings is not shown. edit accepts text exactly as read shows it."
    )
    params = ReadParams
    read_only = True

    async def run(self, args: ReadParams, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(ctx.workspace, args.path)
        denied = ctx.services.read_filter  # [deny] read rules: symlinks and hard links included
        shown_name = display_path(ctx.workspace, path)
        offset = args.offset or 1
        limit = min(args.limit or MAX_LINES, MAX_LINES)
        column = args.column or 1

        def work(stop: threading.Event) -> tuple[Page, Encoding, str] | ToolOutput:
            # in the worker: a hard-link check may scan the workspace for the denied files' inodes
            if denied is not None and (why := denied(path)):
                raise ToolError(why)
            if (image := read_image(path, shown_name, ctx)) is not None:
                return image
            fd, enc, head, _size = _open_text(path, ctx.workspace, stop)
            newline = line_ending(head_text(head, enc))
            try:
                page = read_page(fd, enc, offset, limit, column, MAX_BYTES - NOTICE_BYTES, stop)
            except Stopped as exc:
                raise ToolError("Cancelled.") from exc
            return page, enc, newline

        done = await in_thread(work, ctx)
        if isinstance(done, ToolOutput):
            return done
        page, enc, newline = done
        if page.total == 0:
            return ToolOutput(f"({shown_name} is empty)", details={"path": shown_name, "total": 0})
        if not page.lines:
            raise ToolError(f"offset {offset} is past the end of {shown_name} ({page.total} lines).")
        body, last = page_text(page, enc, newline)
        details = {
            "path": shown_name,
            "first": offset,
            "last": last,
            "total": page.total,
            "encoding": enc.label,
            "no_spill": True,
        }
        return ToolOutput(body, details=details)


# --- write -----------------------------------------------------------------------------------------
def _git_watch(ctx: ToolContext) -> SandboxPolicy | None:
    """The session's sandbox, refreshed, when it audits git metadata (see ``audit_git``); a walk of
    the workspace's changed directories, so the tools call it in a worker thread."""
    sandbox = ctx.services.sandbox
    if not isinstance(sandbox, SandboxPolicy) or sandbox.mode != "workspace-write":
        return None
    sandbox.refresh_git()
    return sandbox


def _planted(sandbox: SandboxPolicy | None) -> str:
    """The git repositories a write planted, renamed, as lines to add to the result."""
    return "".join(f"\n{note}" for note in sandbox.audit_git()) if sandbox is not None else ""


class WriteParams(Params):
    path: str = Field(description="File to write, relative to the workspace or absolute.")
    content: str = Field(description="The complete new content of the file.")


def _existing_style(path: Path, shown: str) -> tuple[Encoding | None, str | None]:
    """Encoding and line-ending style of an existing text file, (None, None) for a new, empty or
    binary one."""
    if not os.path.lexists(path) or not os.path.exists(path):
        return None, None
    fd = open_regular(path, shown)
    with os.fdopen(fd, "rb") as fh:
        head = read_head(fh)
    if not head:
        return None, None
    enc = sniff(head, complete=len(head) < HEAD_BYTES)
    if enc is None:
        return None, None
    sample = head_text(head, enc)
    return enc, (line_ending(sample) if "\n" in sample else None)


def _encode(text: str, enc: Encoding, shown: str) -> bytes:
    try:
        return enc.encode(text)
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        line = text.count("\n", 0, exc.start) + 1
        raise ToolError(
            f"{shown} is {enc.label} text, which cannot hold {visible(bad, False)!r} (line {line}); "
            "nothing was written. Use characters the encoding has, or convert the file first "
            "(e.g. with iconv in bash)."
        ) from exc


class WriteTool:
    name = "write"
    description = (
        "Write a file with the given content, replacing it if it exists. Parent directories are "
        "created; the write is atomic and keeps the file's permissions. An existing file keeps its "
        "encoding (UTF-8, UTF-8 with BOM, UTF-16, Windows-1252) and line-ending style: the content's "
        "line ends are written in the file's style. New files are UTF-8. Use edit for small changes."
    )
    params = WriteParams
    read_only = False

    async def run(self, args: WriteParams, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(ctx.workspace, args.path)
        shown = display_path(ctx.workspace, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory.")

        git = await anyio.to_thread.run_sync(_git_watch, ctx)

        def work(stop: threading.Event) -> tuple[bytes, Encoding]:
            enc, newline = _existing_style(path, shown)
            content = args.content
            if newline is not None:
                content = follow_style(content, newline)
            use = enc or Encoding("utf-8")
            return use.bom + _encode(content, use, shown), use

        data, enc = await in_thread(work, ctx)
        try:
            existed, size = await put_file(ctx, path, data), len(data)
        except OSError as exc:
            raise ToolError(f"Cannot write {shown}: {exc.strerror}") from exc
        planted = await anyio.to_thread.run_sync(_planted, git)
        content = args.content
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "Overwrote" if existed else "Created"
        kept = f", kept as {enc.label}" if existed and not enc.plain else ""
        return ToolOutput(
            f"{verb} {shown} ({size} bytes, {lines} lines{kept}).{planted}",
            details={"path": shown, "created": not existed},
        )


# --- edit ------------------------------------------------------------------------------------------
class EditParams(Params):
    path: str = Field(description="File to edit, relative to the workspace or absolute.")
    old_text: str = Field(
        description="Exact text to replace, including whitespace and indentation, as read shows it; must "
        "occur exactly once unless replace_all is set."
    )
    new_text: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring one.")


def _find_all(hay: str, needle: str) -> list[int]:
    found: list[int] = []
    start = hay.find(needle)
    while start != -1:
        found.append(start)
        start = hay.find(needle, start + len(needle))
    return found


@dataclass
class _Match:
    spans: list[tuple[int, int]]  # in the file text
    new_text: str


def _locate(text: str, old: str, new: str, enc: Encoding, newline: str) -> _Match | None:
    """Where ``old`` occurs: literally; else with the file's CRLF line ends read as ``\\n``; else as
    read shows the text (visible forms). ``new`` comes back in the file's line-ending style (the
    style of the matched text, else the file's), with visible forms turned back into characters
    when the match needed them."""

    def style(spans: list[tuple[int, int]]) -> str:
        a, b = spans[0]
        if "\r\n" in text[a:b]:
            return "\r\n"
        if "\n" in text[a:b]:
            return "\n"
        return newline

    hits = _find_all(text, old)
    if hits:
        spans = [(h, h + len(old)) for h in hits]
        return _Match(spans, follow_style(new, style(spans)))
    old_n = old.replace("\r\n", "\n")
    for controls in (False, True):
        if not controls and "\r\n" not in text:
            continue
        vm = ViewMap(text, controls, enc.raw_bytes)
        spans = []
        tokens: set[str] = set()
        for h in _find_all(vm.view, old_n):
            a, b = vm.orig(h), vm.orig(h + len(old_n))
            if a is None or b is None:
                continue
            spans.append((a, b))
            tokens |= vm.tokens_in(h, h + len(old_n))
        if spans:
            replacement = follow_style(new, style(spans))
            if controls:
                replacement = unvisible(replacement, tokens, enc.raw_bytes)
            return _Match(spans, replacement)
    return None


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def _diff(before: str, after: str, first: int, last_before: int, last_after: int, name: str) -> str:
    """A unified diff of the changed region (``first``..``last_*`` are character positions), lines
    split on ``\\n`` only, shown visibly."""
    context = 2
    a0 = max(before.count("\n", 0, first) - context, 0)
    a1 = before.count("\n", 0, last_before) + 1 + context
    b1 = after.count("\n", 0, last_after) + 1 + context
    old_lines = [visible(s.removesuffix("\r"), False) for s in _lines(before)[a0:a1]]
    new_lines = [visible(s.removesuffix("\r"), False) for s in _lines(after)[a0:b1]]
    diff = list(difflib.unified_diff(old_lines, new_lines, f"a/{name}", f"b/{name}", n=context, lineterm=""))
    out: list[str] = []
    for row in diff:
        if row.startswith("@@"):
            spec = row.split()
            old_spec, new_spec = spec[1][1:].split(","), spec[2][1:].split(",")
            old_len = old_spec[1] if len(old_spec) > 1 else "1"
            new_len = new_spec[1] if len(new_spec) > 1 else "1"
            row = f"@@ -{int(old_spec[0]) + a0},{old_len} +{int(new_spec[0]) + a0},{new_len} @@"
        out.append(row)
    if len(out) > 80:
        out = [*out[:80], f"... ({len(out) - 80} more diff lines)"]
    return "\n".join(out)


class EditTool:
    name = "edit"
    description = (
        "Replace exact text in a file. `old_text` must match the file exactly (whitespace included), or as "
        "read shows it (line ends as \\n, visible forms such as ␍ or \\xNN), and occur once, unless "
        "`replace_all` is true. The file keeps its encoding, BOM and line-ending style; line ends in "
        "`new_text` are written in the style of the replaced text. Returns a diff."
    )
    params = EditParams
    read_only = False

    async def run(self, args: EditParams, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(ctx.workspace, args.path)
        name = display_path(ctx.workspace, path)
        if not args.old_text:
            raise ToolError("old_text is empty; use write to create or replace a whole file.")
        git = await anyio.to_thread.run_sync(_git_watch, ctx)

        def work(stop: threading.Event) -> tuple[bytes, int, str]:
            if os.path.isdir(path):
                raise ToolError(f"{name} is a directory.")
            fd, enc, _head, size = _open_text(path, ctx.workspace, stop)
            with os.fdopen(fd, "rb") as fh:
                if size > MAX_EDIT_BYTES:
                    raise ToolError(
                        f"{name} is {size} bytes; edit changes files up to {MAX_EDIT_BYTES // 2**20} MB "
                        "(use bash, e.g. sed, for larger ones)."
                    )
                raw = fh.read()
            try:
                text = enc.decode(raw[len(enc.bom) :])
            except UnicodeDecodeError as exc:
                raise ToolError(f"{name} is not valid {enc.label}; edit cannot change it safely.") from exc
            newline = line_ending(text[:HEAD_BYTES])
            old = args.old_text
            match = _locate(text, old, args.new_text, enc, newline)
            if match is None and enc.bom and old.startswith("\ufeff"):
                match = _locate(text, old[1:], args.new_text, enc, newline)
            if match is None:
                hint = ""
                if " ".join(old.split()) in " ".join(text.split()):
                    hint = " It matches when whitespace is ignored: check indentation and spaces."
                raise ToolError(f"old_text was not found in {name}.{hint} Read the file and copy it exactly.")
            count = len(match.spans)
            if count > 1 and not args.replace_all:
                raise ToolError(
                    f"old_text matches {count} times in {name}; include more surrounding lines to make it "
                    "unique, or set replace_all to replace every occurrence."
                )
            spans = match.spans if args.replace_all else match.spans[:1]
            pieces: list[str] = []
            pos = 0
            for a, b in spans:
                pieces += [text[pos:a], match.new_text]
                pos = b
            pieces.append(text[pos:])
            updated = "".join(pieces)
            if updated == text:
                raise ToolError("No change: new_text is the same as old_text.")
            data = enc.bom + _encode(updated, enc, name)
            first = spans[0][0]
            grow = len(match.new_text) * len(spans) - sum(b - a for a, b in spans)
            last_before = spans[-1][1]
            diff = _diff(text, updated, first, last_before, last_before + grow, name)
            return data, len(spans), diff

        data, replaced, diff = await in_thread(work, ctx)
        try:
            await put_file(ctx, path, data)
        except OSError as exc:
            raise ToolError(f"Cannot write {name}: {exc.strerror}") from exc
        planted = await anyio.to_thread.run_sync(_planted, git)
        return ToolOutput(
            f"Replaced {replaced} occurrence{'s' if replaced != 1 else ''} in {name}.\n{diff}{planted}",
            details={"path": name, "replacements": replaced},
        )
