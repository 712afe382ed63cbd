"""Shell commands in their own process group: streamed, memory-bounded output, killable as a group.

A reader thread pumps the pipe into an ``OutputSink`` (``output``: sanitised text with secrets
scrubbed; spilled to a file once it passes the large-result limits, so a command printing 100 MB
never sits in memory). The thread does not depend on any async scope, so a command can outlive the
tool call that started it and become a background job.

Every command gets a scrubbed environment (no API keys, tokens, passwords: ``sandbox.child_env``)
and, unless started with ``sandboxed=False``, runs under the session's ``SandboxPolicy``: started
by the sandbox's fork server (no fork of OwlTUI itself), else by ``Popen`` (``spawn.start_shell``).

The first command makes OwlTUI the subreaper of what its tools start (``reaper``); each command
carries its token (``OWLTUI_PROC``) so descendants that leave its process group (``setsid``) or
outlive its shell (``&``, ``nohup``) are still known as its own: ``terminate`` kills them with the
group, and the job manager lists those that outlive a finished command.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import sniffio

from owltui.agent.services import Sandbox, Scrubber
from owltui.policy.sandbox.env import child_env
from owltui.text.sanitize import StreamSanitizer
from owltui.tools.exec.output import OutputSink
from owltui.tools.exec.procfs import MARK
from owltui.tools.exec.reaper import REAPER
from owltui.tools.exec.signals import group_alive as group_alive
from owltui.tools.exec.signals import signal_group
from owltui.tools.exec.spawn import Spawned, start_shell
from owltui.tools.exec.subreaper import become_subreaper
from owltui.tools.exec.wake import wait_news

KILL_GRACE = 2.0
PROGRESS_GAP = 0.05  # while output streams, a follower is woken at most this often (at its end at once)
# a pipe of 1 MiB (Linux's limit for anyone), read a whole pipe at a time: a command printing 100 MB
# costs 100 reads instead of 1,500 (each a select, a wake-up and a sink write)
PIPE_BYTES = 1 << 20


def default_spill_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"owltui-{os.getuid()}" / "output"


def _shell() -> str:
    shell = os.environ.get("SHELL") or ""
    return shell if shell and os.path.isfile(shell) and os.access(shell, os.X_OK) else "/bin/bash"


class Proc:
    """One running shell command. ``version`` changes whenever output arrives or the command ends."""

    def __init__(
        self,
        command: str,
        cwd: Path,
        spill_dir: Path | None = None,
        *,
        sandbox: Sandbox | None = None,
        sandboxed: bool = True,
        scrubber: Scrubber | None = None,
    ) -> None:
        """``sandbox`` confines the command (None: no sandbox, as does ``sandboxed=False`` — the
        one-off re-run the user approved); its ``env_keep`` applies either way."""
        env = sandbox.child_env() if sandbox is not None else child_env(os.environ)
        env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
        become_subreaper()
        self.token = REAPER.token()
        env[MARK] = self.token
        self.command = command
        self.cwd = cwd
        self.sandbox = sandbox if sandboxed and sandbox is not None and sandbox.enforced else None
        self.sink = OutputSink(spill_dir or default_spill_dir(), scrubber)
        self.started = time.time()
        self.exit_code: int | None = None
        self.ended_at: float | None = None  # monotonic, once the shell was reaped
        self.killed = False
        self.start_error: OSError | None = None  # the shell could not be executed (``Spawned``)
        self._cond = threading.Condition()
        self._version = 0
        self._done = False
        self._ended = threading.Event()  # set with _done: a wait for the end wakes on nothing else
        self._listeners: list[Callable[[Proc], None]] = []
        self._wakers: list[Callable[[], None]] = []  # async waiters: called (under _cond) on news
        self.argv = [_shell(), "-c", command]
        self._popen = start_shell(self.argv, cwd, env, self.sandbox)
        self.pid = self.pgid = self._popen.pid
        REAPER.register(self.token, self)
        self._thread = threading.Thread(target=self._pump, name=f"owltui-proc-{self.pid}", daemon=True)
        self._thread.start()

    @property
    def done(self) -> bool:
        return self._done

    @property
    def version(self) -> int:
        return self._version

    @property
    def shell_reaped(self) -> bool:
        """The shell's exit status was collected (by its ``Popen``): its pid is no longer ours."""
        return self._popen.returncode is not None

    def _bump(self) -> None:
        with self._cond:
            self._version += 1
            self._cond.notify_all()
            for wake in self._wakers:
                wake()

    def _pump(self) -> None:
        assert self._popen.stdout is not None
        if isinstance(self._popen, Spawned):  # ``Popen`` has raised it, this one tells it now
            self.start_error = self._popen.exec_failure()
            if self.start_error is not None:
                self.sink.write(f"could not start the shell: {self.start_error}\n")
        fd = self._popen.stdout.fileno()
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        decoder = StreamSanitizer()
        exited_at: float | None = None
        # a pidfd turns readable when the shell exits: no 50 ms select slice is lost when a
        # background process it left keeps the pipe open (Linux 5.3+; else poll() every slice)
        pidfd = -1
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(self._popen.pid)
        watch = [fd, pidfd] if pidfd >= 0 else [fd]
        try:
            while True:
                ready, _, _ = select.select(watch, [], [], 0.05)
                got = fd in ready
                if got:
                    data = os.read(fd, PIPE_BYTES)
                    if not data:
                        break
                    self.sink.write(decoder.feed(data))
                    self._bump()
                if exited_at is None and self._popen.poll() is not None:
                    exited_at = time.monotonic()
                    if pidfd >= 0:
                        watch = [fd]
                # The shell has ended: a background grandchild may still hold the pipe open; drain
                # what is there, then stop reading.
                if exited_at is not None and (not got or time.monotonic() - exited_at > 0.5):
                    break
        except OSError:
            pass
        finally:
            if pidfd >= 0:
                os.close(pidfd)
            self.sink.write(decoder.close())
            code = self._popen.wait()
            self.ended_at = time.monotonic()
            self.sink.close()
            with contextlib.suppress(OSError):
                self._popen.stdout.close()
            with self._cond:
                self.exit_code = 128 - code if code < 0 else code
                self._done = True
                self._ended.set()
                listeners, self._listeners = self._listeners, []
                self._version += 1
                self._cond.notify_all()
                for wake in self._wakers:
                    wake()
            for listener in listeners:
                with contextlib.suppress(Exception):
                    listener(self)

    def add_exit_listener(self, listener: Callable[[Proc], None]) -> bool:
        """Call ``listener(proc)`` from the reader thread when the command ends. False (and not
        registered) when it has already ended."""
        with self._cond:
            if self._done:
                return False
            self._listeners.append(listener)
            return True

    def wait_change_sync(self, version: int, timeout: float, gap: float = 0.0) -> int:
        """Wait for news; after news that is not the end, let more gather for ``gap`` s unless
        the command ends meanwhile (a command printing without pause wakes its follower once per
        ``gap``, not once per read)."""
        with self._cond:
            self._cond.wait_for(lambda: self._version != version or self._done, timeout)
            if gap <= 0 or self._done or self._version == version:
                return self._version
        self._ended.wait(gap)
        return self._version

    async def wait_change(self, version: int, within: float, gap: float = 0.0) -> int:
        """Wait (at most ``within`` s, in short slices so an abandoned wait ends soon) for news, gathering
        what follows it for ``gap`` s (``wait_change_sync``); on asyncio without a worker (``wake``)."""
        within = max(0.0, min(within, 0.25))
        if sniffio.current_async_library() != "asyncio":
            return await anyio.to_thread.run_sync(
                self.wait_change_sync, version, within, gap, abandon_on_cancel=True
            )
        await wait_news(
            self._cond, self._wakers, lambda: self._version != version, lambda: self._done, within, gap
        )
        return self._version

    async def wait(self, within: float | None = None, clock: Callable[[], float] = time.monotonic) -> bool:
        """Wait until the command ends or ``within`` seconds pass on ``clock`` (a clock that stops
        while processes are frozen extends the wait by the pause); True when it ended."""
        deadline = None if within is None else clock() + within
        version = -1
        while not self._done:
            left = 0.25 if deadline is None else deadline - clock()
            if left <= 0:
                break
            version = await self.wait_change(version, left)
        return self._done

    def signal(self, sig: int) -> None:
        signal_group(self.pgid, sig)

    def terminate_sync(self, grace: float = KILL_GRACE) -> float:
        """TERM the group and every process that escaped it (then CONT: a frozen command sees the
        TERM), KILL what is left after ``grace`` s; returns the seconds it took (blocking)."""
        self.killed = True
        return REAPER.terminate_sync([self.pgid], lambda: REAPER.tree(self.token), grace)

    async def terminate(self, grace: float = KILL_GRACE) -> float:
        """``terminate_sync`` off the event loop; safe to call under cancellation."""
        took = 0.0
        with anyio.CancelScope(shield=True):
            self.killed = True
            took = await anyio.to_thread.run_sync(self.terminate_sync, grace)
            await self.wait(1.0)
        return took

    def sandbox_note(self) -> str | None:
        """After a failure: the sentence saying the sandbox refused a write (None if it did not)."""
        if self.sandbox is None or not self.done or self.exit_code == 0:
            return None
        return self.sandbox.explain(self.sink.preview(), self.cwd)

    def discard_output(self) -> None:
        """Delete the spill file (a cancelled command's output goes nowhere)."""
        if self.sink.path is not None:
            with contextlib.suppress(OSError):
                self.sink.path.unlink()
