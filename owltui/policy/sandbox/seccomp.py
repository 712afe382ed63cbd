"""The socket filter every sandboxed command gets: a classic-BPF seccomp program, built in the parent.

Landlock cannot see Unix sockets by path, so a command could reach the user's tmux server, ssh-agent
or session bus through a socket file and have it run code outside the sandbox. ``socket_filter()``
builds a seccomp program that makes

* ``socket(AF_UNIX, ...)`` fail with EPERM (unless ``unix_sockets`` allows them): no pathname or
  abstract Unix socket can be created, so none can be connected. ``socketpair`` stays allowed
  (pipes between processes keep working), except ``SOCK_DGRAM`` pairs: a datagram socket may
  ``sendto`` any socket path even when it is connected;
* with the network off, every ``AF_INET``/``AF_INET6`` socket but a TCP stream fail with EPERM (UDP,
  ICMP, raw, SCTP and MPTCP sockets: Landlock only governs TCP), and ``AF_PACKET`` too;
* ``io_uring_setup`` fail with ENOSYS (io_uring opens sockets without the ``socket`` system call;
  programs fall back to plain system calls);
* any system call of another ABI (32-bit compat, x32) fail with ENOSYS, as their numbers differ.

The program checks the audit architecture first; it exists for x86_64 and aarch64 only
(``socket_filter_support()`` says why not elsewhere). The child installs it with one ``prctl`` after
``PR_SET_NO_NEW_PRIVS`` (see ``sandbox_child``): no imports, no allocation there. The alternative, the
``pyseccomp`` ctypes wrapper, needs the system's libseccomp and allocates while loading a filter, so
the dozen instructions are written out here.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from owltui.policy.sandbox.landlock import libc

# ---- linux/filter.h, linux/seccomp.h, linux/audit.h, linux/socket.h, asm/unistd.h
_BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_BPF_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_BPF_RET_K = 0x06  # BPF_RET | BPF_K
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
_SECCOMP_GET_ACTION_AVAIL = 2
_X32_SYSCALL_BIT = 0x40000000
# struct seccomp_data: nr, arch, then the arguments as u64 (the low word first: little endian)
_OFF_NR, _OFF_ARCH, _OFF_ARG0, _OFF_ARG1, _OFF_ARG2 = 0, 4, 16, 24, 32
_AF_UNIX, _AF_INET, _AF_INET6, _AF_PACKET = 1, 2, 10, 17
_SOCK_STREAM, _SOCK_DGRAM, _SOCK_TYPE_MASK = 1, 2, 0xF  # the mask drops SOCK_NONBLOCK / SOCK_CLOEXEC
_IPPROTO_TCP = 6
_EPERM, _ENOSYS = 1, 38


@dataclass(frozen=True)
class _Arch:
    audit: int
    socket: int
    socketpair: int
    io_uring_setup: int
    seccomp: int
    x32: bool  # the x86_64 audit arch also carries x32 calls (numbers with the x32 bit set)


_ARCHES = {
    "x86_64": _Arch(0xC000003E, 41, 53, 425, 317, True),
    "aarch64": _Arch(0xC00000B7, 198, 199, 425, 277, False),
}
_MACHINE_NAMES = {"amd64": "x86_64", "arm64": "aarch64"}


def _arch() -> _Arch | None:
    machine = platform.machine().lower()
    return _ARCHES.get(_MACHINE_NAMES.get(machine, machine))


_support: str | None = None
_probed = False


def socket_filter_support() -> str | None:
    """None when this machine can take the socket filter, else why not (for the startup notes)."""
    global _support, _probed
    if _probed:
        return _support
    _probed = True
    arch = _arch()
    if not sys.platform.startswith("linux"):
        _support = "not Linux"
    elif arch is None:
        _support = f"no socket filter for the {platform.machine() or 'unknown'} architecture"
    else:
        lib = libc()
        action = lib.ctypes.c_uint32(_RET_ERRNO)
        res = lib.syscall(arch.seccomp, _SECCOMP_GET_ACTION_AVAIL, 0, lib.ctypes.byref(action))
        if res != 0:
            _support = f"this kernel has no seccomp filters ({os.strerror(lib.ctypes.get_errno())})"
    return _support


def _program(arch: _Arch, unix_sockets: bool, network: bool) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, k) rows; jumps are resolved from labels."""
    rows: list[tuple[int, str | int, str | int, int]] = []

    def ld(offset: int) -> None:
        rows.append((_BPF_LD_W_ABS, 0, 0, offset))

    def jeq(k: int, yes: str | int, no: str | int = 0) -> None:
        rows.append((_BPF_JEQ_K, yes, no, k))

    ld(_OFF_ARCH)
    jeq(arch.audit, 0, "no_sys")
    ld(_OFF_NR)
    if arch.x32:
        rows.append((_BPF_JGE_K, "no_sys", 0, _X32_SYSCALL_BIT))
    jeq(arch.io_uring_setup, "no_sys")
    if not unix_sockets:
        jeq(arch.socketpair, "socketpair")
    jeq(arch.socket, 0, "allow")
    ld(_OFF_ARG0)  # the address family
    if not unix_sockets:
        jeq(_AF_UNIX, "deny")
    if not network:
        jeq(_AF_PACKET, "deny")
        jeq(_AF_INET, "inet")
        jeq(_AF_INET6, "inet")
    rows.append((_BPF_RET_K, 0, 0, _RET_ALLOW))
    labels: dict[str, int] = {}
    if not network:
        labels["inet"] = len(rows)
        ld(_OFF_ARG1)  # the type, without SOCK_NONBLOCK / SOCK_CLOEXEC
        rows.append((_BPF_AND_K, 0, 0, _SOCK_TYPE_MASK))
        jeq(_SOCK_STREAM, 0, "deny")
        ld(_OFF_ARG2)  # the protocol: TCP (Landlock decides where it may connect), not SCTP or MPTCP
        jeq(0, "allow")
        jeq(_IPPROTO_TCP, "allow", "deny")
    if not unix_sockets:
        labels["socketpair"] = len(rows)
        ld(_OFF_ARG0)
        jeq(_AF_UNIX, 0, "allow")
        ld(_OFF_ARG1)
        rows.append((_BPF_AND_K, 0, 0, _SOCK_TYPE_MASK))
        jeq(_SOCK_DGRAM, "deny", "allow")
    labels["allow"] = len(rows)
    rows.append((_BPF_RET_K, 0, 0, _RET_ALLOW))
    labels["deny"] = len(rows)
    rows.append((_BPF_RET_K, 0, 0, _RET_ERRNO | _EPERM))
    labels["no_sys"] = len(rows)
    rows.append((_BPF_RET_K, 0, 0, _RET_ERRNO | _ENOSYS))

    def offset(at: int, target: str | int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - at - 1
        assert 0 <= jump < 256, "a BPF jump is one byte"
        return jump

    return [(code, offset(i, jt), offset(i, jf), k) for i, (code, jt, jf, k) in enumerate(rows)]


@dataclass
class SocketFilter:
    """The program as ctypes buffers; ``address`` is what ``prctl(PR_SET_SECCOMP, ...)`` takes. The
    object keeps the buffers alive."""

    address: int
    length: int
    rows: tuple[tuple[int, int, int, int], ...]  # the program itself: what a spawner rebuilds it from
    _keep: tuple[Any, ...]


def socket_filter(unix_sockets: bool, network: bool) -> SocketFilter | None:
    """The filter for a policy (see the module docstring); None where ``socket_filter_support()``
    says this machine cannot take it."""
    if socket_filter_support() is not None:
        return None
    arch = _arch()
    assert arch is not None
    return filter_from_rows(_program(arch, unix_sockets, network))


def filter_from_rows(rows: Iterable[Iterable[int]]) -> SocketFilter:
    """The ctypes buffers of a program given as (code, jt, jf, k) rows (``SocketFilter.rows``)."""
    import ctypes as ct

    class SockFilter(ct.Structure):
        _fields_ = [("code", ct.c_uint16), ("jt", ct.c_uint8), ("jf", ct.c_uint8), ("k", ct.c_uint32)]

    class SockFprog(ct.Structure):
        _fields_ = [("len", ct.c_ushort), ("filter", ct.POINTER(SockFilter))]

    program = tuple((int(c), int(jt), int(jf), int(k)) for c, jt, jf, k in rows)
    insns = (SockFilter * len(program))(*(SockFilter(*row) for row in program))
    prog = SockFprog(len(program), ct.cast(insns, ct.POINTER(SockFilter)))
    return SocketFilter(ct.addressof(prog), len(program), program, (insns, prog))
