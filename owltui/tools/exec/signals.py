"""Signalling processes: one pid or process group (gone or foreign ones are skipped), whether a
group is still alive, and ``stop_sync``/``cont_sync``, which freeze and thaw whole trees."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterable

from owltui.tools.exec.procfs import descendants


def signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_members_alive(pgid: int) -> bool:
    """Any process of the group that is not a zombie? (orphaned zombies may never be reaped in a
    container, so ``killpg(pgid, 0)`` alone would report them alive.)"""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a live member (one we may not signal counts as alive)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if os.path.isdir("/proc/self"):
        return _group_members_alive(pgid)
    return True


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
