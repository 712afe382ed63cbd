"""Tool sources: where a session's tools come from, each with a start/close life cycle.

A source hands the runtime its tools once, before the first request (the tool list is fixed for a
session so every request keeps the cached prefix), is started in the runtime's task group (an MCP
source connects its servers there, in the background) and closed when the runtime closes. The
built-in tools and the ``task`` subagent are the first two sources; MCP servers are the next.
After that first list, MCP is the one source whose tools change (``follow_mcp``): a server approved
later, or one whose list changed, joins at a turn boundary, never within a run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from owltui.agent.model import Model
from owltui.agent.tool import Tool

if TYPE_CHECKING:
    from owltui.agent.agent import Agent
    from owltui.tools.mcp.source import McpSource


@runtime_checkable
class ToolSource(Protocol):
    """A named provider of tools with a life cycle."""

    name: str

    def tools(self) -> Sequence[Tool]:
        """The source's tools; called once, before the first request."""
        ...

    async def start(self) -> None:
        """Connect or prepare; runs in the runtime's task group, off the start-up path."""
        ...

    async def aclose(self) -> None:
        """Release processes and connections; idempotent."""
        ...


class StaticSource:
    """Tools that need no life cycle: the built-ins, or a fixed list (tests)."""

    def __init__(self, name: str, tools: Sequence[Tool]) -> None:
        self.name = name
        self._tools = list(tools)

    def tools(self) -> Sequence[Tool]:
        return self._tools

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def builtin_source(edit_tool: str = "edit") -> StaticSource:
    """The built-in tools, with ``edit_tool`` (``edit`` or ``apply_patch``) as the edit tool."""
    from owltui.tools.registry import builtin_tools

    return StaticSource("builtin", builtin_tools(edit_tool=edit_tool))


def task_source(model: Callable[[], Model], base: Sequence[Tool], workspace: Path) -> StaticSource:
    """The ``task`` subagent: a researcher with the read-only subset of ``base``, on the runtime's
    current model."""
    from owltui.features.subagent import TaskTool

    return StaticSource("task", [TaskTool(model, base, workspace)])


def collect_tools(sources: Sequence[ToolSource]) -> list[Tool]:
    """Every source's tools, sorted by name; two tools with one name are a configuration error."""
    tools: dict[str, Tool] = {}
    for source in sources:
        for tool in source.tools():
            if tool.name in tools:
                raise ValueError(f"two tools are named {tool.name!r} (the second from {source.name})")
            tools[tool.name] = tool
    return [tools[name] for name in sorted(tools)]


def follow_mcp(agent: Agent, mcp: McpSource, sources: Sequence[ToolSource]) -> None:
    """From now on, when ``mcp`` says its tools changed, take the tool list again when no run is
    going: at once, or when the current run ends (every request of a turn carries one list)."""
    if mcp.on_change is not None:
        return

    def changed() -> None:
        if not agent.running and mcp.refresh():
            agent.config.set_tools(collect_tools(sources))

    mcp.on_change = changed
    agent.on_running(lambda running: None if running else changed())
