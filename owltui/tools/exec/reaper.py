"""The reaper: which adopted processes belong to which command, and reaping them without stealing.

OwlTUI is the subreaper of what its tools start (``subreaper``), so descendants that escape a
command are re-parented to it. What is ours. Every command's environment carries
``OWLTUI_PROC=<token>`` (``procfs.MARK``); a process that OwlTUI adopted (its child, but not a shell
OwlTUI started itself) belongs to a command when

- its environment carries that command's token, or
- it was seen as a descendant of the command's shell while the command ran (pid + start time), or
- its session is the command's session (commands run with ``start_new_session``, so the session id
  is the shell's pid and stays reserved while any member lives) or the session of an escaped
  process already attributed — never for a session leader itself (its session id is its own pid,
  possibly a reused one).

Reaping without stealing. ``subprocess.Popen`` and asyncio's child watcher wait for *their own*
pids; a ``SIGCHLD`` handler or ``waitpid(-1)`` would take those exit statuses from them. The Reaper
never does either: it lists OwlTUI's children (``/proc/self/task/*/children``, else a /proc walk) and
calls ``waitpid(pid, WNOHANG)`` only on zombies it can attribute as above (none of them is a child
OwlTUI forked: those have OwlTUI's session, or their own, and no token of a live shell), plus, as a
last resort, zombies in a session other than OwlTUI's that stayed unreaped for ``LINGER`` seconds
(a ``setsid`` orphan that died before it was ever seen; every Popen/asyncio owner in OwlTUI reaps
its own children at once). Shells still owned by their ``Popen`` are never touched.

A daemon thread scans every ``SCAN_INTERVAL`` seconds while there is anything to watch (a command
running, an escaped process alive, a zombie pending) and sleeps otherwise. Listeners hear about
escaped processes found and ended (``escapees``: with the exit code ``waitpid`` gave);
``JobManager`` turns them into jobs. ``terminate_sync`` signals whole trees (``terminate``),
following orphans as their parents die. Reading /proc lives in ``procfs``, signalling in
``signals``.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable

from owltui.tools.exec.escapees import Escapee, Listener, Origin
from owltui.tools.exec.procfs import (
    Stat,
    children,
    children_files,
    descendants,
    pid_alive,
    read_cmdline,
    read_environ,
    read_mark,
    read_stat,
)
from owltui.tools.exec.signals import group_alive
from owltui.tools.exec.terminate import TreeKill

log = logging.getLogger(__name__)

SCAN_INTERVAL = 0.25
LINGER = 5.0
KILL_GRACE = 2.0


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


class Reaper:
    """Process-wide (``REAPER``): the subreaper's bookkeeping. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._scan_lock = threading.Lock()
        self.last_scan = -1.0  # when (monotonic) the last completed scan began
        self._cond = threading.Condition(self._lock)
        self._seq = itertools.count(1)
        self._origins: dict[str, Origin] = {}
        self._by_sid: dict[int, str] = {}
        self._seen: dict[int, tuple[int, str]] = {}  # pid -> (start, token), seen under a live shell
        self._escapees: dict[int, Escapee] = {}  # adopted and alive when last looked at
        self._zombies: dict[tuple[int, int], float] = {}  # unattributed zombies: first seen (monotonic)
        self._strays: set[tuple[int, int]] = set()  # live unattributed children in other sessions
        self._env_retried: set[tuple[int, int]] = set()  # seen with an empty environment once
        self._doomed: set[int] = set()  # being killed: not reported as found
        self._found: list[Listener] = []
        self._ended: list[Listener] = []
        self._thread: threading.Thread | None = None
        self._atexit = False
        self._my_sid = -1

    # ---- registration -------------------------------------------------------------------------
    def token(self) -> str:
        """A fresh token for the next command's environment (``MARK``)."""
        return f"{os.getpid()}.{next(self._seq)}"

    def register(self, token: str, origin: Origin) -> None:
        """A command started: its shell is ``origin.pid`` (also its session and group id)."""
        with self._lock:
            self._origins[token] = origin
            self._by_sid[origin.pgid] = token
            if not self._atexit:
                self._atexit = True
                atexit.register(self.kill_all)
            self._wake(now=False)  # a command that just started has nothing to see yet

    def subscribe(self, found: Listener | None = None, ended: Listener | None = None) -> Callable[[], None]:
        """Listeners are called from whichever thread scans, never under the reaper's lock."""
        with self._lock:
            if found is not None:
                self._found.append(found)
            if ended is not None:
                self._ended.append(ended)

        def unsubscribe() -> None:
            with self._lock:
                if found in self._found:
                    self._found.remove(found)
                if ended in self._ended:
                    self._ended.remove(ended)

        return unsubscribe

    def origin(self, token: str) -> Origin | None:
        with self._lock:
            return self._origins.get(token)

    def escapees(self, token: str | None = None) -> list[Escapee]:
        """Escaped processes still alive (of one command, or all), oldest first."""
        with self._lock:
            return [e for e in self._escapees.values() if not e.ended and (token is None or e.token == token)]

    # ---- the watcher thread ---------------------------------------------------------------------
    def _urgent(self) -> bool:
        return bool(self._escapees or any(not o.shell_reaped for o in self._origins.values()))

    def _busy(self) -> bool:
        """Anything to watch: commands, escaped processes (every ``SCAN_INTERVAL``), or processes
        nobody claimed that may become zombies to reap (every second)."""
        return bool(self._zombies or self._strays) or self._urgent()

    def _wake(self, now: bool = True) -> None:
        """Make sure the watcher runs; ``now``: scan at once, else at its next interval."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, args=(now,), name="owltui-reaper", daemon=True
                )
                self._thread.start()
            elif now:
                self._cond.notify_all()

    def _run(self, now: bool = True) -> None:
        if not now:
            with self._cond:
                self._cond.wait(SCAN_INTERVAL)
        while True:
            with self._cond:
                if not self._busy():
                    self._thread = None
                    return
            try:
                self.scan()
            except Exception:
                log.exception("reaper scan failed")
            with self._cond:
                fast = self._urgent() and children_files() is not False
                self._cond.wait(SCAN_INTERVAL if fast else 4 * SCAN_INTERVAL)

    # ---- scanning -------------------------------------------------------------------------------
    def _attribute(self, st: Stat, tokens: dict[str, Origin]) -> str | None:
        if st.alive:
            env = read_environ(st.pid)
            if env == b"" and (st.pid, st.start) not in self._env_retried:
                # caught inside execve (``setsid`` → ``sleep``): the new image's environment is
                # there a moment later; once per process (``env -i`` leaves it empty for good)
                self._env_retried.add((st.pid, st.start))
                for _ in range(20):
                    time.sleep(0.0005)
                    env = read_environ(st.pid)
                    if env != b"":
                        break
            mark = read_mark(st.pid, env)
            if mark is not None and mark in tokens:
                return mark
        seen = self._seen.get(st.pid)
        if seen is not None and seen[0] == st.start:
            return seen[1]
        if st.sid == self._my_sid or st.sid == st.pid:
            # a session leader is attributed by its mark or identity, never by its session id:
            # that id is its own pid, which may be a reused pid of a shell OwlTUI started earlier
            return None
        return self._by_sid.get(st.sid)

    def scan_since(self, moment: float | None) -> None:
        """``scan``, unless one that began at or after ``moment`` (monotonic: a command's end) has
        completed: it saw all there is to see of that command (each scan waits for the last)."""
        if moment is None or self.last_scan < moment:
            self.scan()

    def scan(self) -> list[Escapee]:
        """Look at OwlTUI's children now: record escaped processes, reap attributable zombies, tell
        the listeners. Returns the escaped processes found by this scan."""
        if not os.path.isdir("/proc"):
            return []
        found: list[Escapee] = []
        ended: list[Escapee] = []
        with self._scan_lock:
            began = time.monotonic()
            me = os.getpid()
            my_sid = self._my_sid = os.getsid(0)
            with self._lock:
                origins = dict(self._origins)
            live_shells = {o.pid for o in origins.values() if not o.shell_reaped}
            # descendants of running commands: remember whose they are, before they are orphaned
            for owner_token, origin in origins.items():
                if origin.pid in live_shells:
                    for pid in descendants([origin.pid]):
                        if pid not in self._seen:
                            st = read_stat(pid)
                            if st is not None:
                                self._seen[pid] = (st.start, owner_token)
            now = time.monotonic()
            kids = set(children(me)) - live_shells
            for pid in kids:
                st = read_stat(pid)
                if st is None:
                    continue
                esc = self._escapees.get(pid)
                if esc is not None and esc.start != st.start:
                    ended.append(self._end(esc, None))
                    esc = None
                if not st.alive:
                    owner = esc.token if esc is not None else self._attribute(st, origins)
                    if owner is None and st.sid != my_sid:
                        first = self._zombies.setdefault((pid, st.start), now)
                        if now - first >= LINGER:
                            owner = "?"
                    if owner is not None:
                        code = self._reap(pid)
                        self._zombies.pop((pid, st.start), None)
                        if esc is not None:
                            ended.append(self._end(esc, code))
                    continue
                if esc is not None:  # a fork that had not exec'd yet when found shows its program now
                    esc.command = read_cmdline(pid)
                    continue
                token = self._attribute(st, origins)
                if token is None or token not in origins:
                    if st.sid != my_sid:  # may be a setsid'd orphan whose mark is gone: reap it later
                        self._strays.add((pid, st.start))
                    continue
                esc = Escapee(
                    pid, st.start, st.sid, token, read_cmdline(pid), origins[token].command, time.time()
                )
                with self._lock:
                    self._escapees[pid] = esc
                    if st.sid != my_sid:
                        self._by_sid.setdefault(st.sid, token)
                if pid not in self._doomed:
                    found.append(esc)
            for pid, esc in list(self._escapees.items()):
                if pid not in kids:  # gone without a zombie we could see (reaped elsewhere)
                    ended.append(self._end(esc, None))
            self._prune(origins, kids, live_shells)
            self.last_scan = began
            with self._lock:
                if self._busy():
                    self._wake()
        for esc in found:
            for fn in tuple(self._found):
                self._call(fn, esc)
        for esc in ended:
            for fn in tuple(self._ended):
                self._call(fn, esc)
        return found

    @staticmethod
    def _call(fn: Listener, esc: Escapee) -> None:
        try:
            fn(esc)
        except Exception:
            log.exception("reaper listener failed")

    def _end(self, esc: Escapee, code: int | None) -> Escapee:
        with self._lock:
            self._escapees.pop(esc.pid, None)
        esc.exit_code = code
        esc.ended = True
        return esc

    @staticmethod
    def _reap(pid: int) -> int | None:
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        return _exit_code(status) if got == pid else None

    def _prune(self, origins: dict[str, Origin], kids: set[int], live_shells: set[int]) -> None:
        """Forget what can no longer matter: seen pids that are gone, commands that ended with
        nothing of theirs left among OwlTUI's children, zombies that went away."""
        self._seen = {
            pid: v for pid, v in self._seen.items() if (st := read_stat(pid)) is not None and st.start == v[0]
        }
        live_tokens = {e.token for e in self._escapees.values()} | {t for _, t in self._seen.values()}
        kid_sids = {st.sid for pid in kids if (st := read_stat(pid)) is not None}
        with self._lock:
            for token, origin in origins.items():
                if origin.pid in live_shells or token in live_tokens or origin.pgid in kid_sids:
                    continue
                if group_alive(origin.pgid):
                    continue
                self._origins.pop(token, None)
                if self._by_sid.get(origin.pgid) == token:
                    del self._by_sid[origin.pgid]
            tokens = set(self._origins)
            sids = {e.sid for e in self._escapees.values()} | kid_sids
            self._by_sid = {sid: t for sid, t in self._by_sid.items() if t in tokens or sid in sids}
            self._zombies = {k: v for k, v in self._zombies.items() if k[0] in kids}
            self._strays = {k for k in self._strays if k[0] in kids and k not in self._zombies}
            self._env_retried = {k for k in self._env_retried if k[0] in kids}

    # ---- trees ----------------------------------------------------------------------------------
    def tree(self, token: str) -> set[int]:
        """Live pids of command ``token`` outside what its process group covers as well: the
        descendants of its shell and its escaped processes with theirs."""
        self.scan()
        origin = self.origin(token)
        roots = [e.pid for e in self.escapees(token)]
        pids = set(roots) | descendants(roots)
        if origin is not None and not origin.shell_reaped:
            pids |= descendants([origin.pid])
        return {p for p in pids if pid_alive(p)}

    def terminate_sync(
        self, pgids: Iterable[int], collect: Callable[[], set[int]], grace: float = KILL_GRACE
    ) -> float:
        """TERM the groups and every pid ``collect()`` gives (then CONT, so stopped ones see it),
        again for pids that show up as parents die; KILL what is left after ``grace`` s. Reaps the
        zombies and returns the seconds it took."""
        started = time.monotonic()
        kill = TreeKill(list(pgids), collect, self._doom)
        try:
            kill.run(started + grace)
            self.scan()
        finally:
            with self._lock:
                self._doomed -= set(kill.everyone)
        return time.monotonic() - started

    def _doom(self, pids: set[int]) -> None:
        """These are being killed: a scan does not report them as found."""
        with self._lock:
            self._doomed.update(pids)

    def kill_all(self) -> None:
        """At exit: kill every escaped process still alive."""
        with contextlib.suppress(Exception):
            self.scan()
            if self.escapees():
                self.terminate_sync([], lambda: {e.pid for e in self.escapees()}, grace=0.5)


REAPER = Reaper()
"""The process-wide reaper (the subreaper bit is process-wide too)."""
