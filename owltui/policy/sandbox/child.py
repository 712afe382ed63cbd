"""What a command's new process does before ``exec``, and the probe of what this machine allows.

``child_setup(plan)`` prepares everything in the parent and returns the set-up function — run in the
child the fork server makes (``spawner``: it rebuilds the plan from ``plan_to_wire``'s JSON), or as
``Popen``'s ``preexec_fn`` (MCP servers, the probe, and commands when the server is gone): enter a new
mount namespace (a user namespace too, unless running as root with CAP_SYS_ADMIN), make every mount
private, bind the planned paths onto themselves (read-only where the plan says), drop capabilities
from the bounding set (root), set ``PR_SET_NO_NEW_PRIVS``, restrict itself with the Landlock
ruleset and install the socket filter (``seccomp``). The child runs only system calls through
ctypes objects made in the parent: no imports, no locks, no allocation beyond small ints. A failure
prints one line and exits 126 before anything runs (fail closed). ``capabilities()`` probes once
per process whether Landlock and namespaces work.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from owltui.policy.sandbox.landlock import (
    RULE_PATH_BENEATH,
    SYS_ADD_RULE,
    SYS_CREATE_RULESET,
    SYS_RESTRICT_SELF,
    Landlock,
    landlock_abi,
    libc,
)
from owltui.policy.sandbox.seccomp import PR_SET_SECCOMP, SECCOMP_MODE_FILTER, SocketFilter, filter_from_rows

# ---- namespaces and mounts (linux/sched.h, linux/mount.h, linux/prctl.h, linux/capability.h)
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_NOATIME, _MS_NODIRATIME, _MS_BIND = 32, 1024, 2048, 4096
_MS_REC, _MS_PRIVATE, _MS_RELATIME, _MS_STRICTATIME = 16384, 1 << 18, 1 << 21, 1 << 24
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_CAP_SYS_ADMIN = 21
# What a root command keeps: file ownership and permission overrides, kill, setuid/setgid, low ports,
# raw sockets (ping), audit writes. Gone: sys_admin (mount, setns), module, rawio, ptrace, mknod, ...
ROOT_KEEPS = frozenset({0, 1, 2, 3, 4, 5, 6, 7, 10, 13, 29})


def _effective_caps() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def _root_with_sys_admin() -> bool:
    return os.geteuid() == 0 and bool(_effective_caps() >> _CAP_SYS_ADMIN & 1)


def last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 40


@dataclass(frozen=True)
class Capabilities:
    """What this machine allows: ``landlock_abi`` 0 means no Landlock; ``namespaces`` whether a child
    may enter a new mount namespace (read-only islands in the workspace); ``userns`` whether that
    takes a user namespace (not root)."""

    landlock_abi: int
    namespaces: bool
    userns: bool
    detail: str = ""


_caps: Capabilities | None = None


def _probe_namespaces(userns: bool) -> tuple[bool, str]:
    """Start ``true`` in a new mount (and user) namespace with a private, bound mount, as commands will."""
    import subprocess

    plan = Plan(
        userns=userns,
        unshare=True,
        mounts=[],
        drop_caps=(),
        landlock=None,
        cwd=b"/",
        ids=(os.getuid(), os.getgid()),
    )
    true = "/bin/true" if os.path.exists("/bin/true") else "true"
    try:
        proc = subprocess.run(
            [true],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            preexec_fn=child_setup(plan),
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    if proc.returncode != 0:
        return False, (proc.stdout + proc.stderr).decode(errors="replace").strip()
    return True, ""


def capabilities(refresh: bool = False) -> Capabilities:
    """Probe (once per process) what the sandbox can use here; cheap after the first call."""
    global _caps
    if _caps is not None and not refresh:
        return _caps
    if not sys.platform.startswith("linux"):
        _caps = Capabilities(0, False, False, "not Linux")
        return _caps
    abi = landlock_abi()
    userns = not _root_with_sys_admin()
    ok, detail = _probe_namespaces(userns)
    if not ok and not userns:  # root without the right to a plain mount namespace: try a user one
        userns = True
        ok, detail = _probe_namespaces(userns)
    _caps = Capabilities(abi, ok, userns, detail)
    return _caps


@dataclass
class Plan:
    userns: bool
    unshare: bool
    mounts: list[tuple[bytes, int | None]]  # path, None: bind read-write; flags: bind, then remount
    drop_caps: Sequence[int]
    landlock: Landlock | None
    cwd: bytes
    ids: tuple[int, int]
    socket_filter: SocketFilter | None = None


def plan_to_wire(plan: Plan) -> str:
    """``plan`` as JSON for the spawner (``spawner``): paths as their bytes read as Latin-1 (the same
    whatever either process's locale), the socket filter as its program rows (its ctypes buffers live
    at addresses of this process only)."""
    ll = plan.landlock
    return json.dumps(
        {
            "userns": plan.userns,
            "unshare": plan.unshare,
            "mounts": [[path.decode("latin-1"), flags] for path, flags in plan.mounts],
            "drop_caps": list(plan.drop_caps),
            "landlock": None
            if ll is None
            else [
                ll.abi,
                ll.handled_fs,
                ll.handled_net,
                ll.scoped,
                [[p.decode("latin-1"), a] for p, a in ll.rules],
            ],
            "cwd": plan.cwd.decode("latin-1"),
            "ids": list(plan.ids),
            "filter": None if plan.socket_filter is None else [list(r) for r in plan.socket_filter.rows],
        },
        separators=(",", ":"),
    )


def plan_from_wire(text: str) -> Plan:
    """The ``Plan`` ``plan_to_wire`` wrote, with the socket filter rebuilt in this process."""
    d = json.loads(text)
    ll = d["landlock"]
    return Plan(
        userns=bool(d["userns"]),
        unshare=bool(d["unshare"]),
        mounts=[
            (path.encode("latin-1"), None if flags is None else int(flags)) for path, flags in d["mounts"]
        ],
        drop_caps=[int(c) for c in d["drop_caps"]],
        landlock=None
        if ll is None
        else Landlock(
            int(ll[0]), int(ll[1]), int(ll[2]), int(ll[3]), [(p.encode("latin-1"), int(a)) for p, a in ll[4]]
        ),
        cwd=d["cwd"].encode("latin-1"),
        ids=(int(d["ids"][0]), int(d["ids"][1])),
        socket_filter=None if d["filter"] is None else filter_from_rows(d["filter"]),
    )


def _fail_in_child(step: str, err: int) -> None:
    msg = (
        f"owltui: the sandbox could not be set up ({step}: {os.strerror(err)}); the command did not run "
        "(the user can run OwlTUI with --sandbox off).\n"
    )
    try:
        os.write(2, msg.encode())
    finally:
        os._exit(126)


def child_setup(plan: Plan) -> Callable[[], None]:
    """The ``preexec_fn``: everything is prepared here, in the parent; the child makes system calls."""
    lib = libc()
    ct = lib.ctypes
    uid_map = f"{plan.ids[0]} {plan.ids[0]} 1".encode()
    gid_map = f"{plan.ids[1]} {plan.ids[1]} 1".encode()
    attr = None
    rules: list[tuple[bytes, Any]] = []
    attr_size = 0
    ll = plan.landlock
    if ll is not None:
        attr = lib.RulesetAttr(ll.handled_fs, ll.handled_net, ll.scoped)
        attr_size = 8 if ll.abi < 4 else 16 if ll.abi < 6 else 24
        rules = [(path, lib.PathBeneath(access, -1)) for path, access in ll.rules]
    mounts = [(path, ct.c_char_p(path), flags) for path, flags in plan.mounts]
    bind_rec = _MS_BIND | _MS_REC
    o_path = getattr(os, "O_PATH", 0)
    syscall, mount, prctl, unshare = lib.syscall, lib.mount, lib.prctl, lib.unshare
    get_errno = ct.get_errno
    byref = ct.byref
    filter_address = plan.socket_filter.address if plan.socket_filter is not None else 0

    def write_file(path: str, data: bytes) -> None:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def setup() -> None:
        step = "start"
        try:
            if plan.unshare:
                step = "unshare"
                if unshare(_CLONE_NEWNS | (_CLONE_NEWUSER if plan.userns else 0)) != 0:
                    return _fail_in_child(step, get_errno())
                if plan.userns:
                    step = "uid_map"
                    write_file("/proc/self/setgroups", b"deny")
                    write_file("/proc/self/uid_map", uid_map)
                    write_file("/proc/self/gid_map", gid_map)
                step = "mount private"
                if mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
                    return _fail_in_child(step, get_errno())
                for _path, cpath, flags in mounts:
                    step = "bind"
                    if mount(cpath, cpath, None, bind_rec, None) != 0:
                        return _fail_in_child(step, get_errno())
                    if flags is not None:
                        step = "read-only remount"
                        if mount(None, cpath, None, flags, None) != 0:
                            return _fail_in_child(step, get_errno())
                step = "chdir"
                os.chdir(plan.cwd)  # the cwd was taken before the binds: step onto them
            for cap in plan.drop_caps:
                step = "drop capability"
                if prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                    return _fail_in_child(step, get_errno())
            step = "no_new_privs"
            if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                return _fail_in_child(step, get_errno())
            if attr is not None:
                step = "landlock_create_ruleset"
                fd = syscall(SYS_CREATE_RULESET, byref(attr), attr_size, 0)
                if fd < 0:
                    return _fail_in_child(step, get_errno())
                step = "landlock_add_rule"
                for path, beneath in rules:
                    try:
                        pfd = os.open(path, o_path | os.O_CLOEXEC)
                    except OSError:
                        continue  # vanished since the plan was made: nothing to grant
                    beneath.parent_fd = pfd
                    res = syscall(SYS_ADD_RULE, fd, RULE_PATH_BENEATH, byref(beneath), 0)
                    os.close(pfd)
                    if res != 0:
                        return _fail_in_child(step, get_errno())
                step = "landlock_restrict_self"
                if syscall(SYS_RESTRICT_SELF, fd, 0) != 0:
                    return _fail_in_child(step, get_errno())
                os.close(fd)
            if filter_address:
                step = "seccomp"
                if prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, filter_address, 0, 0) != 0:
                    return _fail_in_child(step, get_errno())
        except BaseException as exc:  # whatever it is, the command must not run
            _fail_in_child(step, getattr(exc, "errno", None) or errno.EINVAL)
        return None

    return setup


def mount_flags(path: str) -> int:
    """The remount flags that make a bind of ``path`` read-only while keeping its mount's locked flags
    (nosuid, nodev, noexec, atime: a user namespace may not clear them)."""
    flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY
    try:
        f = os.statvfs(path).f_flag
    except OSError:
        return flags
    for st_flag, ms_flag in (
        (os.ST_NOSUID, _MS_NOSUID),
        (os.ST_NODEV, _MS_NODEV),
        (os.ST_NOEXEC, _MS_NOEXEC),
        (getattr(os, "ST_NOATIME", 1024), _MS_NOATIME),
        (getattr(os, "ST_NODIRATIME", 2048), _MS_NODIRATIME),
        (getattr(os, "ST_RELATIME", 4096), _MS_RELATIME),
    ):
        if f & st_flag:
            flags |= ms_flag
    return flags
