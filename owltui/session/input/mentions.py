"""``@path`` mentions: a file (or a directory's listing) the user names in a message is attached to it.

Grammar. A mention is ``@`` at the start of the text or after whitespace, followed by a path that
exists: ``@src/app.py``, ``@docs/``, ``@/etc/hosts``, ``@~/notes.txt``, or quoted for names with
spaces, ``@"my notes.txt"``. Punctuation that ends a sentence is not part of an unquoted path when
the path without it exists (``see @app.py, then`` names ``app.py``). Not mentions: ``@`` inside a
word (``bob@example.com``), inside inline code or a fenced code block (`` `@decorator` ``), and a
name that exists nowhere (``@bob``: left as text; when it looks like a path - a ``/`` or ``.`` in it,
or quoted - the user is told it was not found).

Where. Relative paths are taken from the workspace and must stay inside it (``@../x`` is refused: a
relative path that climbs out is usually a slip, and ``..`` tricks should not reach files nobody
meant to send). An absolute or ``~`` path may name a file anywhere - the user typed it out, and the
model's own ``read`` may read it too - unless the ``[deny] read`` rules (the permission policy's read
filter) cover it; denied files are never attached, inside the workspace or out.

What is attached. The message text keeps what the user typed, word for word, and gets one block per
mention after a blank line: ``<file path="…">`` with the file's first page exactly as the ``read``
tool shows it (numbered lines, encodings and controls made visible, at most 2,000 lines / 50 KB, a
last line saying how to read on), or ``<directory path="…">`` with a listing like ``ls``'s. A file
that exists but cannot be attached (binary, a device, denied, larger than ``MAX_SCAN_BYTES``) gets a
block saying why, so the model knows the user meant it. ``split_attachments`` takes a message apart
again (for a front end that shows attachments apart from the text).

Completion. ``MentionCompleter`` ranks the workspace's files (ripgrep's list, the ignore rules
applied, read-denied files left out) and their directories for a partly typed mention, with
rapidfuzz's scorers plus bonuses for a matching file name, prefix or substring.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from owltui.agent.agent import Agent
from owltui.agent.paging import NOTICE_BYTES, Stopped
from owltui.agent.tool import ToolError
from owltui.text.codec import head_text, line_ending, show_name
from owltui.tools.base import MAX_BYTES, MAX_LINES, display_path
from owltui.tools.files.paging import open_text, page_text, read_page

ReadFilter = Callable[[Path], "str | None"]  # the permission policy's ``read_denied``

MAX_MENTIONS = 20  # per message; the rest stay text
MAX_TOTAL_BYTES = 200 * 1024  # all attachments of one message together
MAX_SCAN_BYTES = 64 * 1024 * 1024  # a bigger file is not read (paging counts its lines: time)
MAX_LISTING = 500  # entries of a directory listing
TRAILING = ".,;:!?)]}>'\""  # may end a sentence after an unquoted mention
PRE_RANK = 2000  # completion candidates scored in full

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_AT = re.compile(r"(?<!\S)@")
_BLOCK_START = re.compile(r'\n\n<(file|directory) path="')

Kind = Literal["file", "directory"]


@dataclass(frozen=True)
class Mention:
    """One ``@`` token as typed: where it is in the text and the path it names."""

    start: int
    end: int
    path: str  # as typed (quotes removed)
    quoted: bool = False


@dataclass(frozen=True)
class Attachment:
    """A mention that became a block. ``error``: why its content is not attached."""

    mention: str  # the path as typed
    path: Path
    shown: str  # the path in the block (workspace-relative when inside)
    kind: Kind
    body: str
    error: str | None = None

    def block(self) -> str:
        return f'<{self.kind} path="{_attr(self.shown)}">\n{self.body.rstrip(chr(10))}\n</{self.kind}>'


@dataclass
class Expansion:
    """A message with its mentions attached. ``text`` is what the model gets; ``notes`` tell the
    user about mentions that were not attached (one line each)."""

    typed: str
    text: str
    attachments: list[Attachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def attached(self) -> list[str]:
        """The paths whose content went with the message."""
        return [a.shown for a in self.attachments if a.error is None]

    def summary(self) -> str:
        """One line for the user: what went along and what did not."""
        parts: list[str] = []
        if self.attached:
            parts.append("attached " + ", ".join(self.attached))
        parts += [f"@{a.mention}: {a.error}" for a in self.attachments if a.error is not None]
        parts += self.notes
        return "; ".join(parts)


def _attr(text: str) -> str:
    return show_name(text).replace("&", "&amp;").replace('"', "&quot;")


# ---- the grammar ---------------------------------------------------------------------------------
def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE.finditer(text)] if "`" in text else []


def find_mentions(text: str) -> list[Mention]:
    """Every ``@`` token that may be a mention, whether or not its path exists (see the module
    docstring for the grammar); in order."""
    if "@" not in text:
        return []
    code = _code_spans(text)
    found: list[Mention] = []
    for m in _AT.finditer(text):
        at = m.start()
        if any(a <= at < b for a, b in code):
            continue
        rest = at + 1
        if rest < len(text) and text[rest] == '"':
            close = text.find('"', rest + 1)
            if close == -1 or "\n" in text[rest + 1 : close] or close == rest + 1:
                continue
            found.append(Mention(at, close + 1, text[rest + 1 : close], quoted=True))
            continue
        end = rest
        while end < len(text) and not text[end].isspace():
            end += 1
        if end > rest:
            found.append(Mention(at, end, text[rest:end]))
    return found


def _looks_like_path(mention: Mention) -> bool:
    return (
        mention.quoted
        or "/" in mention.path
        or "." in mention.path.strip(TRAILING)
        or mention.path.startswith("~")
    )


def _candidates(mention: Mention) -> Iterable[str]:
    """The path as typed, then (unquoted) without trailing sentence punctuation, one by one."""
    path = mention.path
    yield path
    if mention.quoted:
        return
    while path and path[-1] in TRAILING:
        path = path[:-1]
        if path:
            yield path


def _inside(workspace: Path, path: Path) -> bool:
    return path == workspace or workspace in path.parents


def _locate(raw: str, workspace: Path) -> tuple[Path, bool]:
    """(absolute normalised path, typed as absolute or ``~``)."""
    expanded = os.path.expanduser(raw)
    absolute = os.path.isabs(expanded)
    path = Path(expanded) if absolute else workspace / expanded
    return Path(os.path.normpath(path)), absolute


# ---- reading -------------------------------------------------------------------------------------
def _resume(shown: str) -> Callable[[int, int | None], str]:
    def resume(offset: int, column: int | None) -> str:
        col = f', "column": {column}' if column else ""
        return f'The rest: read {{"path": "{shown}", "offset": {offset}{col}}}'

    return resume


def read_attachment(path: Path, shown: str, budget: int = MAX_BYTES) -> str:
    """The first page of a text file as ``read`` shows it (within ``budget`` bytes); a ToolError
    says why a file cannot be attached (binary, not a regular file, too large to scan)."""
    size = os.stat(path).st_size
    if size > MAX_SCAN_BYTES:
        raise ToolError(f"{shown} is {size // (1 << 20)} MB, too large to attach; read it with the read tool")
    fd, enc, head, _size = open_text(path, shown, "only text is attached")
    newline = line_ending(head_text(head, enc))
    try:  # read_page owns the descriptor from here on
        page = read_page(
            fd, enc, 1, MAX_LINES, 1, max(budget, 2 * NOTICE_BYTES) - NOTICE_BYTES, threading.Event()
        )
    except Stopped as exc:  # pragma: no cover - nothing sets the event
        raise ToolError("cancelled") from exc
    if page.total == 0:
        return f"({shown} is empty)"
    body, _last = page_text(page, enc, newline, _resume(shown))
    return body


def list_directory(path: Path, shown: str) -> str:
    """A listing like ``ls``'s: sorted by name, directories end in ``/``, links show their target."""
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: (e.name.lower(), e.name))
    except OSError as exc:
        raise ToolError(f"cannot list {shown}: {exc.strerror}") from exc
    if not entries:
        return "(empty directory)"
    lines: list[str] = []
    for entry in entries[:MAX_LISTING]:
        name = show_name(entry.name)
        try:
            is_dir = entry.is_dir()
            link = entry.is_symlink()
        except OSError:
            is_dir = link = False
        name += "/" if is_dir else ""
        if link:
            try:
                name += f" -> {show_name(os.readlink(entry.path))}"
            except OSError:
                pass
        lines.append(name)
    if len(entries) > MAX_LISTING:
        lines.append(
            f"\n[{MAX_LISTING} of {len(entries)} entries; the rest: "
            f'ls {{"path": "{shown}", "offset": {MAX_LISTING + 1}}}]'
        )
    return "\n".join(lines)


# ---- expanding a message -------------------------------------------------------------------------
def expand_mentions(text: str, workspace: Path, read_filter: ReadFilter | None = None) -> Expansion:
    """``text`` with every mention's file or listing attached (see the module docstring)."""
    workspace = Path(os.path.normpath(workspace))
    out = Expansion(typed=text, text=text)
    seen: set[Path] = set()
    budget = MAX_TOTAL_BYTES
    mentions = find_mentions(text)
    for count, mention in enumerate(mentions):
        if count >= MAX_MENTIONS:
            out.notes.append(f"only the first {MAX_MENTIONS} mentions are attached")
            break
        found: tuple[str, Path, bool] | None = None
        outside: str | None = None
        for raw in _candidates(mention):
            path, absolute = _locate(raw, workspace)
            if not os.path.exists(path):
                continue
            if not absolute and not _inside(workspace, path):
                outside = raw
                break
            found = (raw, path, absolute)
            break
        if outside is not None:
            out.notes.append(f"@{outside}: outside the workspace; name it by its absolute path to attach it")
            continue
        if found is None:
            if _looks_like_path(mention):
                named = mention.path if mention.quoted else (mention.path.rstrip(TRAILING) or mention.path)
                out.notes.append(f"@{named}: no such file; left as text")
            continue
        raw, path, _absolute = found
        if path in seen:
            continue
        seen.add(path)
        shown = display_path(workspace, path) if _inside(workspace, path) else show_name(str(path))
        if os.path.isdir(path) and not shown.endswith("/"):
            shown += "/"
        attachment = _attach(raw, path, shown, read_filter, budget)
        budget -= len(attachment.body.encode("utf-8", "replace"))
        out.attachments.append(attachment)
    if out.attachments:
        out.text = text.rstrip() + "\n\n" + "\n\n".join(a.block() for a in out.attachments)
    return out


def attach_mentions(agent: Agent, text: str) -> Expansion:
    """``expand_mentions`` for ``agent``: its workspace and its ``read_filter`` service (every mode
    sends user text through this: the command layer's prompt, steer and follow-up, print mode)."""
    cfg = agent.config
    denied = cfg.services.get("read_filter")
    return expand_mentions(text, cfg.workspace, denied if callable(denied) else None)


def _attach(raw: str, path: Path, shown: str, read_filter: ReadFilter | None, budget: int) -> Attachment:
    kind: Kind = "directory" if os.path.isdir(path) else "file"

    def failed(why: str) -> Attachment:
        return Attachment(raw, path, shown, kind, f"(not attached: {why})", error=why)

    if read_filter is not None:
        why = read_filter(path)
        if why:
            return failed(why)
    try:
        if kind == "directory":
            return Attachment(raw, path, shown, kind, list_directory(path, shown))
        if budget < 2 * NOTICE_BYTES:
            return failed("this message's attachments are already large; read it with the read tool")
        return Attachment(raw, path, shown, kind, read_attachment(path, shown, min(budget, MAX_BYTES)))
    except ToolError as exc:
        return failed(str(exc).rstrip("."))
    except OSError as exc:
        return failed(f"cannot read {shown}: {exc.strerror or exc}")


def split_attachments(text: str) -> tuple[str, list[str]]:
    """A delivered message taken apart: (the text as typed, the attachment blocks). For a front end
    that echoes what was typed and shows the attachments apart."""
    m = _BLOCK_START.search(text)
    if m is None:
        return text, []
    head, tail = text[: m.start()], text[m.start() + 2 :]
    blocks = re.split(r'\n\n(?=<(?:file|directory) path=")', tail)
    if not all(re.match(r'<(file|directory) path="[^"]*">\n.*\n</\1>\Z', b, re.S) for b in blocks):
        return text, []
    return head, blocks


# ---- completion ----------------------------------------------------------------------------------
def mention_token(path: str) -> str:
    """How to write a mention of ``path``: ``@path``, quoted when it holds whitespace or quotes."""
    return f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"


class PathIndex:
    """Paths prepared once for ranking (lower case, file names, rapidfuzz's processed form)."""

    def __init__(self, paths: Sequence[str]) -> None:
        from rapidfuzz import utils

        self.paths = list(paths)
        self.low = [p.lower() for p in self.paths]
        self.names = [p.rstrip("/").rsplit("/", 1)[-1] for p in self.low]
        self.processed = [utils.default_process(p) for p in self.paths]
        self._joined = "\n".join(self.low)
        self._starts = [0]
        for p in self.low[:-1]:
            self._starts.append(self._starts[-1] + len(p) + 1)

    def in_order(self, query: str) -> set[int]:
        """Paths holding the characters of ``query`` in that order (one regex pass over all)."""
        import bisect

        pattern = re.compile("[^\n]*?".join(map(re.escape, query)))
        return {bisect.bisect_right(self._starts, m.start()) - 1 for m in pattern.finditer(self._joined)}


def rank_paths(query: str, paths: Sequence[str] | PathIndex, limit: int = 20) -> list[str]:
    """The best ``limit`` of ``paths`` for a partly typed ``query``, best first.

    Empty query: shallow paths first. Otherwise rapidfuzz's ratio of the file name to what is typed
    of it (typos) and WRatio over the whole path (out-of-order pieces), half each, plus bonuses: the
    file name equal to, starting with or containing what is typed of it, the path starting with or
    containing the query, the query's characters in order (``tstmain``). Ties go to the shallower,
    then the shorter path. Candidates are the paths containing the query or its characters in order
    and the file names rapidfuzz finds close; a ``PathIndex`` made once keeps a keystroke on 100,000
    paths within a few hundred milliseconds."""
    from rapidfuzz import fuzz, process, utils

    index = paths if isinstance(paths, PathIndex) else PathIndex(paths)
    if limit <= 0 or not index.paths:
        return []
    q = query.strip().strip('"').lower()
    if not q:
        return sorted(index.paths, key=lambda p: (p.rstrip("/").count("/"), len(p), p))[:limit]
    qn = q.rsplit("/", 1)[-1]  # what is typed of the file name
    pool = index.in_order(q)  # substrings included
    if qn:
        close = process.extract(
            qn, index.names, scorer=fuzz.ratio, processor=None, limit=max(limit * 10, 200), score_cutoff=60
        )
        pool.update(i for _name, _score, i in close)
    candidates = list(pool)
    if len(candidates) > PRE_RANK:  # a short query matches most paths: keep the likely ones

        def quick(i: int) -> tuple[int, int, int]:
            name = index.names[i]
            rank = 0 if name.startswith(qn) else 1 if qn in name else 2 if q in index.low[i] else 3
            return (rank, index.low[i].count("/"), len(name))

        candidates = sorted(candidates, key=quick)[:PRE_RANK]
    processed_q = utils.default_process(q)

    def score(i: int) -> tuple[float, int, int, str]:
        low, name = index.low[i], index.names[i]
        s = 0.5 * fuzz.ratio(qn, name) if qn else 0.0
        if processed_q:
            s += 0.5 * fuzz.WRatio(processed_q, index.processed[i])
        if qn and (name == qn or name.rsplit(".", 1)[0] == qn):
            s += 40
        elif qn and name.startswith(qn):
            s += 25
        elif qn and qn in name:
            s += 15
        if low.startswith(q):
            s += 20
        elif q in low:
            s += 10
        elif i in pool:  # the characters in order
            s += 5
        return (-s, low.rstrip("/").count("/"), len(low), index.paths[i])

    return [index.paths[i] for i in sorted(candidates, key=score)[:limit]]


class MentionCompleter:
    """Completion for ``@``: the workspace's files (``rg --files``: ignore rules applied, hidden
    files in, ``.git`` out, read-denied files left out) and their directories (ending in ``/``).

    The list is kept for ``ttl`` seconds; ``refresh()`` reloads it (blocking: rg runs, so a front end
    calls it in a worker thread or through ``load()``)."""

    def __init__(self, workspace: Path, read_filter: ReadFilter | None = None, ttl: float = 10.0) -> None:
        self.workspace = workspace
        self.read_filter = read_filter
        self.ttl = ttl
        self._index: PathIndex | None = None
        self._loaded = 0.0
        self._lock = threading.Lock()

    def refresh(self) -> list[str]:
        from owltui.tools.search.rg import RgError, list_files

        try:
            files = list_files("./", self.workspace, threading.Event(), deadline=time.monotonic() + 10)
        except (RgError, OSError):
            files = []
        if self.read_filter is not None:
            files = [f for f in files if not self.read_filter(self.workspace / f)]
        dirs: set[str] = set()
        for f in files:
            parts = f.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]) + "/")
        index = PathIndex(sorted(files) + sorted(dirs))
        with self._lock:
            self._index, self._loaded = index, time.monotonic()
        return index.paths

    def _current(self) -> PathIndex:
        with self._lock:
            index = self._index
            if index is not None and time.monotonic() - self._loaded < self.ttl:
                return index
        self.refresh()
        assert self._index is not None
        return self._index

    def paths(self) -> list[str]:
        return self._current().paths

    async def load(self) -> list[str]:
        """``refresh`` in a worker thread."""
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.refresh)

    def complete_mentions(self, prefix: str, limit: int = 20) -> list[str]:
        """Paths for a mention typed so far (``prefix``: the text after ``@``), best first."""
        return rank_paths(prefix, self._current(), limit)
