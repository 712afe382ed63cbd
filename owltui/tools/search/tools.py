"""Search tools: ``grep`` and ``find`` (both ripgrep, see ``rg`` for the ignore rules) and ``ls``.

Every page these tools return fits the loop's limits (fewer than MAX_LINES lines, at most MAX_BYTES
bytes, notices included) and says how many results were not shown; ``find`` and ``ls`` take an
``offset`` to page on. Paths that are not UTF-8 are shown with ``\\xNN`` and accepted back that way.

This module owns the three tools; globs live in ``globs``, grep's output reader in ``grep_output``
and its counting pass (a directory is never walked on one thread) in ``grep_files``.
"""

from __future__ import annotations

import os
import posixpath
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from owltui.agent.tool import ToolContext, ToolError, ToolOutput, in_thread
from owltui.text.codec import show_name
from owltui.tools.base import Params, display_path, resolve_path, utf8_len
from owltui.tools.search.globs import GlobPlan as GlobPlan
from owltui.tools.search.globs import glob_regex, plan_glob, relative_to
from owltui.tools.search.grep_files import count_matches
from owltui.tools.search.grep_output import MAX_LINE_CHARS, MAX_MATCHES, PAGE_BYTES, GrepOutput
from owltui.tools.search.rg import WALK_FLAGS, RgError, list_files, rg_arg, run_rg

MAX_FIND = 1000
MAX_LS = 500

IGNORE_RULES = (
    "Hidden files are included, .git skipped, files ignored by .gitignore, .ignore, .rgignore or "
    ".git/info/exclude left out, as ripgrep does. Symbolic links are not followed (ls shows them)."
)


def _search_root(ctx: ToolContext, path: str | None) -> Path:
    root = resolve_path(ctx.workspace, path or ".")
    if not os.path.exists(root):
        raise ToolError(f"Path not found: {display_path(ctx.workspace, root)}")
    return root


# --- grep ------------------------------------------------------------------------------------------
class GrepParams(Params):
    pattern: str = Field(
        description="Regular expression (ripgrep's Rust syntax; no look-around or backreferences)."
    )
    path: str | None = Field(None, description="File or directory to search (default: the workspace).")
    glob: str | None = Field(
        None,
        description="Only search files matching this glob, e.g. '*.py', '*.{ts,tsx}' or 'src/**/*.ts' "
        "(never brings back ignored files); '!*.min.js' leaves files out.",
    )
    ignore_case: bool = Field(False, description="Match case-insensitively.")


class GrepTool:
    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep; Rust regex syntax, no look-around or "
        "backreferences; `^`/`$` work on CRLF lines too). Files are decoded like read: UTF-8, UTF-16 with a "
        "BOM, Latin-1; binary files are skipped. " + IGNORE_RULES + " Returns `path:line: text` sorted by "
        f"path, at most {MAX_MATCHES} matches and {MAX_LINE_CHARS} characters a line, control characters "
        "shown as read shows them; the notice says how many matching lines were not shown."
    )
    params = GrepParams
    read_only = True

    async def run(self, args: GrepParams, ctx: ToolContext) -> ToolOutput:
        root = _search_root(ctx, args.path)
        plan = plan_glob(args.glob)
        search = root / plan.subdir if plan.subdir else root
        base = rg_arg(root, ctx.workspace)
        match = ["--crlf", "--ignore-case"] if args.ignore_case else ["--crlf"]
        show = [
            "--no-heading", "--with-filename", "--line-number", "--null", "--max-columns",
            str(MAX_LINE_CHARS), "--max-columns-preview", "--stats", "--sort", "path",
        ]  # fmt: skip
        pattern = ["--regexp", args.pattern, "--"]
        # A glob checked here (a wildcard directory part) is also given to rg as -g, so rg searches only
        # the files it names; -g would bring back ignored files too, so those are dropped again by
        # membership in rg's own file list, made at the same time.
        narrow = plan.check is not None and root == ctx.workspace and args.glob is not None
        walk = [
            *WALK_FLAGS,
            *match,
            *(["--glob", args.glob.strip()] if narrow and args.glob else []),
            *plan.args,
        ]
        where = rg_arg(search, ctx.workspace)
        out = GrepOutput(ctx.workspace, base, plan.check)
        out.denied = ctx.services.read_filter

        def work(stop: threading.Event) -> tuple[int, str]:
            if not os.path.exists(search):  # a glob naming a directory that is not there
                return 1, ""
            if narrow:
                out.start_listing(plan.args, base, stop)
            if not os.path.isdir(search):
                result = run_rg([*walk, *show, *pattern, where], ctx.workspace, out.feed, stop)
                return result.code, result.error()
            # a directory: counted on every thread, then only the files of the first page read again
            counted = count_matches([*walk, *pattern, where], ctx.workspace, out.passes, stop)
            out.known_total = counted.total
            first = counted.first_files(MAX_MATCHES + 1)
            if first:
                shown = run_rg(
                    [*WALK_FLAGS, *match, *show, *pattern, *map(os.fsdecode, first)],
                    ctx.workspace,
                    out.feed,
                    stop,
                )
                if counted.result.code != 2:
                    return shown.code, shown.error()
            return counted.result.code, counted.result.error()

        code, error = await in_thread(work, ctx)
        if code == 2 and not out.hits:
            raise ToolError(f"grep failed: {error}" if error else f"grep failed (rg exit status {code}).")
        notes = out.notes()
        if not out.hits:
            body = "No matches." + ("\n" + "\n".join(notes) if notes else "")
            return ToolOutput(body, details={"matches": 0, "no_spill": True})
        total = out.total()
        body = "\n".join(out.hits)
        tail: list[str] = []
        if notes:
            tail.extend(notes)
        if total > len(out.hits):
            tail.append(
                f"[{total - len(out.hits)} more matching lines not shown ({total} in all); "
                "narrow the pattern, path or glob.]"
            )
        if code == 2 and error:
            tail.append(f"[Some paths could not be searched: {error.splitlines()[0]}]")
        if tail:
            body += "\n\n" + "\n".join(tail)
        return ToolOutput(
            body,
            details={
                "matches": total,
                "shown": len(out.hits),
                "truncated": total > len(out.hits),
                "no_spill": True,
            },
        )


# --- find ------------------------------------------------------------------------------------------
class FindParams(Params):
    pattern: str = Field(
        description="Glob for file names or paths, e.g. '*.py', 'src/**/*.ts', 'test_*', '*.{js,ts}'. "
        "A pattern without '/' matches at any depth; one ending in '/' matches directories only."
    )
    path: str | None = Field(None, description="Directory to search in (default: the workspace).")
    offset: int | None = Field(None, ge=1, description="First result to show, counting from 1 (to page on).")


def _page(items: list[str], offset: int, cap: int) -> tuple[list[str], int]:
    """Items from ``offset`` (1-based) within ``cap`` entries and the page byte budget; returns them
    and the offset after the last one shown."""
    shown: list[str] = []
    used = 0
    for item in items[offset - 1 :]:
        size = utf8_len(item) + 1
        if len(shown) >= cap or used + size > PAGE_BYTES:
            break
        shown.append(item)
        used += size
    return shown, offset + len(shown)


def _paged(items: list[str], offset: int, cap: int, noun: str) -> tuple[str, int, bool]:
    """The page of ``items`` from ``offset`` as text, with the notice saying where it stands and how
    to go on (``noun``: "results", "entries"); returns (text, items shown, more after it). An offset
    past the end is a ToolError."""
    if offset > len(items):
        raise ToolError(f"offset {offset} is past the end ({len(items)} {noun}).")
    shown, after = _page(items, offset, cap)
    more = after <= len(items)
    body = "\n".join(shown)
    if more or offset > 1:
        body += f"\n\n[{noun.capitalize()} {offset}-{after - 1} of {len(items)}."
        body += f" Use offset={after} to continue.]" if more else "]"
    return body, len(shown), more


def _find(
    pattern: str,
    root: Path,
    workspace: Path,
    stop: threading.Event,
    denied: Callable[[Path], object] | None = None,
) -> list[str]:
    plan = plan_glob(pattern)
    base = rg_arg(root, workspace)
    search = root / plan.subdir if plan.subdir else root
    if not os.path.isdir(search):
        return []
    try:
        names = list_files(rg_arg(search, workspace), workspace, stop)
    except RgError as exc:
        raise ToolError(f"find failed: {exc}") from exc
    if denied is not None:  # [deny] read rules (the read_filter service): left out of the results
        names = [n for n in names if not denied(workspace / n)]
    regex = glob_regex(pattern)
    dirs_only = pattern.strip().endswith("/")
    found: set[str] = set()
    seen_dirs: set[str] = set()
    for name in names:
        rel = relative_to(name, base)
        if not dirs_only and regex.match(rel):
            found.add(name)
        parent = posixpath.dirname(rel)
        while parent and parent not in seen_dirs:
            seen_dirs.add(parent)
            if regex.match(parent):
                found.add(name[: len(name) - len(rel)] + parent + "/")
            parent = posixpath.dirname(parent)
    return sorted(show_name(n) for n in found)


class FindTool:
    name = "find"
    description = (
        "Find files and directories by glob: '*.py' matches at any depth, 'src/*.py' only directly in src, "
        "'src/**/*.py' anywhere under src. The files are ripgrep's list (`rg --files`): "
        + IGNORE_RULES
        + " Directories holding listed files are matched too and end in '/'. Results are sorted; at most "
        f"{MAX_FIND} per call, the notice gives the total and the offset to continue from."
    )
    params = FindParams
    read_only = True

    async def run(self, args: FindParams, ctx: ToolContext) -> ToolOutput:
        root = _search_root(ctx, args.path)
        if not root.is_dir():
            raise ToolError(f"{display_path(ctx.workspace, root)} is not a directory.")
        denied = ctx.services.read_filter
        found = await in_thread(lambda stop: _find(args.pattern, root, ctx.workspace, stop, denied), ctx)
        if not found:
            return ToolOutput(f"No files match {args.pattern!r}.", details={"count": 0, "no_spill": True})
        body, shown, more = _paged(found, args.offset or 1, MAX_FIND, "results")
        return ToolOutput(
            body, details={"count": len(found), "shown": shown, "truncated": more, "no_spill": True}
        )


# --- ls --------------------------------------------------------------------------------------------
class LsParams(Params):
    path: str | None = Field(None, description="Directory to list (default: the workspace).")
    offset: int | None = Field(None, ge=1, description="First entry to show, counting from 1 (to page on).")


def _entry(entry: os.DirEntry[str]) -> str:
    name = show_name(entry.name)
    try:
        is_link = entry.is_symlink()
    except OSError:
        return name
    try:
        is_dir = entry.is_dir()  # follows a symlink: a link to a directory ends in '/'
    except OSError:  # a symlink loop
        is_dir = False
    if not is_link:
        return name + ("/" if is_dir else "")
    try:
        target = show_name(os.readlink(entry.path))
    except OSError:
        target = "?"
    broken = "" if os.path.exists(entry.path) else " (broken)"
    return f"{name}{'/' if is_dir else ''} -> {target}{broken}"


def _list(root: Path) -> list[str]:
    with os.scandir(root) as it:
        entries = sorted(it, key=lambda e: (e.name.lower(), e.name))
    return [_entry(e) for e in entries]


class LsTool:
    name = "ls"
    description = (
        "List a directory (every entry, ignored and hidden ones too): sorted by name, directories and "
        "symbolic links to directories end in '/', symbolic links show their target ('name -> target'). "
        f"At most {MAX_LS} entries per call; the notice gives the total and the offset to continue from."
    )
    params = LsParams
    read_only = True

    async def run(self, args: LsParams, ctx: ToolContext) -> ToolOutput:
        root = _search_root(ctx, args.path)
        shown_root = display_path(ctx.workspace, root)
        if not root.is_dir():
            raise ToolError(f"{shown_root} is not a directory; use read for files.")

        def work(_stop: threading.Event) -> list[str]:
            try:
                return _list(root)
            except OSError as exc:
                raise ToolError(f"Cannot list {shown_root}: {exc.strerror}") from exc

        names = await in_thread(work, ctx)
        if not names:
            return ToolOutput("(empty directory)", details={"count": 0, "no_spill": True})
        body, shown, _more = _paged(names, args.offset or 1, MAX_LS, "entries")
        return ToolOutput(body, details={"count": len(names), "shown": shown, "no_spill": True})
