"""An exception nothing in the TUI caught. ``keep`` runs in the app's exception hook, while the
widgets still exist: it takes the traceback and what the user had not sent yet (the input's draft,
the queued messages; on the first frame, the lines typed there), and drops Textual's own traceback
print (a full-screen dump, with local variables). Once the terminal is restored, ``report`` writes
the traceback to a log in the user's data directory (``crash-<time>-<pid>.log``, private to the user)
and gives the lines ``launch`` prints: one naming the error and the log, then what was not sent, as
typed. The session file is closed by the runtime's shielded shutdown, which ``launch`` makes sure of.

Light at import (the standard library, Textual): the app imports it when an exception reaches its hook.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from owltui.session.paths import data_dir
from owltui.ui.textual_compat import drop_exit_traceback


@dataclass
class Crash:
    """What an uncaught exception left: its traceback and the lines the user had not sent."""

    error: BaseException
    traceback: str
    unsent: list[str] = field(default_factory=list)


def _unsent(app: Any) -> list[str]:
    """The queued messages (in delivery order), then the input's draft; on the first frame, the lines
    sent there, then the editor's text."""
    boot = app.boot
    if boot is not None:
        boot.keep_unsent()
        return list(boot.unsent)
    lines = [view["text"] for views in app.runtime.inbox.snapshot().values() for view in views]
    draft = app.input.text
    return [*lines, draft] if draft.strip() else lines


def keep(app: Any, error: BaseException) -> Crash:
    """Called from the app's exception hook (after Textual's, which has started the exit)."""
    try:
        unsent = _unsent(app)
    except Exception:  # the widgets may be what broke: the traceback still goes to the log
        unsent = []
    drop_exit_traceback(app)  # Textual's traceback on the restored screen: ``report`` says where it is
    return Crash(error, "".join(traceback.format_exception(error)), unsent)


def write_log(crash: Crash, env: Mapping[str, str], scrub: Callable[[str], str]) -> Path | None:
    """The traceback (and what was not sent) in ``$XDG_DATA_HOME/owltui/crash-*.log``; None when it
    cannot be written."""
    body = crash.traceback
    if crash.unsent:
        body += "\nnot sent (typed or queued when OwlTUI crashed):\n" + "\n".join(crash.unsent) + "\n"
    try:
        folder = data_dir(env)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as out:
            out.write(scrub(body))
    except OSError:
        return None
    return path


def report(crash: Crash, env: Mapping[str, str], scrub: Callable[[str], str]) -> list[str]:
    """The lines ``launch`` prints on stderr: the error and its log, then what was not sent."""
    error = crash.error
    said = (str(error).strip().splitlines() or [""])[0][:200]
    what = f"{type(error).__name__}: {scrub(said)}" if said else type(error).__name__
    log = write_log(crash, env, scrub)
    where = f"the traceback is in {log}" if log is not None else "no crash log could be written"
    lines = [f"owltui: internal error ({what}); {where}"]
    if crash.unsent:
        lines += ["owltui: not sent (typed or queued when OwlTUI crashed):", *crash.unsent]
    return lines
