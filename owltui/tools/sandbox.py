"""The kernel sandbox every process a tool starts runs in (Linux: Landlock, plus a user + mount namespace).

``SandboxPolicy`` is built once per session from the config (``sandbox``, ``sandbox_writable``,
``sandbox_network``, ``env_keep``) and handed to the tools as ``ctx.services["sandbox"]``. ``Proc``
asks it for ``preexec()``: a function that runs in the forked child before ``exec`` and

1. (workspace-write, where namespaces are allowed) enters a new mount namespace — a new user
   namespace too, unless OwlTUI runs as root with CAP_SYS_ADMIN — makes every mount private, binds
   the workspace and ``.git`` onto themselves (a mount point cannot be renamed away, so
   ``mv .git x && mkdir .git`` does not get round what follows) and binds the protected paths
   (``.git/config``, ``.git/hooks/``, ``.owltui/``, OwlTUI's own config and data directories when
   they lie in a writable place) read-only onto themselves; as root it also drops every capability
   but a small list from the bounding set, so the command can neither mount nor ``setns`` back out;
2. sets ``PR_SET_NO_NEW_PRIVS`` and applies a Landlock ruleset: every write-type right is handled
   (reading and executing stay free everywhere); the workspace, the temp dir, ``/dev/shm`` and the
   ``sandbox_writable`` paths get them back, and ``/dev/null``-style devices may be written.
   ``sandbox_network = false`` also handles TCP connect (ABI ≥ 4) and scopes abstract UNIX sockets
   (ABI ≥ 6). A Landlock domain also forbids ``mount``/``umount``/``pivot_root``, so the read-only
   binds cannot be undone from inside.

The child runs only system calls through ctypes objects prepared in the parent: no imports, no
locks, no allocation beyond small ints. A failure there prints one line to the command's output and
exits 126 before anything runs (fail closed).

Without Landlock (old kernel, not Linux) ``enforced`` is False: the permission policy then asks
for every command (``requires_approval``). Without namespaces the protected paths are guarded by
approval only (``protects_config`` False). ``startup_notes()`` says so in one line each.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

SandboxMode = Literal["workspace-write", "read-only", "off"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)

# ---- Landlock UAPI (include/uapi/linux/landlock.h); the syscall numbers are the same on every arch.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
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

_WRITE_ABI1 = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG
               | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE
_NEVER_GRANTED = FS_MAKE_CHAR | FS_MAKE_BLOCK  # device nodes: no coding task needs them

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
_ROOT_KEEPS = frozenset({0, 1, 2, 3, 4, 5, 6, 7, 10, 13, 29})

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx")
DEVICE_DIRS = ("/dev/pts",)
WRITABLE_SYSTEM = ("/dev/shm",)  # POSIX shared memory (Python's multiprocessing, browsers)
PROTECTED_IN_WORKSPACE = (".git/config", ".git/hooks", ".owltui")

# ---- secrets in the child's environment
PROVIDER_KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]*@")


def child_env(base: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """``base`` without the provider keys and any variable whose name contains KEY, SECRET, TOKEN
    or PASSWORD (any case), nor a base URL that carries credentials — unless its name matches one
    of ``keep`` (names or shell globs, from config ``env_keep``)."""
    keep = tuple(keep)

    def kept(name: str) -> bool:
        return any(name == k or fnmatch.fnmatchcase(name, k) for k in keep)

    out: dict[str, str] = {}
    for name, value in base.items():
        secret = name in PROVIDER_KEY_VARS or SECRET_NAME.search(name) is not None \
            or (name.endswith("_URL") and _URL_CREDENTIALS.search(value) is not None)
        if not secret or kept(name):
            out[name] = value
    return out


# ---- probing the kernel -------------------------------------------------------------------------
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
        self.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                               ctypes.c_void_p]

        class RulesetAttr(ctypes.Structure):
            _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                        ("scoped", ctypes.c_uint64)]

        class PathBeneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        self.RulesetAttr = RulesetAttr
        self.PathBeneath = PathBeneath


_libc: _Libc | None = None
_libc_lock = threading.Lock()


def _lib() -> _Libc:
    global _libc
    with _libc_lock:
        if _libc is None:
            _libc = _Libc()
        return _libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    lib = _lib()
    version = lib.syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    return int(version) if version > 0 else 0


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


def _last_cap() -> int:
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

    plan = _Plan(userns=userns, unshare=True, mounts=[], drop_caps=(), landlock=None, cwd=b"/",
                 ids=(os.getuid(), os.getgid()))
    true = "/bin/true" if os.path.exists("/bin/true") else "true"
    try:
        proc = subprocess.run([true], stdin=subprocess.DEVNULL, capture_output=True,
                              preexec_fn=_child_setup(plan), timeout=10, check=False)
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


# ---- what one child does before exec --------------------------------------------------------------
@dataclass
class _Landlock:
    abi: int
    handled_fs: int
    handled_net: int
    scoped: int
    rules: list[tuple[bytes, int]]  # path, allowed access (already fitted to file or directory)


@dataclass
class _Plan:
    userns: bool
    unshare: bool
    mounts: list[tuple[bytes, int | None]]  # path, None: bind read-write; flags: bind, then remount
    drop_caps: Sequence[int]
    landlock: _Landlock | None
    cwd: bytes
    ids: tuple[int, int]


def _fail_in_child(step: str, err: int) -> None:
    msg = (f"owltui: the sandbox could not be set up ({step}: {os.strerror(err)}); the command did not run "
           "(the user can run OwlTUI with --sandbox off).\n")
    try:
        os.write(2, msg.encode())
    finally:
        os._exit(126)


def _child_setup(plan: _Plan) -> Callable[[], None]:
    """The ``preexec_fn``: everything is prepared here, in the parent; the child makes system calls."""
    lib = _lib()
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
                fd = syscall(_SYS_CREATE_RULESET, byref(attr), attr_size, 0)
                if fd < 0:
                    return _fail_in_child(step, get_errno())
                step = "landlock_add_rule"
                for path, beneath in rules:
                    try:
                        pfd = os.open(path, o_path | os.O_CLOEXEC)
                    except OSError:
                        continue  # vanished since the plan was made: nothing to grant
                    beneath.parent_fd = pfd
                    res = syscall(_SYS_ADD_RULE, fd, _RULE_PATH_BENEATH, byref(beneath), 0)
                    os.close(pfd)
                    if res != 0:
                        return _fail_in_child(step, get_errno())
                step = "landlock_restrict_self"
                if syscall(_SYS_RESTRICT_SELF, fd, 0) != 0:
                    return _fail_in_child(step, get_errno())
                os.close(fd)
        except BaseException as exc:  # whatever it is, the command must not run
            _fail_in_child(step, getattr(exc, "errno", None) or errno.EINVAL)
        return None

    return setup


# ---- the policy -----------------------------------------------------------------------------------
def _mount_flags(path: str) -> int:
    """The remount flags that make a bind of ``path`` read-only while keeping its mount's locked flags
    (nosuid, nodev, noexec, atime: a user namespace may not clear them)."""
    flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY
    try:
        f = os.statvfs(path).f_flag
    except OSError:
        return flags
    for st_flag, ms_flag in ((os.ST_NOSUID, _MS_NOSUID), (os.ST_NODEV, _MS_NODEV), (os.ST_NOEXEC, _MS_NOEXEC),
                             (getattr(os, "ST_NOATIME", 1024), _MS_NOATIME),
                             (getattr(os, "ST_NODIRATIME", 2048), _MS_NODIRATIME),
                             (getattr(os, "ST_RELATIME", 4096), _MS_RELATIME)):
        if f & st_flag:
            flags |= ms_flag
    return flags


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


class SandboxPolicy:
    """How the processes tools start are confined; one per session (``ctx.services["sandbox"]``).

    ``landlock`` / ``namespaces`` override the probe (tests simulate a kernel without Landlock with
    ``landlock=False``); ``userns`` forces the user-namespace path even as root.
    """

    def __init__(self, mode: SandboxMode | str = "workspace-write", workspace: Path | str = ".", *,
                 writable: Iterable[str | Path] = (), network: bool = True, env_keep: Iterable[str] = (),
                 protected: Iterable[str | Path] = (), landlock: bool | None = None,
                 namespaces: bool | None = None, userns: bool | None = None) -> None:
        if mode not in SANDBOX_MODES:
            raise ValueError(f"unknown sandbox mode {mode!r}; expected one of {', '.join(SANDBOX_MODES)}")
        self.mode: str = mode
        self.workspace = _real(workspace)
        self.writable = [_real(p) for p in writable]
        self.network = network
        self.env_keep = tuple(env_keep)
        self._extra_protected = [_real(p) for p in protected]
        if mode == "off":
            caps = Capabilities(0, False, False, "off")
        elif landlock is False and namespaces is not None:
            caps = Capabilities(0, namespaces, bool(userns), "simulated")
        else:
            caps = capabilities()
        abi = caps.landlock_abi if landlock is not False else 0
        self.abi = abi
        self.namespaces = caps.namespaces if namespaces is None else namespaces
        self.userns = caps.userns if userns is None else userns
        self.temp_dir = _real(tempfile.gettempdir())
        self._ll: _Landlock | None = None
        self._setups: dict[tuple[Any, ...], Callable[[], None]] = {}

    # ---- what the permission policy and the UI read -------------------------------------------
    @property
    def active(self) -> bool:
        """The user wants commands confined (``sandbox`` is not ``off``)."""
        return self.mode != "off"

    @property
    def enforced(self) -> bool:
        """Commands really run under Landlock."""
        return self.active and self.abi > 0

    @property
    def requires_approval(self) -> bool:
        """The user wants a sandbox the kernel cannot give: every command must ask (print mode:
        refused unless ``--sandbox off``)."""
        return self.active and not self.enforced

    @property
    def protects_config(self) -> bool:
        """``.git/config``, ``.git/hooks/`` and ``.owltui/`` are read-only for commands (else they are
        guarded by approval only)."""
        return self.enforced and (self.mode == "read-only" or self.namespaces)

    @property
    def network_restricted(self) -> bool:
        return self.enforced and not self.network and self.abi >= 4

    def writable_roots(self) -> list[Path]:
        """Where commands may write under this policy (empty unless workspace-write)."""
        if self.mode != "workspace-write":
            return []
        return [self.workspace, self.temp_dir, *(Path(p) for p in WRITABLE_SYSTEM), *self.writable]

    def protected_paths(self) -> list[Path]:
        """Paths inside the writable roots that commands may read but not change."""
        paths = [self.workspace / p for p in PROTECTED_IN_WORKSPACE]
        roots = self.writable_roots()
        paths += [p for p in self._extra_protected if any(_inside(p, r) for r in roots)]
        return paths

    def startup_notes(self) -> list[str]:
        """One line per thing the user must know at start (nothing when all is as configured)."""
        notes: list[str] = []
        if self.mode == "off":
            return ["the sandbox is off: commands run with all of your permissions"]
        if not self.enforced:
            notes.append("this kernel has no Landlock, so commands cannot be sandboxed: every command asks "
                         "for approval (print mode refuses them unless --sandbox off is given)")
            return notes
        if self.mode == "workspace-write" and not self.namespaces:
            notes.append("user namespaces are not allowed here: .git/config, .git/hooks/ and .owltui/ are "
                         "protected by approval only, not by the sandbox")
        if not self.network and self.abi < 4:
            notes.append(f"sandbox_network = false needs Landlock ABI 4 (this kernel has {self.abi}): "
                         "commands may still use the network")
        missing = [str(p) for p in self.writable if not p.exists()]
        if missing:
            notes.append(f"sandbox_writable paths that do not exist are ignored: {', '.join(missing)}")
        return notes

    def describe(self) -> str:
        if not self.enforced:
            return "off" if not self.active else "requested, but not available on this kernel"
        return f"{self.mode} (Landlock ABI {self.abi})"

    # ---- environment ---------------------------------------------------------------------------
    def child_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        return child_env(os.environ if base is None else base, self.env_keep)

    # ---- the child ------------------------------------------------------------------------------
    def _landlock(self) -> _Landlock:
        if self._ll is None:
            self._ll = self._make_landlock()
        return self._ll

    def _make_landlock(self) -> _Landlock:
        abi = self.abi
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
        for root in self.writable_roots():
            add(root, grant)
        handled_net = NET_CONNECT_TCP if (not self.network and abi >= 4) else 0
        scoped = SCOPE_ABSTRACT_UNIX_SOCKET if (not self.network and abi >= 6) else 0
        return _Landlock(abi, handled, handled_net, scoped, rules)

    def _ensure_protected_exist(self) -> None:
        """Protected directories that do not exist yet are created empty (a mount needs a mount point,
        and an empty directory changes nothing: git does not even list it): otherwise a command could
        create ``.owltui/permissions.toml`` and the next session would read it."""
        ws = self.workspace
        wanted = [ws / ".owltui"]
        if (ws / ".git").is_dir() and not (ws / ".git").is_symlink():
            wanted.append(ws / ".git" / "hooks")
        for path in wanted:
            if not os.path.lexists(path):
                with contextlib.suppress(OSError):
                    path.mkdir()

    def _mounts(self) -> list[tuple[bytes, int | None]]:
        self._ensure_protected_exist()
        mounts: list[tuple[bytes, int | None]] = []
        ws = self.workspace
        ro = []
        for path in self.protected_paths():
            # only real paths inside a writable root; a symlink is bound where it points (the bind
            # follows it), so check its target
            real = _real(path)
            if not os.path.exists(real) or not any(_inside(real, r) for r in self.writable_roots()):
                continue
            ro.append(real)
        if not ro:
            return mounts
        # the workspace and .git become mount points first: a mount point cannot be renamed, so the
        # protected paths stay where OwlTUI and git look for them
        mounts.append((os.fsencode(str(ws)), None))
        git = ws / ".git"
        if git.is_dir() and not git.is_symlink():
            mounts.append((os.fsencode(str(git)), None))
        for real in ro:
            mounts.append((os.fsencode(str(real)), _mount_flags(str(real))))
        return mounts

    def preexec(self, cwd: Path | str) -> Callable[[], None] | None:
        """The function ``subprocess.Popen(preexec_fn=...)`` runs in the child; None when there is no
        sandbox to apply (off, or no Landlock: the permission policy asks instead)."""
        if not self.enforced:
            return None
        use_ns = self.mode == "workspace-write" and self.namespaces
        mounts = self._mounts() if use_ns else []
        key = (tuple(mounts), str(cwd))
        setup = self._setups.get(key)
        if setup is None:
            drop: Sequence[int] = ()
            if mounts and not self.userns:
                drop = [c for c in range(_last_cap() + 1) if c not in _ROOT_KEEPS]
            plan = _Plan(userns=self.userns, unshare=bool(mounts), mounts=mounts, drop_caps=drop,
                         landlock=self._landlock(), cwd=os.fsencode(str(cwd)),
                         ids=(os.getuid(), os.getgid()))
            setup = self._setups[key] = _child_setup(plan)
        return setup

    # ---- explaining failures ------------------------------------------------------------------
    def explain(self, output: str, cwd: Path | str | None = None) -> str | None:
        """When ``output`` (of a command that failed) shows a write the sandbox refused, the sentence
        that says so; else None."""
        if not self.enforced:
            return None
        return explain_blocked(self, output, Path(cwd) if cwd is not None else self.workspace)


# ---- recognising what the sandbox blocked -----------------------------------------------------------
_DENIED = re.compile(r"read-only file system|permission denied|operation not permitted|"
                     r"device or resource busy|EACCES|EROFS|EPERM|EBUSY|errno 13|errno 30|errno 1\b",
                     re.IGNORECASE)
_NET = re.compile(r"connect|connection|network|socket", re.IGNORECASE)
_QUOTED = re.compile(r"['\"‘’`“]([^'\"‘’`“”\n]{1,4096})['\"‘’`”]")
_BARE = re.compile(r"(?:^|[\s:=(])((?:~|\.{1,2})?/[^\s:'\"`,;()]*|\.{1,2}(?=[\s:'\"]|$)|"
                   r"[A-Za-z0-9_.@+-]+/[^\s:'\"`,;()]*|\.[A-Za-z0-9_][^\s:'\"`,;()/]*)")


def _candidates(line: str) -> list[str]:
    found = [m.group(1) for m in _QUOTED.finditer(line)]
    found += [m.group(1) for m in _BARE.finditer(line)]
    return [f.strip() for f in found if f.strip()]


def _writable_without_sandbox(path: Path) -> bool:
    """Could this process write ``path`` (or create it) if there were no sandbox? A refusal the
    ordinary permissions would give too is not the sandbox's doing."""
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return os.access(p, os.W_OK)


def _verdict(policy: SandboxPolicy, path: Path) -> str | None:
    """Why the policy refuses writes to ``path`` (None: it allows them, or the sandbox is not why)."""
    if policy.protects_config and any(_inside(path, p) for p in policy.protected_paths()):
        return "protected"
    if path in (Path(d) for d in DEVICES):
        return None
    if policy.mode != "read-only" and any(_inside(path, root) for root in policy.writable_roots()):
        return None
    if not _writable_without_sandbox(path):
        return None
    return "read-only" if policy.mode == "read-only" else "outside"


def _resolve(text: str, cwd: Path) -> Path:
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = cwd / p
    # realpath of the parent: the file itself may not exist (it could not be created)
    return Path(os.path.realpath(p.parent)) / p.name if p.name else Path(os.path.realpath(p))


def explain_blocked(policy: SandboxPolicy, output: str, cwd: Path) -> str | None:
    """The "blocked by the sandbox" sentence for ``output``, or None when no refused write shows."""
    outside: list[Path] = []
    protected: list[Path] = []
    readonly: list[Path] = []
    network = False
    for line in output.splitlines()[-400:] if output.count("\n") > 400 else output.splitlines():
        if not _DENIED.search(line):
            continue
        if policy.network_restricted and _NET.search(line) and "permission denied" in line.lower():
            network = True
        for cand in _candidates(line):
            try:
                path = _resolve(cand, cwd)
            except (OSError, ValueError):
                continue
            why = _verdict(policy, path)
            bucket = {"outside": outside, "protected": protected, "read-only": readonly}.get(why or "")
            if bucket is not None and path not in bucket:
                bucket.append(path)
    parts: list[str] = []
    if protected:
        names = ", ".join(_show(p, policy.workspace) for p in protected[:3])
        parts.append(f"blocked by the sandbox: {names} is protected configuration (read-only for commands, "
                     "also as root); ask the user to make this change")
    if readonly:
        names = ", ".join(_show(p, policy.workspace) for p in readonly[:3])
        parts.append(f"blocked by the sandbox: it is read-only (sandbox = \"read-only\"), so {names} cannot "
                     "be written; the user can run with --sandbox workspace-write or --sandbox off")
    if outside:
        dirs = sorted({str(_suggest(p)) for p in outside[:3]})
        listed = ", ".join(f'"{d}"' for d in dirs)
        parts.append(f"blocked by the sandbox: writes outside the workspace are not allowed "
                     f"({', '.join(str(p) for p in outside[:3])}); the user can allow this path with "
                     f"sandbox_writable = [{listed}] in the config file, or run OwlTUI with --sandbox off")
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
