"""Shared pieces of the built-in tools: limits, parameter models, path handling, ``describe_params``."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import sys
import sysconfig
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from owltui.agent.tool import Tool, ToolError
from owltui.tools.textcodec import name_candidates, show_name

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


class Params(BaseModel):
    """Base of every tool's parameter model: unknown arguments are rejected, numbers may stand
    in for strings (a model sending ``"job_id": 3``)."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


def _type_name(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        return _type_name(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "enum" in schema:
        return "|".join(repr(v) if isinstance(v, str) else str(v) for v in schema["enum"])
    if "anyOf" in schema:
        names = [_type_name(s, defs) for s in schema["anyOf"] if s.get("type") != "null"]
        return "|".join(names) or "null"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type_name(schema.get('items', {}), defs)}"
    return str(kind)


def describe_params(model: type[BaseModel], name: str | None = None) -> str:
    """Short human summary of a parameter model, e.g. ``read {path: string, offset?: integer}``."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    defs = schema.get("$defs", {})
    fields = [
        f"{key}{'' if key in required else '?'}: {_type_name(prop, defs)}"
        for key, prop in schema.get("properties", {}).items()
    ]
    body = "{" + ", ".join(fields) + "}"
    return f"{name} {body}" if name else body


def describe_tool(tool: Tool) -> str:
    return describe_params(tool.params, tool.name)


def resolve_path(workspace: Path, path: str) -> Path:
    """An absolute, normalised path; relative paths are taken from the workspace. A name shown with
    visible forms (``bad_\\xff.txt`` for a name that is not UTF-8) finds the file it stands for."""
    if not path.strip():
        raise ToolError("path is empty")
    if "\0" in path:
        raise ToolError("path contains a NUL character")
    as_given, *decoded = (_absolute(workspace, c) for c in name_candidates(path))
    if decoded and not os.path.lexists(as_given) and os.path.lexists(decoded[0]):
        return decoded[0]  # the visible form of a name that exists (and the name as given does not)
    return as_given


def _absolute(workspace: Path, path: str) -> Path:
    p = Path(os.path.expanduser(path))
    return Path(os.path.normpath(p if p.is_absolute() else workspace / p))


def is_inside(workspace: Path, path: Path) -> bool:
    """True when ``path`` (symlinks resolved, even for a file not yet created) is in the workspace."""
    root = Path(os.path.realpath(workspace))
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


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
