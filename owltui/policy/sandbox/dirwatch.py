"""Which watched directories changed since the last look, from the kernel's inotify queue.

``DirWatch`` holds one inotify instance. ``add(path)`` watches a directory (not following a symlink)
for what changes its ctime: an entry created, deleted, renamed in or out, an attribute change, the
directory itself deleted or moved. ``drain()`` reads the queue and returns ``Changes``: the
directories that had events and the ones that were deleted or moved away (their path is stale: the
watch follows the inode, not the name). The kernel queues an event before the system call that
caused it returns, so after a command ended every change it made is in the queue.

When the queue overflowed (more than ``max_queued_events`` changes), ``Changes.overflow`` says that
nothing can be concluded: the caller looks at every directory again. ``add`` returns False when
the directory cannot be watched (no inotify, or the instance already holds a quarter of the user's
``max_user_watches``: the limit is shared with the user's editors and file watchers, which must keep
working): the caller then ``stat``s that directory at every look instead. Not Linux:
``DirWatch.open()`` is None.
"""

from __future__ import annotations

import os
import select
import struct
import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Changes", "DirWatch"]

_IN_ATTRIB, _IN_MOVED_FROM, _IN_MOVED_TO = 0x4, 0x40, 0x80
_IN_CREATE, _IN_DELETE, _IN_DELETE_SELF, _IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED = 0x4000, 0x8000
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x01000000, 0x02000000
_MASK = (
    _IN_ATTRIB
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, getattr(os, "O_CLOEXEC", 0o2000000)
_EVENT = struct.Struct("iIII")

_WATCHES_FILE = "/proc/sys/fs/inotify/max_user_watches"
_lib: Any = None
_lib_lock = threading.Lock()


def _libc() -> Any:
    global _lib
    with _lib_lock:
        if _lib is None:
            import ctypes

            lib = ctypes.CDLL(None, use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
            _lib = lib
        return _lib


def _budget() -> int:
    """The watches one instance may hold: a quarter of the user's limit."""
    try:
        with open(_WATCHES_FILE, encoding="ascii") as fh:
            return max(0, int(fh.read().strip()) // 4)
    except (OSError, ValueError):
        return 2048  # a quarter of the old default limit


@dataclass
class Changes:
    """What ``drain`` found: ``dirty`` directories to read again, ``gone`` ones deleted or moved away
    (paths to forget with everything below them), ``overflow``: events were lost."""

    dirty: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    overflow: bool = False


class DirWatch:
    """One inotify instance watching directories by path; see the module docstring. Not thread-safe
    (its owner holds a lock)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._paths: dict[int, str] = {}  # watch descriptor -> the path it was added for
        self._wds: dict[str, int] = {}
        self._budget = _budget()
        self._finalizer = weakref.finalize(self, os.close, fd)

    @classmethod
    def open(cls) -> DirWatch | None:
        """A new instance, or None where inotify is not available (not Linux, the instance limit)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            fd = int(_libc().inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC))
        except (OSError, AttributeError):
            return None
        return cls(fd) if fd >= 0 else None

    def close(self) -> None:
        self._finalizer()

    def add(self, path: str) -> bool:
        """Watch directory ``path``; False when it cannot be watched (look at it by ``stat``)."""
        if len(self._wds) >= self._budget:
            return False
        wd = int(_libc().inotify_add_watch(self._fd, os.fsencode(path), _MASK))
        if wd < 0:
            return False
        old = self._paths.get(wd)
        if old is not None and old != path:  # one directory at two paths (a bind mount): stat this one
            return False
        self._paths[wd] = path
        self._wds[path] = wd
        return True

    def discard(self, path: str) -> None:
        """Stop watching ``path`` (forgotten by the caller)."""
        wd = self._wds.pop(path, None)
        if wd is not None and self._paths.get(wd) == path:
            del self._paths[wd]
            _libc().inotify_rm_watch(self._fd, wd)

    def watching(self, path: str) -> bool:
        return path in self._wds

    def pending(self) -> bool:
        """Events are queued: a ``drain`` now would find something (or report an overflow)."""
        return bool(select.select([self._fd], [], [], 0)[0])

    def drain(self) -> Changes:
        """Every event queued since the last drain, as directories changed and gone."""
        out = Changes()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return out
            except OSError:
                out.overflow = True
                return out
            if not data:
                return out
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                pos += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    out.overflow = True
                    continue
                path = self._paths.get(wd)
                if path is None:
                    continue
                if mask & _GONE:
                    out.gone.add(path)
                    if mask & _IN_IGNORED:  # the kernel dropped the watch
                        del self._paths[wd]
                        if self._wds.get(path) == wd:
                            del self._wds[path]
                else:
                    out.dirty.add(path)
