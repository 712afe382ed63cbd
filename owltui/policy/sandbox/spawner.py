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
``Popen`` does around a ``preexec_fn``: ``setsid``, the three descriptors onto 0, 1 and 2,
``chdir``, the plan's set-up (unchanged: a failure prints its one line and exits 126 before
anything runs), every other descriptor closed, ``execve``. An error before or at ``execve`` is
written (its errno) to the error pipe, which is close-on-exec in the child: OwlTUI's reader thread
reads it until the ``exec`` closes it (``Spawned.exec_failure``). The server replies as soon as
the child leads its own session (its process group exists: OwlTUI may freeze or kill it at once)
with the pid, or with ``error`` when no child was made (OwlTUI then starts commands the old way).

The clone is made ahead of the request: after each reply (and at start) the server clones a
*spare*, which waits on a socket pair of its own, holding no other descriptor, in the server's
process group. A request is forwarded to the spare as it came (the JSON and the four descriptors),
the spare does what the child does above, and the server replies with its pid and clones the
next spare while the command runs: the copy of the server's memory is off the command's path. The
spare has the set-up functions of every plan the server had seen when it was cloned (the server
makes each plan's once it has forwarded the request); a new plan's is made in the spare. A spare
that cannot be reached is replaced by a clone made then. When the server ends, its spare reads the
end of its socket and exits: a zombie in the server's process group, which OwlTUI reaps
(``Spawner.close``).

The server exits when OwlTUI's end closes (end of file: OwlTUI is gone), and also on
``PR_SET_PDEATHSIG`` when OwlTUI asks for it (only from its main thread: the signal follows the
thread that started the server, and a worker thread may end long before OwlTUI does).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Callable

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
    """In the new process, once it leads a session of its own (``_settle``): never returns."""
    code = 0
    try:
        os.set_inheritable(err, False)  # closed by a successful exec: the end of file OwlTUI waits for
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.chdir(cwd)
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


def _settle(tell: Callable[[], object]) -> None:
    """In the new process, first: a session (and process group) of its own, then ``tell`` the
    server, which replies to OwlTUI only then: OwlTUI may signal the group as soon as it has the pid
    (a freeze, an abort), before the command's set-up and ``exec``."""
    try:
        os.setsid()
    finally:
        tell()


class Server:
    """One request at a time, from OwlTUI's end of the socket pair."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lib = libc()
        self.clone = clone_number()
        self.setups: dict[str, Callable[[], None]] = {}
        self.spare: tuple[int, socket.socket] | None = None  # its pid, the server's end of its socket

    def _clone(self) -> int:
        ct = self.lib.ctypes
        zero = ct.c_long(0)
        assert self.clone is not None
        return int(self.lib.syscall(self.clone, ct.c_long(_CLONE_PARENT | _SIGCHLD), zero, zero, zero, zero))

    def fork_spare(self) -> None:
        """Clone the next spare (nothing when there is one, or no clone here)."""
        if self.spare is not None or self.clone is None:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = self._clone()
        if pid == 0:
            self._spare(theirs)
        theirs.close()
        if pid < 0:
            ours.close()
        else:
            self.spare = (pid, ours)

    def _spare(self, sock: socket.socket) -> None:
        """In the spare: wait for the request, then be its command's process. Never returns."""
        fds: list[int] = []
        try:
            fd = sock.fileno()
            os.closerange(3, fd)  # nothing of the server's: OwlTUI sees its end when it ends
            os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))
            data, fds, flags, _ = socket.recv_fds(sock, MAX_MESSAGE, 4)
            if not data or len(fds) != 4 or flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                os._exit(0)  # the server is gone (or sent nothing usable): no command to fail
            _settle(lambda: sock.send(b"s"))
            setup, argv, env, cwd = self._decode(data)
        except BaseException:
            try:
                os.write(fds[3], b"22")  # EINVAL: the command did not run
            finally:
                os._exit(127)
        _child(fds[:3], cwd, setup, argv, env, fds[3])

    def _forward(self, data: bytes, fds: list[int]) -> int | None:
        """Hand the request to the spare; its pid, None when it cannot be reached (it is dropped)."""
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        pid, sock = spare
        try:
            socket.send_fds(sock, [data], fds)
            settled = sock.recv(1)  # its session exists: the end of the socket if it died
        except OSError:
            return None
        finally:
            sock.close()
        return pid if settled else None

    def _setup(self, plan: str) -> Callable[[], None]:
        setup = self.setups.get(plan)
        if setup is None:
            if len(self.setups) >= PLANS_KEPT:
                del self.setups[next(iter(self.setups))]
            setup = self.setups[plan] = child_setup(plan_from_wire(plan))
        return setup

    def start(self, data: bytes, fds: list[int]) -> dict[str, int | str]:
        if self.clone is None:
            return {"error": f"no clone for the {os.uname().machine} architecture"}
        if len(fds) != 4:
            return {"error": f"expected 4 descriptors, got {len(fds)}"}
        pid = self._forward(data, fds)
        if pid is not None:
            return {"pid": pid}
        setup, argv, env, cwd = self._decode(data)
        ready, told = os.pipe()
        pid = self._clone()
        if pid == 0:
            os.close(ready)
            _settle(lambda: os.close(told))
            _child(fds[:3], cwd, setup, argv, env, fds[3])
        os.close(told)
        try:
            if pid < 0:
                return {"error": f"clone: {os.strerror(self.lib.ctypes.get_errno())}"}
            os.read(ready, 1)  # the end of file: the child leads its session (or is gone)
        finally:
            os.close(ready)
        return {"pid": pid}

    def _decode(self, data: bytes) -> tuple[Callable[[], None], list[bytes], list[bytes], bytes]:
        """A request's set-up function, argv, environment and working directory."""
        request = json.loads(data)
        return (
            self._setup(str(request["plan"])),
            [str(a).encode("latin-1") for a in request["argv"]],
            [str(e).encode("latin-1") for e in request["env"]],
            str(request["cwd"]).encode("latin-1"),
        )

    def learn(self, data: bytes) -> None:
        """After the reply: make the request's plan's set-up here, so the next spares have it."""
        with contextlib.suppress(Exception):
            self._setup(str(json.loads(data)["plan"]))

    def serve(self) -> None:
        self.fork_spare()
        while True:
            try:
                data, fds, flags, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 4)
            except OSError:
                return
            if not data:
                return  # OwlTUI closed its end: it is gone (and the spare with it)
            try:
                if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                    reply: dict[str, int | str] = {"error": "request truncated"}
                else:
                    reply = self.start(data, fds)
            except Exception as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            finally:
                for fd in fds:
                    os.close(fd)
            try:
                self.sock.send(json.dumps(reply).encode())
            except OSError:
                return
            self.learn(data)
            self.fork_spare()


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
