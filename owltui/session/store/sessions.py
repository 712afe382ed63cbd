"""Finding sessions: the latest of a workspace (``-c``), one by id (``--resume``), the listing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from owltui.session.store.file import SessionError


@dataclass
class SessionInfo:
    id: str
    path: Path
    created: datetime | None
    modified: float
    cwd: str
    model: str
    first_prompt: str
    messages: int


def _files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.glob("*.jsonl") if p.is_file()]
    except OSError:
        return []


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:  # removed meanwhile
        return -1


def latest_session(directory: Path) -> Path | None:
    """The most recently written session file of a workspace directory."""
    files = _files(directory)
    return max(files, key=lambda p: (_mtime(p), p.name)) if files else None


def find_session(root: Path, session_id: str) -> Path:
    """A session file by id (or a unique prefix of it), searching every workspace."""
    wanted = session_id.strip()
    try:
        found = list(root.glob("*/*.jsonl")) if wanted else []
    except OSError:
        found = []
    matches = [p for p in found if p.stem.split("_", 1)[-1].startswith(wanted)]
    exact = [p for p in matches if p.stem.split("_", 1)[-1] == wanted]
    if exact:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionError(f"No session with id {session_id!r} (see owltui --sessions).")
    raise SessionError(f"Session id {session_id!r} is ambiguous: it matches {len(matches)} sessions.")


def describe(path: Path) -> SessionInfo | None:
    """Header facts, message count and the first prompt of one file (None if it is not a session)."""
    head: dict[str, object] | None = None
    first = ""
    count = 0
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(rec, dict):
                    continue
                if head is None:
                    if rec.get("type") != "session":
                        return None
                    head = rec
                    continue
                if rec.get("type") == "message":
                    count += 1
                    item = rec.get("item")
                    if not isinstance(item, dict):
                        continue
                    if not first and item.get("role") == "user" and item.get("lane", "user") == "user":
                        first = str(item.get("text", ""))
        stat = path.stat()
    except OSError:
        return None
    if head is None:
        return None
    created = None
    try:
        created = datetime.fromisoformat(str(head.get("created")))
    except ValueError:
        pass
    return SessionInfo(
        id=str(head.get("id")),
        path=path,
        created=created,
        modified=stat.st_mtime,
        cwd=str(head.get("cwd", "")),
        model=str(head.get("model", "")),
        first_prompt=first,
        messages=count,
    )


def list_sessions(directory: Path) -> list[SessionInfo]:
    """Sessions of one workspace directory, newest first."""
    infos = [i for i in (describe(p) for p in _files(directory)) if i is not None]
    return sorted(infos, key=lambda i: i.modified, reverse=True)


def format_listing(infos: list[SessionInfo]) -> str:
    """One line a session: id, local time, message count, first prompt."""
    lines = []
    for i in infos:
        when = datetime.fromtimestamp(i.modified).strftime("%Y-%m-%d %H:%M")
        prompt = " ".join(i.first_prompt.split())
        prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
        lines.append(f"{i.id}  {when}  {i.messages:>4} msgs  {prompt}")
    return "\n".join(lines)
