"""Atomic file writes: a temp file in the same directory, fsynced, then renamed over the target."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> bool:
    """Write via a temp file in the same directory and rename; keeps an existing file's mode and
    writes through a symlink to its target. Returns True when the file already existed."""
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise (
            IsADirectoryError(21, "not a regular file")
            if stat.S_ISDIR(st.st_mode)
            else OSError(22, "not a regular file (a pipe, socket or device); only regular files are written")
        )
    mode: int | None = stat.S_IMODE(st.st_mode) if st is not None else None
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        new_mode = 0o666 & ~umask
    else:
        new_mode = mode
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, new_mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return mode is not None
