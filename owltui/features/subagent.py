"""Subagents: the ``task`` tool runs a researcher on the same loop with read-only tools.

A researcher differs from chat only in its prompt, its tools (the read-only ones), its hooks
(stop repeating searches) and its history (an in-memory list). Its events go to the parent's emitter
(``ctx.services.emitter``) marked with its name (``agent: "task-N"``). It shares the process-wide pause
gate, so /pause freezes it too, and the parent's cancellation reaches it because it runs inside
the parent's tool call. Read-only, so several tasks in one batch run concurrently.

It runs under the parent's permission policy (``permission``, else the ``permissions`` service of
the parent's tool context): the parent's deny rules, read-only mode and read filters bind it too.
The parent's services (the sandbox, the ``read_filter``, jobs) pass through unchanged.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.events import Event, ToolStart
from owltui.agent.hooks import Directive, Hooks, Permission
from owltui.agent.messages import ToolResult, UserMessage
from owltui.agent.model import Model
from owltui.agent.pause import GATE, PauseGate
from owltui.agent.state import RunState
from owltui.agent.tool import Tool, ToolContext, ToolOutput

RESEARCHER_PROMPT = """\
You are a research subagent of OwlTUI working in the repository at {workspace}. You cannot see the
conversation that started you: everything you know is the task below. Use your read-only tools to
find the answer, then reply with a concise, self-contained report (file paths with line numbers,
the facts found, what remains uncertain). Do not ask questions; do not repeat the same search.
"""

STALE_ROUNDS = 2
_ids = itertools.count(1)


class TaskParams(BaseModel):
    prompt: str = Field(
        description="The complete task for the subagent. It cannot see this conversation, "
        "so include every detail it needs."
    )
    description: str = Field("", description="A 3-5 word label shown to the user.")


def researcher_hooks() -> Hooks:
    """Researchers stop when consecutive rounds only return results already seen."""

    async def after_tools(state: RunState, results: list[ToolResult]) -> Directive | None:
        if state.stale_rounds >= STALE_ROUNDS:
            return Directive(
                tools_off=True,
                append=[
                    UserMessage(
                        text=(
                            "Your last searches only returned results you had already seen. "
                            "Stop searching and write your report now."
                        ),
                        lane="notice",
                        source="system",
                    )
                ],
            )
        return None

    return Hooks(after_tools=after_tools)


class TaskTool:
    name: ClassVar[str] = "task"
    description: ClassVar[str] = (
        "Start a subagent that researches a question with read-only tools (read, grep, find, ls) and "
        "returns a report. Use it for broad searches whose intermediate results you do not need; "
        "several task calls in one response run at the same time. It waits for the report."
    )
    params: ClassVar[type[BaseModel]] = TaskParams
    read_only: ClassVar[bool] = True

    def __init__(
        self,
        model: Callable[[], Model],
        tools: Sequence[Tool],
        workspace: Path,
        *,
        gate: PauseGate = GATE,
        max_rounds: int = 20,
        permission: Permission | None = None,
    ) -> None:
        self._model = model
        self._tools = [t for t in tools if t.read_only and t.name not in ("task", "todo", "exit_plan")]
        self._workspace = workspace
        self._gate = gate
        self._max_rounds = max_rounds
        self._permission = permission
        # given each subagent's loop configuration before it runs (the session adds the user's hooks)
        self.configure: Callable[[LoopConfig], object] | None = None

    def _policy(self, ctx: ToolContext) -> Permission | None:
        """The parent's permission check: the one given, else the parent's ``permissions`` service."""
        if self._permission is not None:
            return self._permission
        policy = ctx.services.permissions
        return policy.check if policy is not None else None

    async def run(self, args: TaskParams, ctx: ToolContext) -> ToolOutput:
        name = f"task-{next(_ids)}"
        prompt = RESEARCHER_PROMPT.format(workspace=self._workspace)
        config = LoopConfig(
            model=self._model(),
            system_prompt=prompt,
            tools=self._tools,
            hooks=researcher_hooks(),
            max_rounds=self._max_rounds,
            permission=self._policy(ctx),
            workspace=self._workspace,
            services=ctx.services,
            name=name,
        )
        if self.configure is not None:
            self.configure(config)
        child = Agent(config, gate=self._gate)
        parent = ctx.services.emitter
        if parent is not None:  # front ends see the subagent's events, marked with its name
            child.emitter.subscribe(parent.emit)

        def progress(ev: Event) -> None:
            if isinstance(ev, ToolStart):
                summary = ", ".join(f"{k}={str(v)[:60]}" for k, v in ev.arguments.items())
                ctx.progress(f"[{name}] {ev.name} {summary}\n")

        child.emitter.subscribe(progress)
        outcome = await child.run(args.prompt)
        if outcome.reason in ("done", "round_limit", "failure_limit") and outcome.text.strip():
            return ToolOutput(outcome.text, details={"rounds": outcome.rounds, "reason": outcome.reason})
        return ToolOutput(
            f"The subagent ended without a report ({outcome.reason}"
            f"{': ' + outcome.error if outcome.error else ''}).",
            is_error=True,
        )
