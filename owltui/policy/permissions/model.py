"""The words of the permission policy: modes, answers, the verdict on a call, which tools are free.

Shared by the policy (``permissions``) and the bash review (``permission_bash``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

from owltui.agent.messages import ToolCall

Mode = Literal["ask", "edits", "yolo", "read-only", "plan"]
MODES: tuple[str, ...] = get_args(Mode)
Answer = Literal["allow", "deny", "always"]
Ask = Callable[[ToolCall, str], Awaitable[Answer]]

FREE_TOOLS = frozenset({"read", "ls", "grep", "find", "read_result", "job_output", "job_kill", "exit_plan"})
EDIT_TOOLS = frozenset({"write", "edit", "apply_patch"})
READ_TOOLS = frozenset({"read", "grep", "find"})
PLAN_REFUSAL = (
    "Refused: OwlTUI is in plan mode, so {name} cannot run. Only reading tools run until the user "
    "accepts a plan: finish looking around, then present your plan with the exit_plan tool."
)


@dataclass
class Review:
    """The policy's verdict on a call before anyone is asked.

    ``decision``: ``allow`` (runs), ``refuse`` (``reason`` is the refusal) or ``ask`` (``reason`` says
    what needs approval). ``forced``: it asks whatever the mode (protected path, possible denied
    command, no sandbox). ``notes``: why the rules could not decide. ``rules``: what "always" would
    save (empty: nothing can be saved; "always" then allows this call once). ``protected``: why the
    path is protected configuration, if it is. ``outside_roots``: where a write would land (symlinks
    followed) when that is outside the sandbox's writable roots."""

    decision: Literal["allow", "ask", "refuse"]
    reason: str = ""
    forced: bool = False
    notes: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    protected: str | None = None
    outside_roots: str | None = None
