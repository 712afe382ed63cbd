"""The ``grep`` output reader: ``GrepOutput`` parses rg's records as they stream, keeps the lines a
page shows (``MAX_MATCHES`` matches, ``MAX_LINE_CHARS`` characters a line, ``PAGE_BYTES`` bytes),
applies the glob check and the read_filter, decodes single-byte files like ``read`` and counts the
rest."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

from owltui.text.codec import HEAD_BYTES, SINGLE, read_head, show_name, sniff, visible
from owltui.tools.base import MAX_BYTES, utf8_len
from owltui.tools.search.globs import relative_to
from owltui.tools.search.rg import list_files_raw, rg_name

MAX_MATCHES = 100
MAX_LINE_CHARS = 500
PAGE_BYTES = MAX_BYTES - 1024  # results (of grep, find and ls); the rest is for notices

_PREVIEW_END = re.compile(rb" \[\.\.\. (?:omitted end of long line|\d+ more matche?s?)\]$")
_STATS = re.compile(rb"(\d+) matched lines?\n")
_CUT_CHAR = re.compile("[\udc80-\udcff]{1,3}$")


class GrepOutput:
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
        self.known_total: int | None = None  # matching lines in all, when a counting pass found them

    def start_listing(self, type_args: list[str], arg: str, stop: threading.Event) -> None:
        """List, in a thread of its own, the files rg would search without the -g override; records
        wait for the list."""
        listed = self._listed = threading.Event()

        def run() -> None:
            try:
                result, out = list_files_raw(arg, self.workspace, stop, type_args)
                if result.code != 2:
                    self._allowed = set(out.split(b"\0"))
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
                    elif self.passes(path):
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

    def passes(self, raw_path: bytes) -> bool:
        """The glob check and the read_filter, once per path."""
        passed = self._passed.get(raw_path)
        if passed is None:
            name = rg_name(raw_path)
            passed = True
            if self._listed is not None:
                self._listed.wait()
            if self._allowed is not None and raw_path not in self._allowed:
                passed = False  # an ignored file -g brought back
            elif self.check is not None and not self.check.match(relative_to(name, self.base)):
                passed = False
            elif self.denied is not None:
                if name not in self._denied:
                    self._denied[name] = bool(self.denied(self.workspace / name))
                passed = not self._denied[name]
            self._passed[raw_path] = passed
        return passed

    def _record(self, raw_path: bytes, rest: bytes) -> None:
        if not self.passes(raw_path):
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
        """Matching lines in all (the counting pass's sum, or rg's count when the rest was skimmed)."""
        if self.known_total is not None:
            return self.known_total
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
