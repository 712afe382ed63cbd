"""What the user typed, per workspace, for Up/Down and Ctrl+R: ``InputHistory(workspace)``.

One JSON line per entry, ``{"text": …, "at": unix seconds}``, in
``$XDG_DATA_HOME/owltui/history/<workspace key>.jsonl`` (the key is the sessions directory's: a
readable slug of the path plus a hash). Secrets are scrubbed by the session's redactor before
anything is written. An entry equal to the one before it is not added again; the file keeps the
last ``MAX_ENTRIES`` (it is rewritten, atomically, when it grows ``SLACK`` past that). Several
OwlTUI processes in one workspace append to the same file; each read sees what all of them wrote.
A damaged line is skipped. The file and its directory are private to the user (0600 / 0700).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from owltui.session.paths import data_dir, workspace_key

MAX_ENTRIES = 1000
SLACK = 100
MAX_CHARS = 100_000  # a longer entry (a pasted file) is not kept

Scrub = Callable[[str], str]


def history_dir(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "history"


class InputHistory:
    """The input history of one workspace. ``entries()`` oldest first; ``search()`` newest first."""

    def __init__(
        self,
        workspace: Path,
        directory: Path | None = None,
        *,
        scrub: Scrub | None = None,
        env: Mapping[str, str] | None = None,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self.workspace = workspace
        self.path = (directory or history_dir(env)) / f"{workspace_key(workspace)}.jsonl"
        self.scrub = scrub
        self.max_entries = max_entries
        self._cache: tuple[tuple[int, int, int], list[tuple[str, float]]] | None = None

    # ---- reading -------------------------------------------------------------------------
    def _records(self) -> list[tuple[str, float]]:
        """(text, at) of every line, consecutive repeats dropped; read again only when the file
        changed (another process appended, say)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return []
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        try:
            data = self.path.read_bytes()
        except OSError:
            return []
        out: list[tuple[str, float]] = []
        for raw in data.splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            text = obj.get("text") if isinstance(obj, dict) else None
            at = obj.get("at") if isinstance(obj, dict) else None
            if isinstance(text, str) and text and (not out or out[-1][0] != text):
                out.append((text, float(at) if isinstance(at, int | float) else 0.0))
        self._cache = (key, out)
        return out

    def entries(self) -> list[str]:
        """Every kept entry, oldest first (Up walks it from the end)."""
        return [text for text, _at in self._records()[-self.max_entries :]]

    def search(self, substring: str, limit: int | None = None) -> list[str]:
        """Entries containing ``substring`` (case-insensitive), newest first, each text once."""
        needle = substring.casefold()
        seen: set[str] = set()
        out: list[str] = []
        for text in reversed(self.entries()):
            if text in seen or needle not in text.casefold():
                continue
            seen.add(text)
            out.append(text)
            if limit is not None and len(out) >= limit:
                break
        return out

    # ---- writing -------------------------------------------------------------------------
    def add(self, text: str) -> bool:
        """Remember ``text`` (scrubbed). False when nothing was added: blank, too long, the same
        as the last entry, or the file cannot be written (history is a convenience: never an error)."""
        if not text.strip() or len(text) > MAX_CHARS:
            return False
        if self.scrub is not None:
            text = self.scrub(text)
        existing = self._records()
        if existing and existing[-1][0] == text:
            return False
        at = round(time.time(), 3)
        line = json.dumps({"text": text, "at": at}, ensure_ascii=False) + "\n"
        data = line.encode("utf-8", "surrogatepass")
        before = self._cache[0] if self._cache is not None else None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, data)
                st = os.fstat(fd)
            finally:
                os.close(fd)
        except OSError:
            return False
        if before is not None and st.st_size == before[0] + len(data) and st.st_ino == before[2]:
            self._cache = ((st.st_size, st.st_mtime_ns, st.st_ino), [*existing, (text, at)])  # ours alone
        if len(existing) + 1 > self.max_entries + SLACK:
            self._trim()
        return True

    def _trim(self) -> None:
        """Rewrite the file with the last ``max_entries`` entries (atomic rename)."""
        keep = self._records()[-self.max_entries :]
        data = "".join(json.dumps({"text": t, "at": at}, ensure_ascii=False) + "\n" for t, at in keep)
        try:
            fd, tmp = tempfile.mkstemp(prefix=".history-", suffix=".tmp", dir=self.path.parent)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
