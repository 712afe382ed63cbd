"""``Services``: what the host lends a running tool beside the workspace (``ToolContext.services``).

One typed, optional field per service; a host that lacks one leaves it ``None`` and the tool works
without it (no sandbox: the default policy; no job manager: a command at its cap is killed). The
object is frozen: a variant is made with ``dataclasses.replace`` (the user's ``!`` commands get the
session's services without the job manager).

The implementations live above this layer (the sandbox and permissions in ``owltui.policy``, the job
manager and the freezer in ``owltui.tools``, the redactor in ``owltui.session``), so each field is
typed with a protocol saying what the tools call on it. The processes and jobs the job manager and
the freezer take and give are the tools' own types, which this layer cannot name: they are ``Any``
here, and the tools annotate what they get back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from owltui.agent.events import Emitter
from owltui.agent.messages import ToolCall
from owltui.agent.todo import TodoBoard

ReadFilter = Callable[[Path], str | None]  # the refusal when [deny] read covers the path, else None
SandboxRerun = Callable[[str, str, str], Awaitable[bool]]  # (call_id, command, reason) -> the user agreed


class Sandbox(Protocol):
    """How the processes tools start are confined (``owltui.policy.sandbox.kernel.SandboxPolicy``)."""

    @property
    def enforced(self) -> bool: ...

    def child_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]: ...

    def preexec(self, cwd: Path | str) -> Callable[[], None] | None: ...

    def explain(self, output: str, cwd: Path | str | None = None) -> str | None: ...


class Scrubber(Protocol):
    """Masks the session's secrets in command output (``owltui.session.redact.Redactor``)."""

    @property
    def longest(self) -> int: ...

    def scrub(self, text: str) -> str: ...


class PermissionChecker(Protocol):
    """The session's permission policy (``owltui.policy.permissions.policy.PermissionPolicy``):
    subagents run under its check."""

    async def check(self, call: ToolCall, read_only: bool) -> str | None: ...


class BackgroundJobs(Protocol):
    """The job manager (``owltui.tools.jobs.manager.JobManager``): adopts commands that outlive their
    call, lists what they leave running, finds and kills jobs by id."""

    @property
    def spill_dir(self) -> Path: ...
    @property
    def clock(self) -> Callable[[], float]: ...

    def watch(self, proc: Any) -> None: ...

    def adopt(self, proc: Any) -> Any: ...

    def collect_escaped(self, proc: Any) -> list[Any]: ...

    def get(self, job_id: str) -> Any: ...

    def describe(self) -> str: ...

    async def kill(self, job_id: str) -> Any: ...


class CommandFreezer(Protocol):
    """Stops running commands while the pause gate is closed (``owltui.tools.exec.freeze.Freezer``);
    its clock stands still meanwhile."""

    def clock(self) -> float: ...

    def command(self, proc: Any) -> AbstractContextManager[None]: ...

    def group(self, pgid: int) -> AbstractContextManager[None]: ...


class EditorWrites(Protocol):
    """Writes a file through the editor the session runs in (ACP's ``fs/write_text_file``), so the
    editor's review sees the change. ``write`` is True when the editor took it; the file tools check
    the bytes on disk afterwards and write the file themselves when it failed or they differ."""

    async def write(self, path: Path, text: str) -> bool: ...


class ImageInput(Protocol):
    """Whether the session's model accepts images now (``/model`` may switch it mid-session)."""

    def image_refusal(self) -> str | None:
        """None when the current model accepts images, else the line the model or user gets."""
        ...


@dataclass(frozen=True)
class PlanAnswer:
    """The user's answer to a plan: ``decision`` ``accept`` (``mode`` is the mode now), ``refine``
    (``text`` steers the plan) or ``reject``; ``unanswerable``: nobody can answer here (print mode)."""

    decision: str
    mode: str = ""
    text: str = ""


class PlanReview(Protocol):
    """Plan mode (``owltui.session.plans.PlanBroker``): whether the session is in it, and the user's
    answer to a plan the model presents (``exit_plan``)."""

    @property
    def active(self) -> bool: ...

    async def propose(self, call_id: str, plan: str) -> PlanAnswer: ...


@dataclass(frozen=True, kw_only=True)
class Services:
    """The services of one session (all optional). ``emitter``: subagents report through it;
        ``sandbox`` and ``redactor``: the processes tools start; ``sandbox_rerun``: asks the user whether a
        command the sandbox blocked may run once outside it (interactive sessions only); ``permissions``:
        subagents run under it; ``read_filter``: read/grep/find leave denied files out; ``jobs`` and
        ``freezer``: background jobs and pausing the processes tools run; ``editor``: ``write`` and
        ``edit`` put files through the editor the session runs in; ``todo``: the session's todo list (the
        ``todo`` tool writes it); ``images``: whether the model accepts images (``read`` of an image file,
    ``@`` mentions; without it images are attached)."""

    emitter: Emitter | None = None
    sandbox: Sandbox | None = None
    sandbox_rerun: SandboxRerun | None = None
    redactor: Scrubber | None = None
    permissions: PermissionChecker | None = None
    read_filter: ReadFilter | None = None
    jobs: BackgroundJobs | None = None
    freezer: CommandFreezer | None = None
    editor: EditorWrites | None = None
    plans: PlanReview | None = None
    todo: TodoBoard | None = None
    images: ImageInput | None = None
