"""Signalling processes: one pid or process group (gone or foreign ones are skipped), and
``stop_sync``/``cont_sync``, which freeze and thaw whole trees."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterable

from .procfs import descendants


def signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a live member (``proc.group_alive``, imported lazily:
    ``proc`` imports the reaper)."""
    from .proc import group_alive as alive

    return alive(pgid)


def stop_sync(pgids: Iterable[int], collect: Callable[[], set[int]]) -> tuple[set[int], set[int]]:
    """SIGSTOP the groups and every pid ``collect()`` gives, again until no new pid shows up (a
    process may fork between the listing and the signal). Returns (groups, pids) stopped."""
    groups = set(pgids)
    for pgid in groups:
        signal_group(pgid, signal.SIGSTOP)
    stopped: set[int] = set()
    for _ in range(8):
        new = collect() - stopped
        new |= descendants(new | stopped) - stopped
        if not new:
            break
        for pid in new:
            signal_pid(pid, signal.SIGSTOP)
        stopped |= new
    return groups, stopped


def cont_sync(groups: Iterable[int], pids: Iterable[int]) -> None:
    for pgid in groups:
        signal_group(pgid, signal.SIGCONT)
    for pid in pids:
        signal_pid(pid, signal.SIGCONT)
