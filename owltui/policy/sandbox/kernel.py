"""The kernel sandbox every process a tool starts runs in (Linux: Landlock, plus a user + mount namespace).

``SandboxPolicy`` is built once per session from the config (``sandbox``, ``sandbox_writable``,
``sandbox_network``, ``sandbox_unix_sockets``, ``env_keep``) and handed to the tools as
``ctx.services.sandbox``. ``Proc`` asks it for the ``plan()`` of a command (``wire()``: as the fork
server reads it, ``spawner``); MCP servers, and commands when the server is gone, for ``preexec()``,
the same set-up as ``Popen``'s ``preexec_fn``. In the new child, before ``exec``, the set-up

1. (workspace-write, where namespaces are allowed) enters a new mount namespace — a new user
   namespace too, unless OwlTUI runs as root with CAP_SYS_ADMIN — makes every mount private, binds
   the workspace, every repository root in it and their git directories onto themselves (a mount
   point cannot be renamed away, so ``mv .git x && mkdir .git`` does not get round what follows)
   and binds the protected paths (``.owltui/``, ``.mcp.json``, every repository's git configuration
   surface — the ``.git`` pointer file, ``config``, ``config.worktree``, ``hooks/``, ``commondir``,
   ``info/``, ``modules/``, ``worktrees/`` of its git and common directories, see ``git_guard`` —
   and OwlTUI's own config and data directories when they lie in a writable place) read-only onto
   themselves; as root it also drops
   every capability but a small list from the bounding set, so the command can neither mount nor
   ``setns`` back out;
2. sets ``PR_SET_NO_NEW_PRIVS`` and applies a Landlock ruleset: every write-type right is handled
   (reading and executing stay free everywhere); the workspace, the temp dir, ``/dev/shm`` and the
   ``sandbox_writable`` paths get them back, and ``/dev/null``-style devices may be written.
   ``sandbox_network = false`` also handles TCP connect (ABI ≥ 4) and scopes abstract UNIX sockets
   (ABI ≥ 6). A Landlock domain also forbids ``mount``/``umount``/``pivot_root``, so the read-only
   binds cannot be undone from inside;
3. installs the socket filter (``seccomp``, x86_64 and aarch64): no Unix sockets (the user's tmux,
   ssh-agent, session bus), no io_uring and, with the network off, no UDP or raw sockets. The filter
   cannot see socket paths, so a non-empty ``sandbox_unix_sockets`` allows every Unix socket again.

Around each command (and each file tool's write) the policy's ``GitAudit`` looks at the workspace:
git repositories and git configuration names that appear there are renamed out of git's way, so
the user's own ``git status`` afterwards reads nothing a command planted (``audit_git``).

The child runs only system calls through ctypes objects prepared in the parent: no imports, no
locks, no allocation beyond small ints. A failure there prints one line to the command's output and
exits 126 before anything runs (fail closed).

Without Landlock (old kernel, not Linux) ``enforced`` is False: the permission policy then asks
for every command (``requires_approval``). Without namespaces the protected paths are guarded by
approval only (``protects_config`` False). ``startup_notes()`` says so in one line each.

This module owns ``SandboxPolicy`` (what is writable and protected, the plan each command gets) and
re-exports the pieces: ``landlock`` (the Landlock constants, libc handles, the ruleset),
``sandbox_child`` (the child's setup before exec, the capability probe), ``sandbox_env`` (the
scrubbed environment) and ``sandbox_blocked`` (the "blocked by the sandbox" sentence).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from owltui.policy.sandbox.blocked import below_any, existing, explain_blocked, inside
from owltui.policy.sandbox.child import (
    ROOT_KEEPS,
    Capabilities,
    Plan,
    capabilities,
    child_setup,
    last_cap,
    mount_flags,
    plan_to_wire,
)
from owltui.policy.sandbox.env import child_env
from owltui.policy.sandbox.git_guard import GitAudit
from owltui.policy.sandbox.landlock import Landlock, ruleset
from owltui.policy.sandbox.seccomp import SocketFilter, socket_filter, socket_filter_support

__all__ = ["PROTECTED_IN_WORKSPACE", "SANDBOX_MODES", "WRITABLE_SYSTEM", "SandboxMode", "SandboxPolicy"]

SandboxMode = Literal["workspace-write", "read-only", "off"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)

WRITABLE_SYSTEM = ("/dev/shm",)  # POSIX shared memory (Python's multiprocessing, browsers)
PROTECTED_IN_WORKSPACE = (
    ".git/config",
    ".git/hooks",
    ".owltui",
    ".mcp.json",
    ".claude/settings.json",  # Claude Code's hooks, which OwlTUI runs too (once approved)
    ".claude/settings.local.json",
)


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


class SandboxPolicy:
    """How the processes tools start are confined; one per session (``ctx.services.sandbox``).

    ``landlock`` / ``namespaces`` override the probe (tests simulate a kernel without Landlock with
    ``landlock=False``); ``userns`` forces the user-namespace path even as root.
    """

    def __init__(
        self,
        mode: SandboxMode | str = "workspace-write",
        workspace: Path | str = ".",
        *,
        writable: Iterable[str | Path] = (),
        network: bool = True,
        unix_sockets: Iterable[str | Path] = (),
        env_keep: Iterable[str] = (),
        protected: Iterable[str | Path] = (),
        landlock: bool | None = None,
        namespaces: bool | None = None,
        userns: bool | None = None,
    ) -> None:
        if mode not in SANDBOX_MODES:
            raise ValueError(f"unknown sandbox mode {mode!r}; expected one of {', '.join(SANDBOX_MODES)}")
        self.mode: str = mode
        self.workspace = _real(workspace)
        self.writable = [_real(p) for p in writable]
        self.network = network
        self.unix_sockets = [str(p) for p in unix_sockets]
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
        self._ll: Landlock | None = None
        self._socket_filter: SocketFilter | None = None
        self._plans: dict[tuple[Any, ...], Plan] = {}  # kept alive: the two below are keyed by id()
        self._setups: dict[int, Callable[[], None]] = {}
        self._wires: dict[int, str] = {}
        self._git = GitAudit(self.workspace)
        self._live: list[Callable[[], bool]] = []  # processes commands started: still running?
        self._suspect = False  # one of them ran since the last look
        self._planted: list[str] = []  # renamed before a command, told after it
        self._git_lock = threading.Lock()  # the file tools look from a worker thread

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
    def blocks_unix_sockets(self) -> bool:
        """Commands cannot open Unix sockets (no ``sandbox_unix_sockets``, and the filter applies here)."""
        return self.enforced and not self.unix_sockets and socket_filter_support() is None

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
        for surf in self._git.surfaces():  # every repository's git configuration, wherever git reads it
            paths += [*([surf.pointer] if surf.pointer else []), *surf.present]
        roots = self.writable_roots()
        paths += [p for p in self._extra_protected if any(inside(p, r) for r in roots)]
        return paths

    def startup_notes(self) -> list[str]:
        """One line per thing the user must know at start (nothing when all is as configured)."""
        notes: list[str] = []
        if self.mode == "off":
            return ["the sandbox is off: commands run with all of your permissions"]
        if not self.enforced:
            notes.append(
                "this kernel has no Landlock, so commands cannot be sandboxed: every command asks "
                "for approval (print mode refuses them unless --sandbox off is given)"
            )
            return notes
        if self.mode == "workspace-write" and not self.namespaces:
            notes.append(
                "user namespaces are not allowed here: .git/config, .git/hooks/ and .owltui/ are "
                "protected by approval only, not by the sandbox"
            )
        if not self.network and self.abi < 4:
            notes.append(
                f"sandbox_network = false needs Landlock ABI 4 (this kernel has {self.abi}): "
                "commands may still use the network"
            )
        unsupported = socket_filter_support()
        if unsupported is not None:
            notes.append(
                f"{unsupported}: commands may still connect to Unix sockets (tmux, ssh-agent)"
                + ("" if self.network else " and send UDP")
            )
        elif self.unix_sockets:
            notes.append(
                "sandbox_unix_sockets is set: commands may connect to every Unix socket, not only "
                f"{', '.join(self.unix_sockets)} (the kernel filter cannot tell socket paths apart)"
            )
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
    def _landlock(self) -> Landlock:
        if self._ll is None:
            self._ll = ruleset(self.abi, self.writable_roots(), self.network)
        return self._ll

    def _filter(self) -> SocketFilter | None:
        if self._socket_filter is None:
            self._socket_filter = socket_filter(unix_sockets=bool(self.unix_sockets), network=self.network)
        return self._socket_filter

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
        roots = [str(r) for r in self.writable_roots()]
        # only real paths inside a writable root; a symlink is bound where it points (the bind
        # follows it), so check its target
        ro = [real for p in self.protected_paths() if (real := existing(p)) and below_any(real, roots)]
        if not ro:
            return mounts
        # the workspace, every repository root in it and their git directories become mount points
        # first: a mount point cannot be renamed or removed, so the protected paths stay where OwlTUI
        # and git look for them
        anchors = [self.workspace]
        for surf in self._git.surfaces():
            anchors += [surf.root, *(d for d in surf.gitdirs if d.is_dir() and not d.is_symlink())]
        for anchor in dict.fromkeys(str(_real(a)) for a in anchors):
            if below_any(anchor, roots):
                mounts.append((os.fsencode(anchor), None))
        for real in dict.fromkeys(ro):
            mounts.append((os.fsencode(real), mount_flags(real)))
        return mounts

    def plan(self, cwd: Path | str) -> Plan | None:
        """What the child of a command started in ``cwd`` sets up (after the git look before the
        command); None when there is no sandbox to apply (off, or no Landlock: the permission policy
        asks instead). Plans are cached by their binds and working directory."""
        if not self.enforced:
            return None
        self.refresh_git()
        use_ns = self.mode == "workspace-write" and self.namespaces
        mounts = self._mounts() if use_ns else []
        key = (tuple(mounts), str(cwd))
        plan = self._plans.get(key)
        if plan is None:
            drop: Sequence[int] = ()
            if mounts and not self.userns:
                drop = [c for c in range(last_cap() + 1) if c not in ROOT_KEEPS]
            plan = self._plans[key] = Plan(
                userns=self.userns,
                unshare=bool(mounts),
                mounts=mounts,
                drop_caps=drop,
                landlock=self._landlock(),
                cwd=os.fsencode(str(cwd)),
                ids=(os.getuid(), os.getgid()),
                socket_filter=self._filter(),
            )
        return plan

    def setup_for(self, plan: Plan) -> Callable[[], None]:
        """The ``preexec_fn`` that applies ``plan`` (one of ``plan()``'s), made once per plan."""
        setup = self._setups.get(id(plan))
        if setup is None:
            setup = self._setups[id(plan)] = child_setup(plan)
        return setup

    def wire(self, plan: Plan) -> str:
        """``plan`` (one of ``plan()``'s) as the spawner reads it, made once per plan."""
        text = self._wires.get(id(plan))
        if text is None:
            text = self._wires[id(plan)] = plan_to_wire(plan)
        return text

    def preexec(self, cwd: Path | str) -> Callable[[], None] | None:
        """The function ``subprocess.Popen(preexec_fn=...)`` runs in the child (the way MCP servers
        and the fallback start); None when there is no sandbox to apply."""
        plan = self.plan(cwd)
        return None if plan is None else self.setup_for(plan)

    # ---- git metadata planted in the workspace (see git_guard) ---------------------------------
    def watch(self, alive: Callable[[], bool]) -> None:
        """A command started: until ``alive()`` is False (its processes, escaped ones too, ended),
        what appears in the workspace is never taken for the user's own work."""
        self._live.append(alive)

    def _anything_alive(self) -> bool:
        self._live = [alive for alive in self._live if alive()]
        return bool(self._live)

    def refresh_git(self) -> None:
        """Before a command or a file tool's write: what changed since the last look is the user's,
        unless a process a command started ran meanwhile (then it is judged like a command's)."""
        if self.mode != "workspace-write":
            return
        with self._git_lock:
            alive = self._anything_alive()
            self._planted += self._git.look(judge=alive or self._suspect)
            self._suspect = alive

    def audit_git(self) -> list[str]:
        """After a command or a file tool's write: rename the git repositories and git configuration
        that appeared in the workspace (git run by the user would read them); one sentence each."""
        if self.mode != "workspace-write":
            return []
        with self._git_lock:
            return self._audit_locked()

    def git_look_cheap(self) -> bool:
        """The git look before a command (``plan``) would read no directory again (``GitAudit.quiet``):
        starting a command is then fit for the event loop."""
        return self.mode != "workspace-write" or self._git.quiet()

    def audit_git_now(self) -> list[str] | None:
        """``audit_git`` if it is cheap now (``GitAudit.quiet``, the lock free: fit for the event
        loop); else None (call ``audit_git`` from a worker thread)."""
        if self.mode != "workspace-write":
            return []
        if not self._git_lock.acquire(blocking=False):
            return None
        try:
            return self._audit_locked() if self._git.quiet() else None
        finally:
            self._git_lock.release()

    def _audit_locked(self) -> list[str]:
        notes, self._planted = [*self._planted, *self._git.look(judge=True)], []
        self._suspect = self._anything_alive()
        return notes

    # ---- explaining failures ------------------------------------------------------------------
    def explain(self, output: str, cwd: Path | str | None = None) -> str | None:
        """When ``output`` (of a command that failed) shows a write the sandbox refused, the sentence
        that says so; else None."""
        if not self.enforced:
            return None
        return explain_blocked(self, output, Path(cwd) if cwd is not None else self.workspace)
