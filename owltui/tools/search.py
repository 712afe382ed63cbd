"""Search tools: ``grep`` (ripgrep when installed, a Python fallback otherwise), ``find`` and ``ls``.

``grep`` and ``find`` skip ``.git`` and whatever the ``.gitignore`` files (nested ones included) ignore.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import anyio
import pathspec
from pydantic import Field

from owltui.agent.tool import ToolContext, ToolError, ToolOutput

from .base import Params, display_path, resolve_path
from .sanitize import sanitize

MAX_MATCHES = 100
MAX_LINE_CHARS = 500
MAX_FIND = 1000
MAX_LS = 500
MAX_GREP_FILE = 20 * 1024 * 1024

T = TypeVar("T")
Specs = list[tuple[Path, pathspec.GitIgnoreSpec]]


def rg_path() -> str | None:
    """The ripgrep binary, if installed (tests patch this to force the fallback)."""
    return shutil.which("rg")


def _load_spec(directory: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(path: Path, is_dir: bool, specs: Specs) -> bool:
    for base, spec in reversed(specs):
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        decision = spec.check_file(rel).include
        if decision is not None:
            return decision
    return False


def _initial_specs(root: Path, workspace: Path) -> Specs:
    """The .gitignore files of the workspace directories above ``root``."""
    try:
        parts = root.relative_to(workspace).parts
    except ValueError:
        return []
    above = [workspace / Path(*parts[:i]) for i in range(len(parts))]
    return [(d, spec) for d in above if (spec := _load_spec(d)) is not None]


def walk(root: Path, workspace: Path, stop: threading.Event) -> Iterator[tuple[Path, bool]]:
    """Entries under ``root`` in sorted order as (path, is_dir), skipping .git and ignored paths."""

    def visit(directory: Path, specs: Specs) -> Iterator[tuple[Path, bool]]:
        spec = _load_spec(directory)
        if spec is not None:
            specs = [*specs, (directory, spec)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if stop.is_set():
                return
            if entry.name == ".git":
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            path = Path(entry.path)
            if _ignored(path, is_dir, specs):
                continue
            yield path, is_dir
            if is_dir:
                yield from visit(path, specs)

    yield from visit(root, _initial_specs(root, workspace))


async def _in_thread(fn: Callable[[threading.Event], T], ctx: ToolContext) -> T:
    """Run blocking work in a thread; a cancelled call (scope or token) tells it to stop."""
    stop = threading.Event()
    result: list[T] = []
    try:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await ctx.cancel.wait()
                stop.set()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            result.append(await anyio.to_thread.run_sync(fn, stop, abandon_on_cancel=True))
            tg.cancel_scope.cancel()
    finally:
        stop.set()
    if not result:
        raise ToolError("Cancelled.")
    return result[0]


def _search_root(ctx: ToolContext, path: str | None) -> Path:
    root = resolve_path(ctx.workspace, path or ".")
    if not root.exists():
        raise ToolError(f"Path not found: {display_path(ctx.workspace, root)}")
    return root


def _clip(line: str) -> str:
    line = sanitize(line.rstrip("\r\n"))
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …[line truncated]"


class GrepParams(Params):
    pattern: str = Field(description="Regular expression to search for.")
    path: str | None = Field(None, description="File or directory to search (default: the workspace).")
    glob: str | None = Field(
        None, description="Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'."
    )
    ignore_case: bool = Field(False, description="Match case-insensitively.")


def _rel(path: Path, root: Path) -> str:
    return path.name if path == root else path.relative_to(root).as_posix()


def _python_grep(
    regex: re.Pattern[str], root: Path, workspace: Path, glob: str | None, stop: threading.Event
) -> tuple[list[str], bool]:
    only = pathspec.GitIgnoreSpec.from_lines([glob]) if glob else None
    files: Iterator[tuple[Path, bool]] = (
        iter([(root, False)]) if root.is_file() else walk(root, workspace, stop)
    )
    hits: list[str] = []
    for path, is_dir in files:
        if is_dir or stop.is_set():
            continue
        if only is not None and not only.match_file(_rel(path, root)):
            continue
        try:
            if path.is_symlink() or path.stat().st_size > MAX_GREP_FILE:
                continue
            with path.open("rb") as fh:
                if b"\0" in fh.read(8192):
                    continue
                fh.seek(0)
                for number, raw in enumerate(fh, 1):
                    line = raw.decode("utf-8", errors="replace")
                    if regex.search(line):
                        if len(hits) >= MAX_MATCHES:
                            return hits, True
                        hits.append(f"{display_path(workspace, path)}:{number}: {_clip(line)}")
        except OSError:
            continue
    return hits, False


async def _rg_grep(rg: str, args: GrepParams, root: Path, ctx: ToolContext) -> tuple[list[str], bool]:
    cmd = [rg, "--json", "--sort", "path", "--hidden", "--no-require-git", "-g", "!.git"]
    if args.ignore_case:
        cmd.append("-i")
    cmd += ["-e", args.pattern, "--", str(root)]
    # rg's -g would override .gitignore for the files it names, so the glob is applied here instead.
    only = pathspec.GitIgnoreSpec.from_lines([args.glob]) if args.glob else None
    hits: list[str] = []
    more = False
    async with await anyio.open_process(cmd, cwd=ctx.workspace, stdin=None) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        buffer = b""
        try:
            async for chunk in proc.stdout:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    item = json.loads(raw)
                    if item.get("type") != "match":
                        continue
                    if len(hits) >= MAX_MATCHES:
                        more = True
                        break
                    data = item["data"]
                    name = data["path"].get("text") or "?"
                    if only is not None and not only.match_file(_rel(Path(name), root)):
                        continue
                    text = data["lines"].get("text", "")
                    hits.append(
                        f"{display_path(ctx.workspace, Path(name))}:{data['line_number']}: {_clip(text)}"
                    )
                if more:
                    break
        except BaseException:
            proc.kill()
            raise
        if more:
            proc.kill()
        errors = b""
        if not more:
            async for chunk in proc.stderr:
                errors += chunk
        code = await proc.wait()
    if code == 2 and not hits and errors:
        raise ToolError(f"grep failed: {errors.decode(errors='replace').strip()}")
    return hits, more


class GrepTool:
    name = "grep"
    description = (
        "Search file contents with a regular expression. Respects .gitignore. Returns `path:line: text`, "
        f"at most {MAX_MATCHES} matches and {MAX_LINE_CHARS} characters a line."
    )
    params = GrepParams
    read_only = True

    async def run(self, args: GrepParams, ctx: ToolContext) -> ToolOutput:
        root = _search_root(ctx, args.path)
        rg = rg_path()
        if rg is not None:
            try:
                hits, more = await _rg_grep(rg, args, root, ctx)
            except (OSError, json.JSONDecodeError):
                rg = None
        if rg is None:
            try:
                regex = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
            except re.error as exc:
                raise ToolError(f"Invalid regular expression {args.pattern!r}: {exc}") from exc
            hits, more = await _in_thread(
                lambda stop: _python_grep(regex, root, ctx.workspace, args.glob, stop), ctx
            )
        if not hits:
            return ToolOutput("No matches.", details={"matches": 0})
        body = "\n".join(hits)
        if more:
            body += f"\n\n[Only the first {MAX_MATCHES} matches are shown; narrow the pattern, path or glob.]"
        return ToolOutput(body, details={"matches": len(hits), "truncated": more})


class FindParams(Params):
    pattern: str = Field(
        description="Glob for file names or paths, e.g. '*.py', 'src/**/*.ts', 'test_*'. "
        "A pattern without '/' matches at any depth."
    )
    path: str | None = Field(None, description="Directory to search in (default: the workspace).")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated relative paths: ``*`` and ``?`` stay within one
    segment, ``**`` crosses segments; a pattern without ``/`` matches the name at any depth."""
    pattern = pattern.strip().removeprefix("./")
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    out = [] if anchored else ["(?:.*/)?"]
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + "$")


def _find(pattern: str, root: Path, workspace: Path, stop: threading.Event) -> tuple[list[str], bool]:
    regex = glob_regex(pattern)
    dirs_only = pattern.strip().endswith("/")
    found: list[str] = []
    for path, is_dir in walk(root, workspace, stop):
        if dirs_only and not is_dir:
            continue
        if regex.match(path.relative_to(root).as_posix()):
            if len(found) >= MAX_FIND:
                return found, True
            found.append(display_path(workspace, path) + ("/" if is_dir else ""))
    return found, False


class FindTool:
    name = "find"
    description = (
        "Find files and directories by glob: '*.py' matches at any depth, 'src/*.py' only directly in src, "
        f"'src/**/*.py' anywhere under src. Respects .gitignore. At most {MAX_FIND} results, sorted; "
        "directories end in '/'."
    )
    params = FindParams
    read_only = True

    async def run(self, args: FindParams, ctx: ToolContext) -> ToolOutput:
        root = _search_root(ctx, args.path)
        if not root.is_dir():
            raise ToolError(f"{display_path(ctx.workspace, root)} is not a directory.")
        found, more = await _in_thread(lambda stop: _find(args.pattern, root, ctx.workspace, stop), ctx)
        if not found:
            return ToolOutput(f"No files match {args.pattern!r}.", details={"count": 0})
        body = "\n".join(sorted(found))
        if more:
            body += f"\n\n[Only the first {MAX_FIND} results are shown; use a narrower pattern or path.]"
        return ToolOutput(body, details={"count": len(found), "truncated": more})


class LsParams(Params):
    path: str | None = Field(None, description="Directory to list (default: the workspace).")


class LsTool:
    name = "ls"
    description = (
        f"List a directory: entries sorted by name, directories end in '/'. At most {MAX_LS} entries."
    )
    params = LsParams
    read_only = True

    async def run(self, args: LsParams, ctx: ToolContext) -> ToolOutput:
        root = _search_root(ctx, args.path)
        if not root.is_dir():
            raise ToolError(f"{display_path(ctx.workspace, root)} is not a directory; use read for files.")
        try:
            entries = sorted(os.scandir(root), key=lambda e: (e.name.lower(), e.name))
        except OSError as exc:
            raise ToolError(f"Cannot list {display_path(ctx.workspace, root)}: {exc.strerror}") from exc
        names = [sanitize(e.name) + ("/" if e.is_dir() else "") for e in entries]
        if not names:
            return ToolOutput("(empty directory)", details={"count": 0})
        body = "\n".join(names[:MAX_LS])
        if len(names) > MAX_LS:
            body += f"\n\n[{len(names) - MAX_LS} more entries not shown ({len(names)} in all).]"
        return ToolOutput(body, details={"count": len(names)})
