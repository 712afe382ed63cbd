"""The built-in tool set, sorted by name (the loop adds ``read_result`` itself)."""

from __future__ import annotations

from collections.abc import Iterable

from owltui.agent.tool import Tool
from owltui.tools.exec.bash import BashTool
from owltui.tools.files.tools import EditTool, ReadTool, WriteTool
from owltui.tools.jobs.tools import JobKillTool, JobOutputTool
from owltui.tools.search.tools import FindTool, GrepTool, LsTool

TOOL_CLASSES: tuple[type, ...] = (
    BashTool,
    EditTool,
    FindTool,
    GrepTool,
    JobKillTool,
    JobOutputTool,
    LsTool,
    ReadTool,
    WriteTool,
)


def builtin_tools(names: Iterable[str] | None = None, *, read_only: bool = False) -> list[Tool]:
    """New instances of the built-in tools, sorted by name. ``names`` picks a subset (unknown names
    raise ValueError); ``read_only`` keeps only tools that change nothing."""
    tools: list[Tool] = [cls() for cls in TOOL_CLASSES]
    if names is not None:
        wanted = set(names)
        unknown = wanted - {t.name for t in tools}
        if unknown:
            raise ValueError(f"unknown tool(s): {', '.join(sorted(unknown))}")
        tools = [t for t in tools if t.name in wanted]
    if read_only:
        tools = [t for t in tools if t.read_only]
    return sorted(tools, key=lambda t: t.name)
