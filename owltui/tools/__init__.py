"""Built-in tools (read, write, edit, bash, jobs, grep, find, ls) and the tool runtime around them:
background jobs, permissions, terminal-safe output."""

from owltui.tools.base import MAX_BYTES, MAX_LINES, describe_params, describe_tool
from owltui.tools.jobs import JobEvent, JobInfo, JobManager
from owltui.tools.permissions import Mode, PermissionPolicy
from owltui.tools.registry import builtin_tools
from owltui.tools.sanitize import StreamSanitizer, sanitize

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "JobEvent",
    "JobInfo",
    "JobManager",
    "Mode",
    "PermissionPolicy",
    "StreamSanitizer",
    "builtin_tools",
    "describe_params",
    "describe_tool",
    "sanitize",
]
