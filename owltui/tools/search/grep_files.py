"""Which files hold ``grep``'s first page, found on all of ripgrep's threads.

``rg --sort path`` gives the page in path order but walks on one thread (1.6 s against 0.6-0.9 s for
a common word in 100,000 files). So a directory is searched twice: first ``rg --count`` on every
thread (a line per file that matches: its path and how many lines match, in no order), then, after
those paths are sorted here the way ``--sort path`` orders them (component by component, bytes), the
lines of only the first files whose counts fill a page. The page is the one a sorted search shows,
and the total is the sum of the counts, for the price of the parallel walk and a few files read
again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from owltui.tools.search.rg import RgResult, run_rg

COUNT_FLAGS = ["--count", "--null", "--with-filename"]


def path_order(raw: bytes) -> list[bytes]:
    """The sort key of a path as ``rg --sort path`` orders files: its components, as bytes."""
    return raw.split(b"/")


@dataclass
class FileCounts:
    """What the counting pass found: ``counts`` (path as rg printed it, matching lines) of the files
    that passed the checks. A binary file is not counted (rg stops reading it at its first NUL and,
    counting, reports nothing of it): binary files are skipped, as the tool says."""

    result: RgResult
    counts: list[tuple[bytes, int]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)

    def first_files(self, lines: int) -> list[bytes]:
        """The first files in path order whose matching lines add up to at least ``lines``."""
        chosen: list[bytes] = []
        seen = 0
        for path, count in sorted(self.counts, key=lambda item: path_order(item[0])):
            if seen >= lines:
                break
            chosen.append(path)
            seen += count
        return chosen


def count_matches(
    args: list[str], cwd: Path, passes: Callable[[bytes], bool], stop: threading.Event
) -> FileCounts:
    """``rg args`` (the search's own flags, ending in ``-- PATH``) with ``COUNT_FLAGS`` in front;
    ``passes`` keeps a file (the glob check, the read filter) or drops it."""
    buf = bytearray()
    found = FileCounts(RgResult(0, b"", False))

    def feed(chunk: bytes) -> bool:
        buf.extend(chunk)
        start = 0
        # each record is PATH NUL DIGITS NEWLINE (CR LF under --crlf): the path is read up to its NUL
        # (it may hold a newline), the count up to the line end after it
        while (nul := buf.find(b"\0", start)) != -1 and (nl := buf.find(b"\n", nul)) != -1:
            path, count = bytes(buf[start:nul]), bytes(buf[nul + 1 : nl]).removesuffix(b"\r")
            if count.isdigit() and passes(path):
                found.counts.append((path, int(count)))
            start = nl + 1
        del buf[:start]
        return True

    found.result = run_rg([*COUNT_FLAGS, *args], cwd, feed, stop)
    return found
