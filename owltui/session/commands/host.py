"""The two sides a command acts on: the ``Host`` (the runtime: agent, inbox, gate, requirement,
approvals, sessions) and the ``Frontend`` that typed it (the TUI, plain mode, RPC).

``owltui.session.runtime.runtime.Runtime`` is the real host; ``owltui.testing.host.LocalRuntime``
is a bare one for tests and benches, whose optional services (switching models, compaction) raise
``Unavailable``.
``LineFront`` is what plain mode and RPC share of a ``Frontend``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from types import TracebackType
from typing import Any, Protocol

from owltui.agent.agent import Agent
from owltui.agent.events import Emitter
from owltui.agent.inbox import Inbox
from owltui.agent.pause import PauseGate
from owltui.agent.requirement import RequirementSlot
from owltui.session.approvals import ApprovalBroker
from owltui.session.stats import RunStats
from owltui.session.store.sessions import SessionInfo


class Host(Protocol):
    """What the commands and the front ends use of a runtime."""

    @property
    def agent(self) -> Agent: ...

    @property
    def emitter(self) -> Emitter: ...

    @property
    def inbox(self) -> Inbox: ...

    @property
    def gate(self) -> PauseGate: ...

    @property
    def requirement(self) -> RequirementSlot: ...

    @property
    def approvals(self) -> ApprovalBroker: ...

    @property
    def stats(self) -> RunStats: ...

    @property
    def model_label(self) -> str: ...

    @property
    def session_id(self) -> str | None: ...

    def tool_names(self) -> list[str]: ...

    def require(self, tool: str, reason: str = "") -> None: ...

    def set_model(self, spec: str) -> None:
        """Switch model from the next call on; raises ``Unavailable`` or a one-sentence error."""
        ...

    def new_session(self) -> None:
        """A fresh conversation (the caller checked that no run is going)."""
        ...

    def compact(self) -> Awaitable[str]:
        """Summarise the conversation when awaited; may raise ``Unavailable`` at once."""
        ...

    def saved_sessions(self) -> list[SessionInfo]:
        """This directory's saved sessions, newest first."""
        ...

    def state(self) -> dict[str, Any]:
        """The ``get_state`` payload."""
        ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> Any: ...


def host_state(host: Host) -> dict[str, Any]:
    """The ``get_state`` payload (CONTRACTS section 2), plus requirement, pending approvals, running
    jobs and the session's usage (from ``stats``): ``Runtime.state()`` and the bare hosts' too."""
    req = host.requirement.current
    stats = host.stats
    return {
        "running": host.agent.running,
        "paused": host.gate.paused,
        "queue": host.inbox.snapshot(),
        "session_id": host.session_id,
        "model": host.model_label,
        "requirement": req.tool if req is not None else None,
        "approvals": [p.call_id for p in host.approvals.pending()],
        "jobs": sorted(stats.jobs),
        "usage": stats.usage(),
        "rounds": stats.rounds,
    }


class Themes(Protocol):
    """A front end's themes (the TUI's): what ``/theme`` lists and sets."""

    def names(self) -> list[str]: ...

    @property
    def current(self) -> str: ...

    def use(self, name: str) -> None: ...


class Frontend(Protocol):
    """What a command needs of the front end that runs it."""

    @property
    def label(self) -> str:
        """How messages name it ("plain mode")."""
        ...

    @property
    def capabilities(self) -> frozenset[str]:
        """What it offers beyond the host (``"themes"``); a command that ``needs`` one is offered
        only where it is present."""
        ...

    @property
    def abort_key(self) -> str:
        """How the user aborts a run here, named in refusals ("Esc")."""
        ...

    @property
    def keys_help(self) -> str:
        """The keys, appended to ``/help``."""
        ...

    @property
    def themes(self) -> Themes | None: ...

    def quit(self) -> None:
        """End the front end (after the reply is shown)."""
        ...


class LineFront:
    """A front end that reads lines (plain mode, RPC): no themes; ``quit`` ends its loop (``done``).
    Subclasses name themselves (``label``, ``abort_key``, ``keys_help``)."""

    label = ""
    capabilities: frozenset[str] = frozenset()
    abort_key = ""
    keys_help = ""
    themes: Themes | None = None

    def __init__(self) -> None:
        self.done = False

    def quit(self) -> None:
        self.done = True
