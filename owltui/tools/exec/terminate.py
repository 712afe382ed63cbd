"""Ending a process tree whose members change while it dies: ``TreeKill``, one run of
``Reaper.terminate_sync``.

TERM (then CONT, so stopped processes see it) the groups and every pid the caller's ``collect()``
gives, again for pids that show up as their parents die (orphans handed over to OwlTUI), and KILL
what is left at the deadline. Each pid is remembered with its start time, so a pid reused meanwhile
is not taken for ours. Every pid found is passed to ``doom`` first: the reaper does not report a
process being killed as a new escapee.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from owltui.tools.exec.procfs import descendants, read_stat
from owltui.tools.exec.signals import group_alive, signal_group, signal_pid


class TreeKill:
    """The groups and pids of one termination, and the pids it has seen (``everyone``)."""

    def __init__(
        self, pgids: list[int], collect: Callable[[], set[int]], doom: Callable[[set[int]], None]
    ) -> None:
        self.pgids = pgids
        self.collect = collect
        self.doom = doom
        self.everyone: dict[int, int] = {}  # pid -> start time: a pid reused meanwhile is not ours
        self.signalled: set[int] = set()

    def _live(self, pid: int) -> bool:
        st = read_stat(pid)
        if st is None or not st.alive:
            return False
        return self.everyone.setdefault(pid, st.start) == st.start

    def gather(self) -> set[int]:
        """The live pids of the tree now: those ``collect()`` gives, those seen before, their
        descendants."""
        more = self.collect()
        self.doom(more)
        alive = {p for p in set(self.everyone) | more if self._live(p)}
        alive |= {p for p in descendants(alive) if self._live(p)}
        self.doom(alive)
        return alive

    def run(self, deadline: float) -> None:
        """Signal until nothing is left, KILLing what still lives at ``deadline`` (monotonic)."""
        pgids = self.pgids
        self.gather()  # before any signal (remembered in ``everyone``): a dying parent hands its
        # children over to OwlTUI meanwhile, and one look could miss them in transit
        for pgid in pgids:
            signal_group(pgid, signal.SIGTERM)
            signal_group(pgid, signal.SIGCONT)
        while True:
            alive = self.gather()
            for pid in alive - self.signalled:
                signal_pid(pid, signal.SIGTERM)
                signal_pid(pid, signal.SIGCONT)
            self.signalled |= alive
            groups = [g for g in pgids if group_alive(g)]
            if not alive and not groups:
                break
            if time.monotonic() >= deadline:
                end = time.monotonic() + 1.0
                while (alive or groups) and time.monotonic() < end:
                    for pgid in groups:
                        signal_group(pgid, signal.SIGKILL)
                    for pid in alive:
                        signal_pid(pid, signal.SIGKILL)
                    time.sleep(0.005)
                    alive = self.gather()
                    groups = [g for g in pgids if group_alive(g)]
                break
            time.sleep(0.005)
