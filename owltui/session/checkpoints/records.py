"""Checkpoint records and the persistent list: ``Checkpoint``, ``Skipped``, ``checkpoints.json``.

The list is written atomically to ``checkpoints.json`` in the store directory; every checkpoint is
also a commit whose message is its record, so ``parse_log`` rebuilds the list from ``git log``
when the file is lost.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

PROMPT_MAX = 4000  # characters of the prompt kept with a checkpoint (for the picker)
STATE_FILE = "checkpoints.json"
FORMAT_VERSION = 1

SkipReason = Literal["too large", "repository", "ignored"]


class CheckpointError(Exception):
    """Checkpoints cannot be taken or restored here: the message is one sentence for the user."""


@dataclass(frozen=True)
class Skipped:
    """A path a checkpoint does not hold. ``path`` is relative to the workspace; a directory ends in
    ``/``. ``reason``: ``"too large"`` (``size`` bytes, over ``max_file_bytes``), ``"repository"``
    (a nested git repository, left out whole) or ``"ignored"`` (matched by the ignore rules)."""

    path: str
    reason: SkipReason
    size: int | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "reason": self.reason}
        if self.size is not None:
            out["size"] = self.size
        return out


@dataclass(frozen=True)
class Checkpoint:
    """The workspace's files just before one user turn.

    - ``id``: the turn id given to ``checkpoint`` (unique in the store).
    - ``prompt``: the turn's prompt (scrubbed, at most ``PROMPT_MAX`` characters).
    - ``at``: when it was taken, ISO 8601 in UTC (``2025-01-31T12:00:00+00:00``).
    - ``files``: how many paths changed between this checkpoint and the next one — what this turn
      (and anything else between the two turns) changed. For the newest checkpoint it is counted
      against the workspace as it is now by ``list()`` (``None`` when not known yet); once a
      restore happens or the next checkpoint is taken, the number is fixed.
    - ``leaf``: the conversation entry the session stood at when the checkpoint was taken (given
      by the caller), where a conversation rewind forks.
    - ``skipped``: what was left out at this checkpoint (too large, nested repositories).
    - ``tree``: the git tree of the workspace's files (workspace-relative paths).
    """

    id: str
    prompt: str
    at: str
    files: int | None
    tree: str
    commit: str = ""
    leaf: str | None = None
    skipped: tuple[Skipped, ...] = field(default=())

    def wire(self) -> dict[str, Any]:
        """The RPC ``checkpoints`` item: ``{id, prompt, at, files}``."""
        return {"id": self.id, "prompt": self.prompt, "at": self.at, "files": self.files}

    def record(self) -> dict[str, Any]:
        """The persisted form (``checkpoints.json`` and the commit message)."""
        return {
            "id": self.id,
            "prompt": self.prompt,
            "at": self.at,
            "files": self.files,
            "tree": self.tree,
            "commit": self.commit,
            "leaf": self.leaf,
            "skipped": [s.wire() for s in self.skipped],
        }

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Checkpoint:
        skipped = tuple(
            Skipped(str(s["path"]), s["reason"], s.get("size"))
            for s in data.get("skipped") or ()
            if isinstance(s, dict)
            and "path" in s
            and s.get("reason") in ("too large", "repository", "ignored")
        )
        files = data.get("files")
        leaf = data.get("leaf")
        return cls(
            id=str(data["id"]),
            prompt=str(data.get("prompt", "")),
            at=str(data.get("at", "")),
            files=files if isinstance(files, int) else None,
            tree=str(data["tree"]),
            commit=str(data.get("commit") or ""),
            leaf=leaf if isinstance(leaf, str) else None,
            skipped=skipped,
        )


def read_state(path: Path) -> tuple[list[Checkpoint], dict[str, Any]] | None:
    """The checkpoints in the list file ``path`` and the file's data; None when it is missing or
    unreadable."""
    data: dict[str, Any] | None = None
    try:
        loaded = json.loads(path.read_bytes())
        if isinstance(loaded, dict) and isinstance(loaded.get("checkpoints"), list):
            data = loaded
    except (OSError, ValueError):
        data = None
    if data is None:
        return None
    try:
        return [Checkpoint.from_record(r) for r in data["checkpoints"]], data
    except (KeyError, TypeError):
        return None


def parse_log(output: bytes) -> list[Checkpoint]:
    """The checkpoints recorded in the commit messages of ``git log --format=%H%x00%B%x00``."""
    fields = output.split(b"\0")
    out: list[Checkpoint] = []
    for i in range(0, len(fields) - 1, 2):
        commit = fields[i].decode().strip()
        try:
            record = json.loads(fields[i + 1])
            out.append(replace(Checkpoint.from_record(record), commit=commit))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def write_state(path: Path, data: dict[str, Any]) -> None:
    """Write the list file ``path`` atomically (fsynced); CheckpointError when it cannot be."""
    payload = json.dumps(data, ensure_ascii=True, indent=1).encode() + b"\n"
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise CheckpointError(
            f"Cannot save the checkpoint list in {path.parent}: {(exc.strerror or str(exc)).lower()}."
        ) from None
