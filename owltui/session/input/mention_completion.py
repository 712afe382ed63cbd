"""Completion of ``@`` mentions: ``MentionCompleter`` ranks the workspace's files (ripgrep's list,
the ignore rules applied, read-denied files left out) and their directories for a partly typed
mention, with rapidfuzz's scorers plus bonuses for a matching file name, prefix or substring
(``rank_paths``, over a ``PathIndex`` prepared once), and beside them the resources of connected MCP
servers as ``server:uri`` (``resources``: first when what is typed starts a server's name)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from owltui.session.input.mentions import ReadFilter

if TYPE_CHECKING:
    from owltui.tools.mcp.source import McpSource

PRE_RANK = 2000  # completion candidates scored in full
# paths a regex pass covers: a pass holds the GIL (the event loop's thread waits for it), ~2 ms for
# a thousand paths where one pass over 100,000 took up to 200 ms
BLOCK = 1000


class PathIndex:
    """Paths prepared once for ranking (lower case, file names, rapidfuzz's processed form)."""

    def __init__(self, paths: Sequence[str]) -> None:
        from rapidfuzz import utils

        self.paths = list(paths)
        self.low = [p.lower() for p in self.paths]
        self.names = [p.rstrip("/").rsplit("/", 1)[-1] for p in self.low]
        self.processed = [utils.default_process(p) for p in self.paths]
        self._blocks: list[tuple[int, str, list[int]]] = []  # first path, the paths joined, line starts
        for first in range(0, len(self.low), BLOCK):
            lines = self.low[first : first + BLOCK]
            starts = [0]
            for p in lines[:-1]:
                starts.append(starts[-1] + len(p) + 1)
            self._blocks.append((first, "\n".join(lines), starts))

    def in_order(self, query: str) -> set[int]:
        """Paths holding the characters of ``query`` in that order (a regex pass per ``BLOCK`` paths)."""
        import bisect

        pattern = re.compile("[^\n]*?".join(map(re.escape, query)))
        found: set[int] = set()
        for first, text, starts in self._blocks:
            found.update(first + bisect.bisect_right(starts, m.start()) - 1 for m in pattern.finditer(text))
        return found


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
    calls it in a worker thread or through ``load()``). Ranking is blocking too (tens of milliseconds
    on 100,000 paths): a front end calls ``rank`` in a worker thread."""

    def __init__(
        self,
        workspace: Path,
        read_filter: ReadFilter | None = None,
        ttl: float = 10.0,
        mcp: Callable[[], McpSource | None] | None = None,
    ) -> None:
        self.workspace = workspace
        self.mcp = mcp  # the session's MCP servers: their listed resources are offered as server:uri
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

    @property
    def loaded_at(self) -> float | None:
        """When the list in use was made (``time.monotonic()``), None before the first one."""
        with self._lock:
            return self._loaded if self._index is not None else None

    def rank(self, prefix: str, limit: int = 20) -> list[str]:
        """``complete_mentions`` over the list loaded last, however old (never reloads; nothing
        before the first ``refresh``)."""
        with self._lock:
            index = self._index
        return self._with_resources(
            prefix, rank_paths(prefix, index, limit) if index is not None else [], limit
        )

    def _with_resources(self, prefix: str, files: list[str], limit: int) -> list[str]:
        from owltui.session.input.mention_resources import resource_candidates

        found = resource_candidates(self.mcp()) if self.mcp is not None else []
        if not found:
            return files
        server = prefix.split(":", 1)[0].lower()
        first = bool(server) and any(r.lower().startswith(server) for r in found)
        ranked = rank_paths(prefix, found, limit) if prefix else found[:limit]
        if first or ":" in prefix:
            return (ranked + files)[:limit]
        return (files[: limit - min(len(ranked), limit // 4)] + ranked)[:limit]

    def paths(self) -> list[str]:
        return self._current().paths

    async def load(self) -> list[str]:
        """``refresh`` in a worker thread."""
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.refresh)

    def complete_mentions(self, prefix: str, limit: int = 20) -> list[str]:
        """Paths for a mention typed so far (``prefix``: the text after ``@``), best first."""
        return self._with_resources(prefix, rank_paths(prefix, self._current(), limit), limit)
