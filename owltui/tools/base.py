"""Shared pieces of the built-in tools: limits, parameter models, path handling as tools report it."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import sys
import sysconfig
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from owltui.agent.tool import ToolError
from owltui.files import paths
from owltui.text.codec import show_name

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


class Params(BaseModel):
    """Base of every tool's parameter model: unknown arguments are rejected, numbers may stand
    in for strings (a model sending ``"job_id": 3``)."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


def resolve_path(workspace: Path, path: str) -> Path:
    """``files.paths.resolve_path`` with its errors as the tool error the model reads."""
    try:
        return paths.resolve_path(workspace, path)
    except paths.PathError as exc:
        raise ToolError(str(exc)) from None


def display_path(workspace: Path, path: Path) -> str:
    """``path`` relative to the workspace when inside it; never contains a surrogate or a control."""
    try:
        shown = path.relative_to(workspace).as_posix() or "."
    except ValueError:
        shown = str(path)
    return show_name(shown)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="replace"))


_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
}


def open_regular(path: Path, shown: str) -> int:
    """A read-only descriptor on ``path`` if it is a regular file (symlinks followed); a clear
    ToolError for pipes, sockets, devices (``/dev/stdin`` included) and directories. The type is
    checked before opening (opening some devices has effects) and again on the open descriptor."""
    try:
        kind = stat.S_IFMT(os.stat(path).st_mode)
    except FileNotFoundError as exc:
        raise ToolError(f"File not found: {shown}") from exc
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror}") from exc
    if kind != stat.S_IFREG:
        what = _KINDS.get(kind, "not a regular file")
        raise ToolError(f"{shown} is {what}; the file tools open regular files only.")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(f"{shown} is not a regular file; the file tools open regular files only.")
    os.set_blocking(fd, True)
    return fd


@functools.cache
def rg_path() -> str | None:
    """The ripgrep binary: the one the ``ripgrep`` wheel put next to this Python (the venv's bin, or
    the scripts directory), else ``rg`` on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    places = [Path(sys.executable).parent / name]
    for scheme in (None, f"{os.name}_user"):
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if scripts:
            places.append(Path(scripts) / name)
    for place in places:
        if place.is_file() and os.access(place, os.X_OK):
            return str(place)
    return shutil.which("rg")


def require_rg() -> str:
    rg = rg_path()
    if rg is None:
        raise ToolError("ripgrep (rg) is not installed; it comes with owltui's `ripgrep` dependency.")
    return rg
