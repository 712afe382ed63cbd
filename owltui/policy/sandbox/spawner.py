"""The sandbox's fork server: a small process that starts sandboxed commands as OwlTUI's own children.

A command started with ``subprocess.Popen(preexec_fn=...)`` makes Python ``fork()`` OwlTUI instead
of ``vfork()``-ing it, and a fork costs more the bigger the parent is (a TUI session: ~10 ms). So
OwlTUI starts this server once (``owltui.tools.exec.spawn``): a fresh ``python -I -S`` that imports
only this module, the child set-up (``child``) and ctypes, connected to OwlTUI by a socket pair
whose other end only OwlTUI holds (no path on disk). Per command it receives, as one JSON message,
the plan (``child.plan_to_wire``: rebuilt here, made into a set-up function once per distinct
plan), argv, environment and working directory, with four file descriptors (SCM_RIGHTS): the
command's stdin, stdout and stderr, and the write end of OwlTUI's error pipe. It then makes the
child with a raw ``clone(CLONE_PARENT | SIGCHLD)``: the command is OwlTUI's child, not the
server's, so OwlTUI waits for it, gets its exit status and keeps it in its reaper's bookkeeping
exactly as with ``Popen``. The child, a copy of this small single-threaded process (a raw clone
runs no fork handlers; with one thread there is no lock they would have to reset), does what
``Popen`` does around a ``preexec_fn``: the three descriptors onto 0, 1 and 2, ``chdir``,
``setsid``, the plan's set-up (unchanged: a failure prints its one line and exits 126 before
anything runs), every other descriptor closed, ``execve``. An error before or at ``execve`` is
written (its errno) to the error pipe, which is close-on-exec in the child: OwlTUI reads it until
the ``exec`` closes it, as ``Popen`` does. The server replies as soon as the child exists (it has
closed its copies of the descriptors by then) with the pid, or with ``error`` when no child was
made (OwlTUI then starts commands the old way).

The server exits when OwlTUI's end closes (end of file: OwlTUI is gone), and also on
``PR_SET_PDEATHSIG`` when OwlTUI asks for it (only from its main thread: the signal follows the
thread that started the server, and a worker thread may end long before OwlTUI does).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from owltui.policy.sandbox.child import child_setup, plan_from_wire
from owltui.policy.sandbox.landlock import libc

MAX_MESSAGE = 1 << 20  # a request: the plan, argv and the environment (one SOCK_SEQPACKET record)
PLANS_KEPT = 32
_CLONE_PARENT = 0x00008000
_SIGCHLD = 17
_PR_SET_PDEATHSIG = 1
# clone's arguments are (flags, stack, parent_tid, child_tid, tls) on x86_64 and (flags, stack,
# parent_tid, tls, child_tid) on aarch64; only the flags are set here (stack 0: the child runs on its
# copy of this stack, as after fork), so one call fits both
SYS_CLONE = {"x86_64": 56, "aarch64": 220}


def clone_number() -> int | None:
    """The ``clone`` system call's number here; None on an architecture this server does not know."""
    return SYS_CLONE.get(os.uname().machine) if sys.platform.startswith("linux") else None


def _child(
    fds: list[int], cwd: bytes, setup: Callable[[], None], argv: list[bytes], env: list[bytes], err: int
) -> None:
    """In the new process: never returns."""
    code = 0
    try:
        os.set_inheritable(err, False)  # closed by a successful exec: the end of file OwlTUI waits for
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.chdir(cwd)
        os.setsid()
        setup()  # on failure: the one line on stderr, exit 126
        os.closerange(3, err)
        os.closerange(err + 1, os.sysconf("SC_OPEN_MAX"))
        os.execve(argv[0], argv, dict(e.split(b"=", 1) for e in env if b"=" in e))
    except OSError as exc:
        code = exc.errno or 22
    except BaseException:
        code = 22  # EINVAL: whatever it is, the command did not run
    try:
        os.write(err, str(code).encode())
    finally:
        os._exit(127)


class Server:
    """One request at a time, from OwlTUI's end of the socket pair."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lib = libc()
        self.clone = clone_number()
        self.setups: dict[str, Callable[[], None]] = {}

    def _setup(self, plan: str) -> Callable[[], None]:
        setup = self.setups.get(plan)
        if setup is None:
            if len(self.setups) >= PLANS_KEPT:
                del self.setups[next(iter(self.setups))]
            setup = self.setups[plan] = child_setup(plan_from_wire(plan))
        return setup

    def start(self, request: dict[str, Any], fds: list[int]) -> dict[str, int | str]:
        if self.clone is None:
            return {"error": f"no clone for the {os.uname().machine} architecture"}
        if len(fds) != 4:
            return {"error": f"expected 4 descriptors, got {len(fds)}"}
        setup = self._setup(str(request["plan"]))
        argv = [str(a).encode("latin-1") for a in request["argv"]]
        env = [str(e).encode("latin-1") for e in request["env"]]
        cwd = str(request["cwd"]).encode("latin-1")
        ct = self.lib.ctypes
        zero = ct.c_long(0)
        pid = int(self.lib.syscall(self.clone, ct.c_long(_CLONE_PARENT | _SIGCHLD), zero, zero, zero, zero))
        if pid == 0:
            _child(fds[:3], cwd, setup, argv, env, fds[3])
        if pid < 0:
            return {"error": f"clone: {os.strerror(ct.get_errno())}"}
        return {"pid": pid}

    def serve(self) -> None:
        while True:
            try:
                data, fds, flags, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 4)
            except OSError:
                return
            if not data:
                return  # OwlTUI closed its end: it is gone
            try:
                if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                    reply: dict[str, int | str] = {"error": "request truncated"}
                else:
                    reply = self.start(json.loads(data), fds)
            except Exception as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            finally:
                for fd in fds:
                    os.close(fd)
            try:
                self.sock.send(json.dumps(reply).encode())
            except OSError:
                return


def serve(fd: int, parent: int, deathsig: bool) -> None:
    """The server's main: ``fd`` is its end of the socket pair, ``parent`` OwlTUI's pid."""
    # what Popen restores in a child before exec (Python ignores both at start, and an ignored signal
    # stays ignored across exec); here it also ends this server if OwlTUI's end is gone mid-reply
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    lib = libc()
    if deathsig and lib.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:
        return  # OwlTUI died before this server was ready
    Server(socket.socket(fileno=fd)).serve()
