"""What the reaper reads and tells: a command as it sees it (``Origin``, a ``Proc``), a process
OwlTUI adopted from one (``Escapee``), and the listeners told of escapees found and ended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class Origin(Protocol):
    """What the reaper reads of a command (``Proc``)."""

    pid: int
    pgid: int
    command: str

    @property
    def shell_reaped(self) -> bool: ...


@dataclass
class Escapee:
    """A process OwlTUI adopted from one of its commands (``token``)."""

    pid: int
    start: int
    sid: int
    token: str
    command: str  # its own command line, from /proc
    origin_command: str  # the command it escaped from
    found: float  # time.time()
    exit_code: int | None = None
    ended: bool = False


Listener = Callable[[Escapee], None]
