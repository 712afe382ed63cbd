"""The ``/rewind`` picker's words: one row per checkpoint (time, files changed, prompt, what that
checkpoint left out) and what no checkpoint restores (``skipped_note``). Imported when the picker
opens (``Checkpointing.listing``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from owltui.session.checkpoints.checkpoints import CheckpointStore
from owltui.session.checkpoints.records import Skipped


def skipped_note(skipped: Sequence[Skipped], limit: int = 4) -> str:
    """What a checkpoint leaves out, in a few words (the picker's note); "" when nothing."""
    if not skipped:
        return ""
    groups: dict[str, list[str]] = {}
    for s in skipped:
        label = s.path
        if s.reason == "too large" and s.size is not None:
            label += f" {s.size / 1_000_000:.1f} MB"
        groups.setdefault(s.reason, []).append(label)
    parts = []
    for why in ("too large", "repository", "ignored"):
        paths = groups.get(why)
        if not paths:
            continue
        shown = ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
        title = {"too large": "too large", "repository": "nested repositories", "ignored": "ignored"}[why]
        parts.append(f"{title}: {shown}")
    return "not restored - " + "; ".join(parts)


@dataclass(frozen=True)
class RewindRow:
    """One checkpoint as the ``/rewind`` picker shows it."""

    id: str
    prompt: str
    at: str  # ISO 8601, UTC
    files: int | None  # paths changed between this checkpoint and the next (None: not known)
    note: str  # what it leaves out (``skipped_note``), "" when nothing

    @property
    def label(self) -> str:
        """``12:04  3 files  fix the parser…  (not restored - too large: data.bin 6.0 MB)``"""
        try:
            when = datetime.fromisoformat(self.at).astimezone().strftime("%H:%M")
        except ValueError:
            when = self.at
        files = "? files" if self.files is None else f"{self.files} file{'' if self.files == 1 else 's'}"
        prompt = " ".join(self.prompt.split())
        prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
        return f"{when}  {files:>8}  {prompt}" + (f"  ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Listing:
    """The ``/rewind`` picker's content: rows newest first, and what no checkpoint restores
    because the ignore rules leave it out (the same for every row)."""

    rows: list[RewindRow]
    ignored: str  # ``skipped_note`` of the ignored paths present now, "" when none


def listing(store: CheckpointStore) -> Listing:
    """Every checkpoint with its notes (runs git: call in a worker thread)."""
    cps = store.list()
    ignored = [s for s in store.skipped(cps[-1].id) if s.reason == "ignored"] if cps else []
    rows = [RewindRow(cp.id, cp.prompt, cp.at, cp.files, skipped_note(cp.skipped)) for cp in cps]
    return Listing(rows[::-1], skipped_note(ignored))
