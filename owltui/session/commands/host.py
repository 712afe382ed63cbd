"""The two sides a command acts on: the ``Host`` (the runtime: agent, inbox, gate, requirement,
approvals, sessions) and the ``Frontend`` that typed it (the TUI, plain mode, RPC).

``Host`` declares everything the commands and the front ends use of a runtime. A service one host
lacks is said in its type - an Optional member (``checkpoints``, ``mcp``, ``jobs``, ...) or a method
that raises ``Unavailable`` - so a missing capability is a type error, never a silent probe.
``owltui.session.runtime.runtime.Runtime`` is the real host; ``owltui.testing.host.LocalRuntime``
is a bare one for tests and benches (no session, jobs, checkpoints, MCP or model switching).
``LineFront`` is what plain mode and RPC share of a ``Frontend``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from owltui.agent.agent import Agent
from owltui.agent.events import Emitter
from owltui.agent.inbox import Inbox
from owltui.agent.pause import PauseGate
from owltui.agent.requirement import RequirementSlot
from owltui.session.approvals import ApprovalBroker
from owltui.session.stats import RunStats
from owltui.session.store.sessions import SessionInfo

if TYPE_CHECKING:
    from owltui.features.skills.discovery import SkillSet
    from owltui.policy.permissions.policy import PermissionPolicy
    from owltui.session.checkpoints.rewind import Checkpointing
    from owltui.session.input.mention_completion import MentionCompleter
    from owltui.session.plans import PlanBroker
    from owltui.session.store.store import SessionStore
    from owltui.tools.exec.freeze import Freezer
    from owltui.tools.jobs.manager import JobManager
    from owltui.tools.mcp.source import McpSource


class PromptHistory(Protocol):
    """What the user typed before (Up / Down, Ctrl+R): ``owltui.session.input.history.InputHistory``
    or one kept in memory."""

    def entries(self) -> list[str]:
        """Every kept entry, oldest first."""
        ...

    def add(self, text: str) -> bool:
        """Remember ``text``; False when nothing was added."""
        ...

    def search(self, substring: str, limit: int | None = None) -> list[str]:
        """Entries containing ``substring`` (case-insensitive), newest first, each once."""
        ...


@dataclass(frozen=True)
class ModelSources:
    """Where ``/model``'s picker looks for models to offer: ``env`` (the providers with a key, and
    ``OPENAI_BASE_URL``) and the base URLs this run was given (``--base-url``, config ``base_url``),
    in that order."""

    env: Mapping[str, str]
    base_urls: tuple[str, ...] = ()


class Host(Protocol):
    """What the commands and the front ends use of a runtime."""

    # ---- the agent and what surrounds it ---------------------------------------------------
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

    @property
    def workspace(self) -> Path: ...

    @property
    def input_history(self) -> PromptHistory: ...

    @property
    def mentions(self) -> MentionCompleter:
        """Completion for ``@path`` over the workspace's files."""
        ...

    @property
    def bash_output_lines(self) -> int:
        """How many first lines of a finished bash call a front end draws under its folded block
        (config ``bash_output_lines``; 0: none)."""
        ...

    # ---- services a host may lack (None: this host has none) ---------------------------------
    @property
    def store(self) -> SessionStore | None:
        """The session's file (None: nothing is saved, ``--no-session``)."""
        ...

    @property
    def checkpoints(self) -> Checkpointing | None:
        """Checkpoints before each user turn (None: not taken)."""
        ...

    @property
    def mcp(self) -> McpSource | None:
        """The MCP servers' tool source (None: no server is configured)."""
        ...

    @property
    def jobs(self) -> JobManager | None:
        """The background jobs (None: this host starts none)."""
        ...

    @property
    def freezer(self) -> Freezer | None:
        """What stops tool processes while the gate is closed (None: a pause only parks)."""
        ...

    @property
    def model_sources(self) -> ModelSources | None:
        """Where ``/model`` finds models to switch to (None: this host switches none)."""
        ...

    @property
    def skills(self) -> SkillSet | None:
        """The skills found at start (``owltui.features.skills``; None: this host has none)."""
        ...

    @property
    def permissions(self) -> PermissionPolicy | None:
        """The permission policy, whose mode ``/mode`` sets (None: this host asks nothing)."""
        ...

    @property
    def plans(self) -> PlanBroker | None:
        """The permission mode's switch and plan mode's question (None: this host has no policy)."""
        ...

    # ---- verbs -------------------------------------------------------------------------------
    def tool_names(self) -> list[str]: ...

    def require(self, tool: str, reason: str = "") -> None: ...

    def pause(self, freeze: bool | None = None) -> bool:
        """Close the gate; ``freeze`` None: as the host is configured. False when already closed."""
        ...

    def set_model(self, spec: str) -> None:
        """Switch model from the next call on; raises ``Unavailable`` or a one-sentence error."""
        ...

    def new_session(self) -> None:
        """A fresh conversation (the caller checked that no run is going)."""
        ...

    def switch_session(self, target: str) -> None:
        """Continue saved session ``target`` here; raises ``Unavailable`` or a one-sentence error."""
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

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]], name: str = "") -> bool:
        """Run ``fn`` in the host's task group, past the reply that started it. False: not run
        (this host runs nothing in the background, or it is not started or already closed)."""
        ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> Any: ...


def host_state(host: Host) -> dict[str, Any]:
    """The ``get_state`` payload (running, paused, queue, session, model), plus requirement, pending
    approvals, running jobs and the session's usage (from ``stats``): ``Runtime.state()`` and the
    bare hosts' too."""
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
        "permission_mode": host.permissions.mode if host.permissions is not None else None,
        "plans": [p.call_id for p in host.plans.pending()] if host.plans is not None else [],
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
