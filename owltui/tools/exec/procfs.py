"""Reading /proc (Linux): a process's stat line, command line, environment and ``OWLTUI_PROC`` mark,
and its children and descendants. Only reads; nothing here signals or reaps a process."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass

MARK = "OWLTUI_PROC"


@dataclass(frozen=True)
class Stat:
    pid: int
    state: str
    ppid: int
    pgid: int
    sid: int
    start: int  # clock ticks after boot: with the pid, names one process for good

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X", "x")


def read_stat(pid: int) -> Stat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2 :].split()
    try:
        return Stat(pid, rest[0].decode(), int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19]))
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    st = read_stat(pid)
    return st is not None and st.alive


def read_cmdline(pid: int) -> str:
    """The command line of ``pid`` as text (arguments joined by spaces), or its name in brackets."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        raw = b""
    args = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    if args:
        return " ".join(args)
    try:
        with open(f"/proc/{pid}/comm", "rb") as fh:
            return f"[{fh.read().strip().decode('utf-8', 'replace')}]"
    except OSError:
        return "[?]"


def read_environ(pid: int) -> bytes | None:
    """The environment block of ``pid`` (empty while it is between two images in ``execve``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return fh.read()
    except OSError:
        return None


def read_mark(pid: int, env: bytes | None = None) -> str | None:
    """The ``OWLTUI_PROC`` token in the environment of ``pid`` (None: none, or not readable)."""
    if env is None:
        env = read_environ(pid)
    if not env:
        return None
    key = MARK.encode() + b"="
    for item in env.split(b"\0"):
        if item.startswith(key):
            return item[len(key) :].decode("ascii", "replace")
    return None


_children_files: bool | None = None


def _children_by_walk(pid: int) -> list[int]:
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            st = read_stat(int(entry))
            if st is not None and st.ppid == pid:
                out.append(st.pid)
    return out


def children_files() -> bool | None:
    """Whether ``children`` reads ``/proc/PID/task/*/children`` (None: not checked yet)."""
    return _children_files


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (of every thread): ``/proc/PID/task/*/children`` where the
    kernel has it (CONFIG_PROC_CHILDREN), else a walk of /proc."""
    global _children_files
    if _children_files is None:
        _children_files = os.path.exists(f"/proc/self/task/{threading.get_native_id()}/children")
    if not _children_files:
        return _children_by_walk(pid)
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(x) for x in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def descendants(roots: Iterable[int]) -> set[int]:
    """Every live descendant of ``roots`` (not the roots themselves)."""
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children(todo.pop()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen
