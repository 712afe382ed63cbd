"""The built-in tool set, sorted by name (the loop adds ``read_result`` itself)."""

from __future__ import annotations

from collections.abc import Iterable

from owltui.agent.tool import Tool
from owltui.tools.exec.bash import BashTool
from owltui.tools.files.tools import EditTool, ReadTool, WriteTool
from owltui.tools.jobs.tools import JobKillTool, JobOutputTool
from owltui.tools.patch.tool import ApplyPatchTool
from owltui.tools.plan.exit_plan import ExitPlanTool
from owltui.tools.plan.todo import TodoTool
from owltui.tools.search.tools import FindTool, GrepTool, LsTool
from owltui.tools.web.fetch import FetchTool

TOOL_CLASSES: tuple[type, ...] = (
    BashTool,
    EditTool,
    ExitPlanTool,
    FetchTool,
    FindTool,
    GrepTool,
    JobKillTool,
    JobOutputTool,
    LsTool,
    ReadTool,
    TodoTool,
    WriteTool,
)


EDIT_TOOL_CLASSES: dict[str, type] = {"edit": EditTool, "apply_patch": ApplyPatchTool}  # one is offered


def builtin_tools(
    names: Iterable[str] | None = None, *, read_only: bool = False, edit_tool: str = "edit"
) -> list[Tool]:
    """New instances of the built-in tools, sorted by name. ``names`` picks a subset (unknown names
    raise ValueError); ``read_only`` keeps only tools that change nothing; ``edit_tool`` is the edit
    tool offered (``edit``, or ``apply_patch`` in its place: the catalog's choice for a model family)."""
    if edit_tool not in EDIT_TOOL_CLASSES:
        raise ValueError(f"unknown edit tool {edit_tool!r}; expected one of {', '.join(EDIT_TOOL_CLASSES)}")
    classes = [EDIT_TOOL_CLASSES[edit_tool] if cls is EditTool else cls for cls in TOOL_CLASSES]
    tools: list[Tool] = [cls() for cls in classes]
    if names is not None:
        wanted = set(names)
        if wanted & set(EDIT_TOOL_CLASSES):  # either edit tool names the one this session offers
            wanted |= {edit_tool}
        unknown = wanted - {t.name for t in tools} - set(EDIT_TOOL_CLASSES)
        if unknown:
            raise ValueError(f"unknown tool(s): {', '.join(sorted(unknown))}")
        tools = [t for t in tools if t.name in wanted]
    if read_only:
        tools = [t for t in tools if t.read_only]
    return sorted(tools, key=lambda t: t.name)
