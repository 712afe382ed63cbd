"""Chat: the interactive feature. A system prompt, the built-in tools, default hooks, session history."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from owltui.agent.config import LoopConfig
from owltui.agent.hooks import Hooks, Permission
from owltui.agent.model import Model
from owltui.agent.results import ResultStore
from owltui.agent.services import Services
from owltui.agent.tool import Tool
from owltui.features.instructions import SubdirInstructions

SYSTEM_PROMPT = """\
You are OwlTUI, a coding agent working in a terminal, in the repository at {workspace} ({os}).
You help the user with software work by reading files, editing them and running commands through
your tools. Be direct and concise; show the important result, not every step.

- Read before you edit; make the smallest change that does the job; keep the project's style.
- `edit` needs `old_text` to match exactly once; read the file first when unsure.
- `bash` waits for the command to finish (up to its timeout), so call it once rather than polling.
  A command still running at its timeout becomes a background job; you will be told when it ends,
  and `job_output` waits for more output, so there is no need to check repeatedly.
- A result that was too large is saved; reread it with the exact `read_result` call it gives.
- Messages marked as steering come from the user while you work: take them into account at once.
- When you are done, say briefly what you changed and how you checked it.
"""


def system_prompt(workspace: Path, extra: str = "") -> str:
    text = SYSTEM_PROMPT.format(workspace=workspace, os=platform.system())
    return text + (f"\n{extra.strip()}\n" if extra.strip() else "")


def chat_config(
    model: Model,
    tools: Sequence[Tool],
    *,
    workspace: Path,
    permission: Permission | None = None,
    results: ResultStore | None = None,
    services: Services | None = None,
    max_rounds: int = 40,
    steering: Literal["batch", "immediate"] = "batch",
    hooks: Hooks | None = None,
    project_notes: str = "",
) -> LoopConfig:
    """The loop configuration for chat (also used by print mode, RPC and plain mode).

    ``project_notes`` (the project's instructions, see ``features.instructions``) end the system
    prompt; ``AGENTS.md`` files in subdirectories join the conversation when a file there is read."""
    hooks = hooks or Hooks()
    hooks.after_tools = SubdirInstructions(workspace.resolve()).hook(hooks.after_tools)
    return LoopConfig(
        model=model,
        system_prompt=system_prompt(workspace, project_notes),
        tools=tools,
        hooks=hooks,
        max_rounds=max_rounds,
        steering=steering,
        permission=permission,
        results=results,
        workspace=workspace,
        services=services if services is not None else Services(),
    )
