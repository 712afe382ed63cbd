"""Search tools: ``grep`` and ``find`` (both ripgrep, see ``rg`` for the ignore rules) and ``ls``.

Every page these tools return fits the loop's limits (fewer than MAX_LINES lines, at most MAX_BYTES
bytes, notices included) and says how many results were not shown; ``find`` and ``ls`` take an
``offset`` to page on. Paths that are not UTF-8 are shown with ``\\xNN`` and accepted back that way.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from owltui.agent.tool import ToolContext, ToolError, ToolOutput

from .base import MAX_BYTES, Params, display_path, resolve_path, utf8_len
from .fs import in_thread
from .rg import WALK_FLAGS, RgError, list_files, rg_arg, rg_name, run_rg
from .textcodec import HEAD_BYTES, SINGLE, read_head, show_name, sniff, visible

MAX_MATCHES = 100
MAX_LINE_CHARS = 500
MAX_FIND = 1000
MAX_LS = 500
PAGE_BYTES = MAX_BYTES - 1024  # results; the rest is for notices

IGNORE_RULES = (
    "Hidden files are included and .git is skipped; files ignored by .gitignore (nested files and "
    "negations; inside a git repository, its parent directories up to the repository root), .ignore, "
    ".rgignore and .git/info/exclude are left out, exactly as ripgrep does. Symbolic links are not "
    "followed or listed (ls shows them)."
)


def _search_root(ctx: ToolContext, path: str | None) -> Path:
    root = resolve_path(ctx.workspace, path or ".")
    if not os.path.exists(root):
        raise ToolError(f"Path not found: {display_path(ctx.workspace, root)}")
    return root


# --- globs -----------------------------------------------------------------------------------------
_META = re.compile(r"[*?\[\]{}]")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated relative paths: ``*`` and ``?`` stay within one
    segment, ``**`` crosses segments, ``{a,b}`` is either; a pattern without ``/`` matches the name at
    any depth, one with ``/`` (or a leading ``/``) is anchored at the search root."""
    pattern = pattern.strip().removeprefix("./")
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    out = [] if anchored else ["(?:.*/)?"]
    i = 0
    depth = 0
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
        elif pattern[i] == "{":
            out.append("(?:")
            depth += 1
            i += 1
        elif pattern[i] == "}" and depth:
            out.append(")")
            depth -= 1
            i += 1
        elif pattern[i] == "," and depth:
            out.append("|")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    out.append(")" * depth)
    return re.compile("".join(out) + "$")


@dataclass
class _GlobPlan:
    """How a glob runs in rg: the directory its literal leading part names (searched like ``path``),
    a file-name glob rg applies (as a file type, which unlike ``-g`` never overrides ignore rules),
    an exclusion ``-g`` for ``!`` globs, and a regex checked here when rg cannot say it all."""

    subdir: str = ""
    args: list[str] = field(default_factory=list)
    check: re.Pattern[str] | None = None


def _plan(glob: str | None) -> _GlobPlan:
    if not glob or not glob.strip():
        return _GlobPlan()
    g = glob.strip()
    if g.startswith("!"):
        return _GlobPlan(args=["--glob", g])
    g = g.removeprefix("./")
    anchored = g.startswith("/")
    g = g.lstrip("/")
    anywhere = False  # a leading '**/': the rest may start at any depth
    while g.startswith("**/"):
        g = g[3:]
        anywhere = True
    if not g:
        return _GlobPlan()
    if g.endswith("/"):  # a directory: everything under it
        return _GlobPlan(check=glob_regex(("/" if anchored else "") + g + "**"))
    segments = g.split("/")
    if anywhere and len(segments) > 1:
        name = segments[-1]
        args = [] if name in ("**", "*") else ["--type-add", f"owlglob:{name}", "--type", "owlglob"]
        return _GlobPlan(args=args, check=glob_regex("/**/" + g))
    prefix: list[str] = []
    while len(segments) > 1 and not _META.search(segments[0]) and segments[0] not in ("..", "."):
        prefix.append(segments.pop(0))
    name = segments[-1]
    args = [] if name in ("**", "*") else ["--type-add", f"owlglob:{name}", "--type", "owlglob"]
    rest = segments[:-1]
    check = None
    if not rest and (prefix or anchored):  # 'src/*.py', '/setup.py': directly in that directory
        args += ["--max-depth", "1"]
    elif (rest and rest != ["**"]) or "**" in name:
        check = glob_regex("/" + g)  # anchored at the search root
    return _GlobPlan("/".join(prefix), args, check)


def _relative_to(name: str, base: str) -> str:
    """``name`` (as rg printed it) relative to the search root ``base`` (as rg was given it)."""
    base = base.removeprefix("./").rstrip("/")
    if not base:
        return name
    return name[len(base) + 1 :] if name.startswith(base + "/") else name


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


_PREVIEW_END = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more matche?s?)\]$")
_STATS = re.compile(rb"(\d+) matched lines?\n")
_CUT_CHAR = re.compile("[\udc80-\udcff]{1,3}$")


class _GrepOutput:
    """Parses rg's ``path\\0line:text\\n`` records as they stream: keeps what the page shows, skims
    the rest (kept: the last bytes, where rg's --stats land). Linear in the output."""

    def __init__(self, workspace: Path, base: str, check: re.Pattern[str] | None) -> None:
        self.workspace = workspace
        self.base = base
        self.check = check
        self.buf = bytearray()
        self.hits: list[str] = []
        self.used = 0
        self.counted = 0  # records that passed the check
        self.full = False
        self.skimming = False
        self.tail = bytearray()
        self.messages: list[bytes] = []
        self._encodings: dict[str, bool] = {}
        self.denied: Callable[[Path], object] | None = None  # the read_filter service
        self._denied: dict[str, bool] = {}
        self._passed: dict[bytes, bool] = {}
        self._allowed: set[bytes] | None = None  # rg's file list, when -g narrowed the search
        self._listed: threading.Event | None = None

    def start_listing(self, type_args: list[str], arg: str, stop: threading.Event) -> None:
        """List, in a thread of its own, the files rg would search without the -g override; records
        wait for the list."""
        listed = self._listed = threading.Event()
        args = [*WALK_FLAGS, "--files", "--null", *type_args, "--", arg]

        def run() -> None:
            parts: list[bytes] = []

            def keep(chunk: bytes) -> bool:
                parts.append(chunk)
                return True

            try:
                if run_rg(args, self.workspace, keep, stop).code != 2:
                    self._allowed = set(b"".join(parts).split(b"\0"))
            finally:
                listed.set()

        threading.Thread(target=run, daemon=True).start()

    def feed(self, chunk: bytes) -> bool:
        if self.skimming:
            self.tail += chunk
            if len(self.tail) > 16384:
                del self.tail[:-8192]
            return True
        self.buf += chunk
        if self.full:  # only counting is left, but each path must pass the check: split, no parsing
            end = self.buf.rfind(b"\n")
            if end != -1:
                for line in bytes(self.buf[:end]).split(b"\n"):
                    path, sep, _ = line.partition(b"\0")
                    if not sep:
                        self.messages.append(line)
                    elif self._passes(path):
                        self.counted += 1
                del self.buf[: end + 1]
                del self.messages[:-64]
            return True
        pos = 0
        while True:
            nl = self.buf.find(b"\n", pos)
            if nl == -1:
                break
            nul = self.buf.find(b"\0", pos, nl)
            if nul == -1:
                self.messages.append(bytes(self.buf[pos:nl]))
                if len(self.messages) > 64:
                    del self.messages[:32]
            else:
                self._record(bytes(self.buf[pos:nul]), bytes(self.buf[nul + 1 : nl]))
            pos = nl + 1
            if self.full:
                rest = bytes(self.buf[pos:])
                self.buf = bytearray()
                if self.check is None and self.denied is None:
                    self.skimming = True  # rg's --stats will give the total
                    self.tail += rest
                    return True
                return self.feed(rest)
        del self.buf[:pos]
        return True

    def _passes(self, raw_path: bytes) -> bool:
        """The glob check and the read_filter, once per path."""
        passed = self._passed.get(raw_path)
        if passed is None:
            name = rg_name(raw_path)
            passed = True
            if self._listed is not None:
                self._listed.wait()
            if self._allowed is not None and raw_path not in self._allowed:
                passed = False  # an ignored file -g brought back
            elif self.check is not None and not self.check.match(_relative_to(name, self.base)):
                passed = False
            elif self.denied is not None:
                if name not in self._denied:
                    self._denied[name] = bool(self.denied(self.workspace / name))
                passed = not self._denied[name]
            self._passed[raw_path] = passed
        return passed

    def _record(self, raw_path: bytes, rest: bytes) -> None:
        if not self._passes(raw_path):
            return
        name = rg_name(raw_path)
        self.counted += 1
        if self.full:
            return
        number, _, text = rest.partition(b":")
        line = f"{show_name(name)}:{number.decode('ascii', 'replace')}: {self._text(name, text)}"
        size = utf8_len(line) + 1
        if len(self.hits) >= MAX_MATCHES or self.used + size > PAGE_BYTES:
            self.full = True
            return
        self.hits.append(line)
        self.used += size

    def _single_byte(self, name: str) -> bool:
        if name not in self._encodings:
            path = Path(name) if os.path.isabs(name) else self.workspace / name
            try:
                with path.open("rb") as fh:
                    head = read_head(fh)
                self._encodings[name] = sniff(head, complete=len(head) < HEAD_BYTES) is SINGLE
            except OSError:
                self._encodings[name] = False
        return self._encodings[name]

    def _text(self, name: str, raw: bytes) -> str:
        clipped = False
        if m := _PREVIEW_END.search(raw):
            raw = raw[: m.start()]
            clipped = True
        raw = raw.removesuffix(b"\n").removesuffix(b"\r")
        if not raw.isascii() and self._single_byte(name):
            text = SINGLE.decode(raw)
        else:
            text = raw.decode("utf-8", errors="surrogateescape")
            if clipped:  # rg's preview may end inside a character
                text = _CUT_CHAR.sub("", text)
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS]
            clipped = True
        return visible(text) + (" …[line truncated]" if clipped else "")

    def total(self) -> int:
        """Matching lines in all (rg's count when the rest was skimmed)."""
        if self.check is None and not any(self._denied.values()):  # rg's count includes denied files
            source = bytes(self.tail) if self.skimming else b"\n".join(self.messages) + b"\n"
            found = _STATS.findall(source)
            if found:
                return int(found[-1])
        return self.counted

    def notes(self) -> list[str]:
        return [
            show_name(m.decode("utf-8", "surrogateescape").removeprefix("./"))
            for m in self.messages
            if b"binary file matches" in m
        ][:5]


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
        plan = _plan(args.glob)
        search = root / plan.subdir if plan.subdir else root
        base = rg_arg(root, ctx.workspace)
        cmd = [
            *WALK_FLAGS,
            "--no-heading", "--with-filename", "--line-number", "--null", "--crlf",
            "--max-columns", str(MAX_LINE_CHARS), "--max-columns-preview", "--stats", "--sort", "path",
        ]  # fmt: skip
        if args.ignore_case:
            cmd.append("--ignore-case")
        # A glob checked here (a wildcard directory part) is also given to rg as -g, so rg searches only
        # the files it names; -g would bring back ignored files too, so those are dropped again by
        # membership in rg's own file list, made at the same time.
        narrow = plan.check is not None and root == ctx.workspace and args.glob is not None
        if narrow:
            assert args.glob is not None
            cmd += ["--glob", args.glob.strip()]
        cmd += [*plan.args, "--regexp", args.pattern, "--", rg_arg(search, ctx.workspace)]
        out = _GrepOutput(ctx.workspace, base, plan.check)
        out.denied = ctx.service("read_filter")

        def work(stop: threading.Event) -> tuple[int, str]:
            if not os.path.exists(search):  # a glob naming a directory that is not there
                return 1, ""
            if narrow:
                out.start_listing(plan.args, base, stop)
            result = run_rg(cmd, ctx.workspace, out.feed, stop)
            return result.code, result.error()

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


def _find(pattern: str, root: Path, workspace: Path, stop: threading.Event,
          denied: Callable[[Path], object] | None = None) -> list[str]:
    plan = _plan(pattern)
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
        rel = _relative_to(name, base)
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
        denied = ctx.service("read_filter")
        found = await in_thread(lambda stop: _find(args.pattern, root, ctx.workspace, stop, denied), ctx)
        if not found:
            return ToolOutput(f"No files match {args.pattern!r}.", details={"count": 0, "no_spill": True})
        offset = args.offset or 1
        if offset > len(found):
            raise ToolError(f"offset {offset} is past the end ({len(found)} results).")
        shown, after = _page(found, offset, MAX_FIND)
        body = "\n".join(shown)
        if after <= len(found) or offset > 1:
            body += f"\n\n[Results {offset}-{after - 1} of {len(found)}."
            body += f" Use offset={after} to continue.]" if after <= len(found) else "]"
        return ToolOutput(
            body,
            details={
                "count": len(found),
                "shown": len(shown),
                "truncated": after <= len(found),
                "no_spill": True,
            },
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
        offset = args.offset or 1
        if offset > len(names):
            raise ToolError(f"offset {offset} is past the end ({len(names)} entries).")
        shown, after = _page(names, offset, MAX_LS)
        body = "\n".join(shown)
        if after <= len(names) or offset > 1:
            body += f"\n\n[Entries {offset}-{after - 1} of {len(names)}."
            body += f" Use offset={after} to continue.]" if after <= len(names) else "]"
        return ToolOutput(body, details={"count": len(names), "shown": len(shown), "no_spill": True})
