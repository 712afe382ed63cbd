"""OwlTUI as the child subreaper of what its tools start (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``).

A command that runs ``sleep 300 &``, ``nohup …`` or ``setsid …`` leaves processes behind when its
shell ends (``setsid`` ones leave its process group at once). Once OwlTUI is a subreaper (set at the
first process a tool starts), such orphaned descendants are re-parented to OwlTUI instead of init,
where ``reaper.Reaper`` finds them. The bit is per process: a forked child sets it again.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

from owltui.policy.sandbox.landlock import libc

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36

_subreaper_pid: int | None = None
_subreaper_ok = False
_subreaper_lock = threading.Lock()


def become_subreaper() -> bool:
    """Make this process the child subreaper (Linux; once per process, later calls are free).
    False where it is not available: escaped processes then go to init and are not seen."""
    global _subreaper_pid, _subreaper_ok
    with _subreaper_lock:
        if _subreaper_pid == os.getpid():
            return _subreaper_ok
        _subreaper_pid, _subreaper_ok = os.getpid(), False
        if not sys.platform.startswith("linux"):
            return False
        try:
            lib = libc()  # the sandbox's handles (prctl typed once)
            if lib.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                log.warning("PR_SET_CHILD_SUBREAPER failed: %s", os.strerror(lib.ctypes.get_errno()))
                return False
        except (OSError, AttributeError) as exc:
            log.warning("PR_SET_CHILD_SUBREAPER unavailable: %s", exc)
            return False
        _subreaper_ok = True
        return True
