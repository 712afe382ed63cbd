"""Recognising, in a failed command's output, an access the sandbox refused, and saying so.

``explain_blocked`` reads the error lines (``Read-only file system``, ``Permission denied``...),
finds the paths they name, tells a refused read from a refused write (``access_kind``), and for
each asks the policy whether the sandbox is why (outside the writable roots, protected
configuration, read-only mode, network off; for reads: another process's ``/proc`` entries, or
other users' files once root's override of file permissions is dropped). The sentence tells the
model what happened and what the user can change. A read is never reported as a write, and a
pseudo-filesystem path (``/proc``, ``/sys``, ``/dev``) is never suggested for ``sandbox_writable``:
no entry there could make it readable or writable. The path tests the policy shares live here too
(``inside``; ``existing`` and ``below_any``, on the plan's hot path).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Protocol

from owltui.policy.sandbox.landlock import DEVICES


def inside(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or lies below it (no symlinks resolved)."""
    return path == root or root in path.parents


def existing(path: Path) -> str | None:
    """``path`` with every symlink resolved, None when it does not exist: what ``realpath`` then
    ``exists`` say, read from the kernel (an ``O_PATH`` descriptor) in three system calls."""
    try:
        fd = os.open(path, getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc
        real = os.path.realpath(path)
        return real if os.path.exists(real) else None
    finally:
        os.close(fd)


def below_any(path: str, roots: list[str]) -> bool:
    """``inside`` for normalised absolute path strings: ``path`` is one of ``roots`` or below one."""
    return any(path == r or path.startswith(r if r.endswith("/") else r + "/") for r in roots)


class Confinement(Protocol):
    """What ``explain_blocked`` reads of the policy (``sandbox.SandboxPolicy``)."""

    mode: str
    workspace: Path

    @property
    def protects_config(self) -> bool: ...

    @property
    def network_restricted(self) -> bool: ...

    def protected_paths(self) -> list[Path]: ...

    def writable_roots(self) -> list[Path]: ...


_DENIED = re.compile(
    r"read-only file system|permission denied|operation not permitted|"
    r"device or resource busy|EACCES|EROFS|EPERM|EBUSY|errno 13|errno 30|errno 1\b",
    re.IGNORECASE,
)
_NET = re.compile(r"connect|connection|network|socket", re.IGNORECASE)
_QUOTED = re.compile(r"['\"‘’`“]([^'\"‘’`“”\n]{1,4096})['\"‘’`”]")
_BARE = re.compile(
    r"(?:^|[\s:=(])((?:~|\.{1,2})?/[^\s:'\"`,;()]*|\.{1,2}(?=[\s:'\"]|$)|"
    r"[A-Za-z0-9_.@+-]+/[^\s:'\"`,;()]*|\.[A-Za-z0-9_][^\s:'\"`,;()/]*)"
)


# Wording that says which access failed. Writes are looked for first: "couldn't open temporary
# file" is sed -i writing, "cannot open" alone is a read.
_WRITE_WORDS = re.compile(
    r"read-only file system|EROFS|for writing|cannot (?:touch|create|remove|make|move|overwrite|write|"
    r"link|rename|truncate|unlink|delete|change|set|chmod|chown)|couldn't (?:open temporary|create|"
    r"write|remove|rename)|failed to (?:create|write|remove|rename|unlink|truncate)|"
    r"changing (?:permissions|ownership)|setting (?:times|permissions)|"
    r"\b(?:mkdir|rmdir|unlink|rename|symlink|chmod|chown|utime|truncate|copyfile)\b",
    re.IGNORECASE,
)
_READ_WORDS = re.compile(
    r"for reading|cannot (?:open|access|read|stat|open directory)|couldn't (?:open|read)|"
    r"failed to (?:open|read|access)|\b(?:opendir|scandir|readlink)\b",
    re.IGNORECASE,
)
# "bash: line 1: /etc/x: Permission denied": the shell's own report, about a redirection
_SHELL_SAYS = re.compile(r"^\s*(?:\S*/)?(?:ba|da|z|k|mk|a)?sh:(?: line \d+:| \d+:)?\s")
PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
_PROCESS_ENTRY = re.compile(r"/proc/\d+(?:/|$)")


def _candidates(line: str) -> list[str]:
    found = [m.group(1) for m in _QUOTED.finditer(line)]
    found += [m.group(1) for m in _BARE.finditer(line)]
    speaker = line.lstrip().split(":", 1)[0] if ":" in line else None  # "/bin/bash: ..." names itself
    return [f.strip() for f in found if f.strip() and f.strip() != speaker]


def pseudo(path: Path) -> bool:
    """``path`` lies in a kernel pseudo-filesystem (``/proc``, ``/sys``, ``/dev``) that no
    ``sandbox_writable`` entry could open up."""
    return any(inside(path, root) for root in PSEUDO_ROOTS) and str(path) not in DEVICES


def _writable_without_sandbox(path: Path) -> bool:
    """Could this process write ``path`` (or create it) if there were no sandbox? A refusal the
    ordinary permissions would give too is not the sandbox's doing."""
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return os.access(p, os.W_OK)


def _readable_by_mode(path: Path) -> bool:
    """Do the file's permission bits alone let this user read it (no root override): what a
    sandboxed command, whose capabilities are dropped, is left with."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_uid == os.geteuid():
        return bool(st.st_mode & stat.S_IRUSR)
    if st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        return bool(st.st_mode & stat.S_IRGRP)
    return bool(st.st_mode & stat.S_IROTH)


def access_kind(line: str, path: Path) -> str:
    """Which access of ``path`` the error ``line`` reports as refused: "write" or "read".

    The wording decides when it can (``cannot touch``, ``Read-only file system``, ``for reading``,
    ``cannot access``); another process's ``/proc/<pid>`` entry was being read (the sandbox refuses
    looking into it, ``cat`` and ``< file`` alike); the shell's own report is otherwise about a
    redirection (a write); another pseudo-filesystem entry was being read, and a path that does not
    exist was being created. For an existing file (a bare ``[Errno 13]``) it is a read
    when the permission bits alone do not let a sandboxed command read it, and a write when they do
    (reading is otherwise free in the sandbox, so the refusal was of something else)."""
    if _WRITE_WORDS.search(line):
        return "write"
    if _READ_WORDS.search(line):
        return "read"
    if _PROCESS_ENTRY.match(str(path)):
        # another process's /proc entry (cat, `< file`, /proc/<pid>/cwd/x): the sandbox refuses
        # looking into it at all, whether x exists or not
        return "read"
    if _SHELL_SAYS.match(line):
        return "write"
    if pseudo(path):
        return "read"
    if not os.path.lexists(path):
        return "write"
    return "write" if _readable_by_mode(path) else "read"


def _verdict(policy: Confinement, path: Path) -> str | None:
    """Why the policy refuses writes to ``path`` (None: it allows them, or the sandbox is not why)."""
    if policy.protects_config and any(inside(path, p) for p in policy.protected_paths()):
        return "protected"
    if path in (Path(d) for d in DEVICES):
        return None
    if policy.mode != "read-only" and any(inside(path, root) for root in policy.writable_roots()):
        return None
    if not _writable_without_sandbox(path):
        return None
    if pseudo(path):
        return "pseudo"
    return "read-only" if policy.mode == "read-only" else "outside"


def _read_verdict(path: Path) -> str | None:
    """Why the sandbox refused reading ``path`` (None: the ordinary permissions refuse it too)."""
    if pseudo(path):
        reached = path
        while not os.path.exists(reached) and reached != reached.parent:
            reached = reached.parent  # /proc/<pid>/cwd/x: what OwlTUI itself could reach of it
        return "read-pseudo" if os.access(reached, os.R_OK) else None
    if not os.access(path, os.R_OK):
        return None  # unreadable for OwlTUI itself: not the sandbox's doing
    return None if _readable_by_mode(path) else "read-file"


def _resolve(text: str, cwd: Path) -> Path:
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = cwd / p
    lexical = Path(os.path.normpath(p))
    if pseudo(lexical):
        # /proc/<pid>/cwd and friends are links into another process's view: the name as written
        # is what was refused, not where the link leads for OwlTUI
        return lexical
    # realpath of the parent: the file itself may not exist (it could not be created)
    return Path(os.path.realpath(p.parent)) / p.name if p.name else Path(os.path.realpath(p))


# what a refused access of each kind means, in the order the sentences are given
_REFUSED = {
    "pseudo": (
        "blocked by the sandbox: writing {names} is not allowed; it is a kernel pseudo-filesystem "
        "entry, which sandbox_writable cannot make writable (only --sandbox off would)"
    ),
    "read-pseudo": (
        "blocked by the sandbox: reading {names} was refused (a read, not a write): sandboxed "
        "commands cannot look into processes outside the sandbox (their environment, memory, open "
        "files, working directory); no sandbox_writable entry changes this"
    ),
    "read-file": (
        "blocked by the sandbox: reading {names} was refused (a read, not a write): sandboxed "
        "commands run without root's override of file permissions, so other users' private files "
        "stay closed; no sandbox_writable entry changes this (only --sandbox off would)"
    ),
}


def explain_blocked(policy: Confinement, output: str, cwd: Path) -> str | None:
    """The "blocked by the sandbox" sentence for ``output``, or None when no refusal of the sandbox's
    shows (a refused read is reported as a read, a refused write as a write)."""
    found: dict[str, list[Path]] = {}
    network = False
    for line in output.splitlines()[-400:] if output.count("\n") > 400 else output.splitlines():
        if not _DENIED.search(line):
            continue
        if policy.network_restricted and _NET.search(line) and "permission denied" in line.lower():
            network = True
        for cand in _candidates(line):
            try:
                path = _resolve(cand, cwd)
                reading = access_kind(line, path) == "read"
                why = _read_verdict(path) if reading else _verdict(policy, path)
            except (OSError, ValueError):
                continue
            bucket = found.setdefault(why, []) if why else None
            if bucket is not None and path not in bucket:
                bucket.append(path)
    parts: list[str] = []
    if found.get("protected"):
        names = ", ".join(_show(p, policy.workspace) for p in found["protected"][:3])
        parts.append(
            f"blocked by the sandbox: {names} is protected configuration (read-only for commands, "
            "also as root); ask the user to make this change"
        )
    if found.get("read-only"):
        names = ", ".join(_show(p, policy.workspace) for p in found["read-only"][:3])
        parts.append(
            f'blocked by the sandbox: it is read-only (sandbox = "read-only"), so {names} cannot '
            "be written; the user can run with --sandbox workspace-write or --sandbox off"
        )
    if found.get("outside"):
        outside = found["outside"]
        dirs = sorted({str(_suggest(p)) for p in outside[:3]})
        listed = ", ".join(f'"{d}"' for d in dirs)
        parts.append(
            f"blocked by the sandbox: writes outside the workspace are not allowed "
            f"({', '.join(str(p) for p in outside[:3])}); the user can allow this path with "
            f"sandbox_writable = [{listed}] in the config file, or run OwlTUI with --sandbox off"
        )
    for kind, sentence in _REFUSED.items():
        if found.get(kind):
            parts.append(sentence.format(names=", ".join(str(p) for p in found[kind][:3])))
    if network:
        parts.append("blocked by the sandbox: network connections are not allowed (sandbox_network = false)")
    return "\n".join(parts) if parts else None


def _show(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _suggest(path: Path) -> Path:
    """The directory to suggest for ``sandbox_writable``: the nearest existing directory."""
    p = path if path.is_dir() else path.parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return p
