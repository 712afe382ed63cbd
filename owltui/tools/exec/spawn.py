"""How a command's shell is started: sandboxed ones through the fork server, the rest by ``Popen``.

``start_shell`` is ``Proc``'s one way to start a process. Without a sandbox to apply it is a plain
``subprocess.Popen`` (Python ``vfork``-s then: cheap whatever OwlTUI's size). With one it asks the
process-wide ``SPAWNER`` — the client of ``owltui.policy.sandbox.spawner``, started when a session
with an enforced sandbox is built (``prestart``), else on the first sandboxed command — which
makes the command OwlTUI's own child from a small process, so no fork of OwlTUI is needed; the
plan, argv, environment and working directory travel as JSON, the pipe's descriptors by SCM_RIGHTS
with an error pipe's (silent when the ``exec`` succeeds, else the errno). The result is a
``Spawned``: the part of ``Popen`` that ``Proc`` uses (``pid``, ``stdout``, ``poll``, ``wait``,
``returncode``), reaping its own pid by ``waitpid``, and ``exec_failure``: the error ``Popen`` would
have raised, read from the error pipe by whoever follows the command (``Proc``'s reader thread), so
OwlTUI goes on while the child sets its sandbox up and execs. Until it has,
``Proc.shell_reaped`` is False, so the reaper never takes the shell (it reaps only adopted processes
that are not shells still owned).

When the server cannot start, dies, or cannot make a child (no raw ``clone`` here), the command —
and every later one — is started the old way, ``Popen(preexec_fn=the same set-up)``, after one log
line: a command never runs without its sandbox because of the server. If the server dies between
taking a request and answering, the command may have started (a window of a millisecond, only
when something kills the server); it is then started again the old way.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import select
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO

import owltui
from owltui.agent.services import Sandbox
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.tools.exec.procfs import children, read_stat

log = logging.getLogger(__name__)

REPLY_BYTES = 4096


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 64):
        chunks.append(chunk)
    return b"".join(chunks)


def _reap_spare(server_pid: int, within: float = 1.0) -> None:
    """The server's spare (``spawner``) ends with the server: OwlTUI's child in the server's process
    group, reaped here once it has (at most ``within`` s; a command has a group of its own)."""
    for pid in children(os.getpid()):
        st = read_stat(pid)
        if st is None or st.pgid != server_pid:
            continue
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
            try:
                select.select([pidfd], [], [], within)
            finally:
                os.close(pidfd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _latin(value: str | Path) -> str:
    return os.fsencode(str(value)).decode("latin-1")


class Spawned:
    """A command the spawner started: OwlTUI's child, waited for by pid as ``Popen`` waits."""

    def __init__(self, pid: int, stdout: BinaryIO, exec_errors: int, program: str) -> None:
        self.pid = pid
        self.stdout = stdout
        self.returncode: int | None = None
        self._lock = threading.Lock()
        self._exec_errors: int | None = exec_errors
        self._program = program
        self._failure: OSError | None = None

    def exec_failure(self) -> OSError | None:
        """The error the ``exec`` of the command failed with (the one ``Popen`` raises), None once it
        execs: blocks until then, or until the child ends. Reads the error pipe once."""
        with self._lock:
            fd, self._exec_errors = self._exec_errors, None
        if fd is not None:
            try:
                told = _read_all(fd)  # nothing, at the end of file the exec makes: the command runs
            finally:
                os.close(fd)
            if told:
                err = int(told) if told.isdigit() else errno.EINVAL
                self._failure = OSError(err, os.strerror(err), self._program)
        return self._failure

    def _collect(self, flags: int) -> int | None:
        try:
            got, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # waited for elsewhere: the status is lost (as Popen says: 0)
            got, status = self.pid, 0
        if got == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None and self._lock.acquire(blocking=False):
            try:
                if self.returncode is None:
                    self._collect(os.WNOHANG)
            finally:
                self._lock.release()
        return self.returncode

    def wait(self) -> int:
        with self._lock:
            while self.returncode is None:
                self._collect(0)
            return self.returncode


class Spawner:
    """OwlTUI's end of the fork server; thread-safe (one request at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._server: subprocess.Popen[bytes] | None = None
        self._owner = 0  # the pid that started the server: only its commands can be its children
        self.broken: str | None = None
        self.enabled = True  # False: every command starts the old way (benchmarks compare the two)

    @property
    def server_pid(self) -> int | None:
        return self._server.pid if self._server is not None and self._server.poll() is None else None

    @property
    def ready(self) -> bool:
        """A command started now goes through the running server (no start of it, no fork of OwlTUI)."""
        return self.enabled and self.broken is None and self._sock is not None and self._owner == os.getpid()

    def _launch(self) -> bool:
        if not sys.executable:
            return self._fail("no Python interpreter to run it")
        root = str(Path(owltui.__file__).resolve().parent.parent)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        main = threading.current_thread() is threading.main_thread()
        code = (
            f"import sys; sys.path.insert(0, {root!r}); from owltui.policy.sandbox.spawner import serve; "
            f"serve({theirs.fileno()}, {os.getpid()}, {main})"
        )
        try:
            self._server = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", code],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=[theirs.fileno()],
                env={"OWLTUI_FORK_SERVER": "1"},  # nothing of OwlTUI's; not empty (the reaper rereads those)
                process_group=0,  # the terminal's Ctrl-C is not for it
            )
        except OSError as exc:
            ours.close()
            return self._fail(f"could not start ({exc})")
        finally:
            theirs.close()
        self._sock, self._owner = ours, os.getpid()
        return True

    def _fail(self, why: str) -> bool:
        """Give up on the server for the rest of this process (one log line)."""
        if self.broken is None:
            log.warning("sandboxed commands start the slow way from now on: the fork server %s", why)
        self.broken = why
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._server is not None:
            server, self._server = self._server, None
            if server.poll() is None:
                server.kill()
            server.wait()
            _reap_spare(server.pid)
        return False

    def prestart(self) -> None:
        """Start the server now (a session does at start, so its code is read before the model can
        have changed a file: OwlTUI's own source may lie in the workspace)."""
        with self._lock:
            if self._owner and self._owner != os.getpid():
                self._sock, self._server, self._owner = None, None, 0
            if self.enabled and self.broken is None and self._sock is None:
                self._launch()

    def close(self) -> None:
        """Stop the server (it ends at end of file) and wait for it; the next command starts another."""
        with self._lock:
            sock, server = self._sock, self._server
            self._sock, self._server, self._owner = None, None, 0
        if sock is not None:
            sock.close()
        if server is not None:
            server.wait()
            _reap_spare(server.pid)

    def start(self, plan: str, argv: list[str], env: dict[str, str], cwd: Path | str) -> Spawned | None:
        """Start ``argv`` under ``plan`` (``SandboxPolicy.wire``) with stdin /dev/null and stdout and
        stderr one pipe; None when the server is not there (start it the old way). Whether the
        command could be executed is ``exec_failure``'s to tell (``Popen`` raises it here)."""
        with self._lock:
            if self._owner and self._owner != os.getpid():  # a forked copy of OwlTUI: its own server
                self._sock, self._server, self._owner = None, None, 0
            if not self.enabled or self.broken is not None or (self._sock is None and not self._launch()):
                return None
            assert self._sock is not None
            request = {
                "plan": plan,
                "argv": [_latin(a) for a in argv],
                "env": [_latin(f"{k}={v}") for k, v in env.items()],
                "cwd": _latin(cwd),
            }
            r, w = os.pipe()
            err_r, err_w = os.pipe()
            null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            try:
                socket.send_fds(self._sock, [json.dumps(request).encode()], [null, w, w, err_w])
                data = self._sock.recv(REPLY_BYTES)
            except OSError as exc:
                data, why = b"", f"is unreachable ({exc})"
            else:
                why = "exited"
            finally:
                for fd in (w, err_w, null):
                    os.close(fd)
            reply = json.loads(data) if data else {"error": why}
            if "error" in reply:
                os.close(r)
                os.close(err_r)
                self._fail(str(reply["error"]))
                return None
        return Spawned(int(reply["pid"]), open(r, "rb", buffering=0), err_r, argv[0])


SPAWNER = Spawner()
"""The process-wide fork server client (started by ``prestart`` or the first sandboxed command)."""


def start_shell(
    argv: list[str], cwd: Path, env: dict[str, str], sandbox: Sandbox | None
) -> subprocess.Popen[bytes] | Spawned:
    """Start a command's shell in a session of its own, stdin /dev/null, stdout and stderr one pipe,
    under ``sandbox`` when given (``Proc``: only when it is enforced)."""
    preexec = None
    if isinstance(sandbox, SandboxPolicy):
        plan = sandbox.plan(cwd)
        if plan is not None:
            spawned = SPAWNER.start(sandbox.wire(plan), argv, env, cwd)
            if spawned is not None:
                return spawned
            preexec = sandbox.setup_for(plan)
    elif sandbox is not None:
        preexec = sandbox.preexec(cwd)
    return subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
        bufsize=0,
        preexec_fn=preexec,
    )
