"""Landlock through ctypes: the kernel's constants, the libc handles, the ABI probe, the ruleset.

``libc()`` loads the libc functions the sandbox calls (``syscall``, ``prctl``, ``unshare``,
``mount``) and the two Landlock structures, once and on first use (ctypes costs ~2 ms to import).
``landlock_abi()`` asks the kernel which Landlock ABI it has; ``ruleset()`` is what a policy grants:
every write-type right handled, given back under the writable roots, ``/dev/null``-style devices
writable, and TCP connect and abstract UNIX sockets handled when the network is off.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# ---- Landlock UAPI (include/uapi/linux/landlock.h); the syscall numbers are the same on every arch.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6

_WRITE_ABI1 = (
    FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_CHAR
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_BLOCK
    | FS_MAKE_SYM
)
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE
_NEVER_GRANTED = FS_MAKE_CHAR | FS_MAKE_BLOCK  # device nodes: no coding task needs them

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx")
DEVICE_DIRS = ("/dev/pts",)


class _Libc:
    """ctypes handles, loaded on first use (ctypes costs ~2 ms to import)."""

    def __init__(self) -> None:
        import ctypes

        self.ctypes = ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        self.syscall = libc.syscall
        self.syscall.restype = ctypes.c_long
        self.prctl = libc.prctl
        self.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        self.unshare = libc.unshare
        self.unshare.argtypes = [ctypes.c_int]
        self.mount = libc.mount
        self.mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_void_p,
        ]

        class RulesetAttr(ctypes.Structure):
            _fields_ = [
                ("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64),
            ]

        class PathBeneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        self.RulesetAttr = RulesetAttr
        self.PathBeneath = PathBeneath


_libc: _Libc | None = None
_libc_lock = threading.Lock()


def libc() -> _Libc:
    """The libc handles (loaded on the first call)."""
    global _libc
    with _libc_lock:
        if _libc is None:
            _libc = _Libc()
        return _libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    lib = libc()
    version = lib.syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    return int(version) if version > 0 else 0


@dataclass
class Landlock:
    abi: int
    handled_fs: int
    handled_net: int
    scoped: int
    rules: list[tuple[bytes, int]]  # path, allowed access (already fitted to file or directory)


def ruleset(abi: int, writable_roots: Iterable[Path], network: bool) -> Landlock:
    """The Landlock ruleset for ``abi``: writes only under ``writable_roots`` (and to the devices);
    without ``network`` no TCP connect (ABI >= 4) and no abstract UNIX sockets (ABI >= 6)."""
    handled = _WRITE_ABI1 | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0)
    grant = handled & ~_NEVER_GRANTED
    rules: list[tuple[bytes, int]] = []

    def add(path: Path | str, dir_access: int) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        access = dir_access if stat.S_ISDIR(st.st_mode) else dir_access & _FILE_RIGHTS
        if access:
            rules.append((os.fsencode(str(path)), access))

    device_access = handled & (FS_WRITE_FILE | FS_TRUNCATE)
    for dev in DEVICES:
        add(dev, device_access)
    for dev in DEVICE_DIRS:
        add(dev, device_access)
    for root in writable_roots:
        add(root, grant)
    handled_net = NET_CONNECT_TCP if (not network and abi >= 4) else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET if (not network and abi >= 6) else 0
    return Landlock(abi, handled, handled_net, scoped, rules)
