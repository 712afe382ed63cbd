"""``LoopConfig``: everything a feature chooses for its runs (prompt, tools, hooks and checks, limits)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from owltui.agent.context import Compactor
from owltui.agent.hooks import Directive, Expansion, Hooks, Permission, Refusal
from owltui.agent.messages import UserMessage
from owltui.agent.model import Model, ToolSpec
from owltui.agent.requirement import MAX_ESCALATIONS
from owltui.agent.results import ReadResult, ResultStore
from owltui.agent.services import Services
from owltui.agent.tool import Tool, tool_spec


@dataclass
class LoopConfig:
    """Everything a feature chooses. Only prompt, tools, hooks (and checks) and history differ."""

    model: Model
    system_prompt: str = ""
    tools: Sequence[Tool] = ()
    hooks: Hooks = field(default_factory=Hooks)
    max_rounds: int = 40
    # forced turns of a soft requirement, and a Stop hook's refusals, per turn (then the run ends)
    max_escalations: int = MAX_ESCALATIONS
    failure_limit: int = 5
    steering: Literal["batch", "immediate"] = "batch"
    follow_up_mode: Literal["one", "all"] = "one"  # follow-ups delivered per stop: the first, or all merged
    call_cap: int | None = None
    expand: Expansion | None = None
    refusals: Sequence[Refusal] = ()
    permission: Permission | None = None
    results: ResultStore | None = None
    workspace: Path = field(default_factory=Path.cwd)
    services: Services = field(default_factory=Services)
    time_limit: float | None = None
    name: str = "main"
    max_output_tokens: int | None = None
    # automatic compaction (``context.py``): on when both the window (tokens) and a compactor are set
    context_window: int | None = None
    compact_at: float = 0.8  # share of the window that triggers it
    compactor: Compactor | None = None
    compaction_confirm: bool = False  # close the pause gate before compacting: the user looks first
    # awaited just before a user prompt or a follow-up is delivered as a new turn (checkpoints); a
    # returned directive is applied there (its ``append`` is delivered with the prompt)
    before_user_turn: Callable[[UserMessage], Awaitable[Directive | None]] | None = None

    def __post_init__(self) -> None:
        self._specs: list[ToolSpec] | None = None
        self._by_name: dict[str, Tool] | None = None

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Change the tool list (between runs only: within a session every round sends one list)."""
        self.tools = tools
        self._by_name = None
        self._specs = None

    def all_tools(self) -> dict[str, Tool]:
        """The feature's tools plus ``read_result`` (any run carrying a tool can reread results)."""
        if self._by_name is None:
            tools: dict[str, Tool] = {t.name: t for t in self.tools}
            if tools and "read_result" not in tools:
                if self.results is None:
                    self.results = ResultStore()
                tools["read_result"] = ReadResult(self.results)
            self._by_name = tools
        return self._by_name

    def specs(self) -> list[ToolSpec]:
        """Tool specs sorted by name, computed once: the same list on every round."""
        if self._specs is None:
            self._specs = [tool_spec(t) for _, t in sorted(self.all_tools().items())]
        return self._specs
