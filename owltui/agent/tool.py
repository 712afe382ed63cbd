"""The tool protocol the loop runs: a name, a description, a pydantic parameter model, ``run``.

Concrete tools live in ``owltui.tools``; the loop knows only this protocol. ``ToolContext`` is what
a running tool may use: the workspace root, the cancellation token, a progress callback (streamed
output for the UI), and the services the host lends it (``owltui.agent.services.Services``: the
sandbox, the job manager, ...).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.to_thread
from pydantic import BaseModel

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ImageRef
from owltui.agent.model import ToolSpec
from owltui.agent.services import Services

Progress = Callable[[str], None]


@dataclass
class ToolOutput:
    """What a tool returns. ``full_output`` names a file holding the whole output when the tool
    spilled it to disk itself (so a 100 MB command never sits in memory); ``content`` is then a
    preview and the loop's large-result rule takes the file over. ``full_output_lines`` is that
    file's line count when the tool kept it as it wrote (its newlines, plus an unfinished last
    line): the preview then never reads the whole file back to count.

    ``details`` keys the loop reads (the rest is for front ends, on ``tool_end``):

    - ``"status"`` (str): how the tool's work ended, in a few words - "exit code 3", "killed after
      90 s", "still running as job 4". When the output is saved as a large result, the model gets
      the preview and then ``[status: …]``, so a spill never hides it (``is_error`` is kept too).
    - ``"no_spill"`` (bool): the content is a page already within the large-result limits (``read``,
      ``read_result``); without ``full_output`` it is never saved as a large result again.

    ``images`` go with the result to the model (``read`` of an image file)."""

    content: str
    is_error: bool = False
    images: tuple[ImageRef, ...] = ()
    full_output: Path | None = None
    full_output_lines: int | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolContext:
    workspace: Path
    cancel: CancelToken
    call_id: str = ""
    progress: Progress = lambda _text: None
    services: Services = field(default_factory=Services)


@runtime_checkable
class Tool(Protocol):
    """What the loop reads of a tool. The four attributes are read-only, so a tool may declare them
    as ``ClassVar``s (most built-ins), plain instance attributes or properties."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def params(self) -> type[BaseModel]: ...
    @property
    def read_only(self) -> bool: ...

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


def tool_spec(tool: Tool) -> ToolSpec:
    schema = tool.params.model_json_schema()
    schema.pop("title", None)
    return ToolSpec(name=tool.name, description=tool.description, parameters=schema)


class ToolError(Exception):
    """Raised by a tool for an expected failure; becomes an error result with this message."""


T = TypeVar("T")


async def in_thread(fn: Callable[[threading.Event], T], ctx: ToolContext) -> T:
    """Run blocking work in a worker thread; a cancelled call (scope or token) sets the event the
    work checks, and the call returns at once. The work's exceptions come through unchanged."""
    stop = threading.Event()
    result: list[T] = []
    failure: list[Exception] = []
    try:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                await ctx.cancel.wait()
                stop.set()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            try:
                result.append(await anyio.to_thread.run_sync(fn, stop, abandon_on_cancel=True))
            except Exception as exc:
                failure.append(exc)
            tg.cancel_scope.cancel()
    finally:
        stop.set()
    if failure:
        raise failure[0]
    if not result:
        raise ToolError("Cancelled.")
    return result[0]
