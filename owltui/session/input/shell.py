"""``!command``: the user runs a shell command from the prompt; the model sees it with the next request.

The command runs exactly as the model's ``bash`` tool runs one (it *is* the bash tool, called with
the session's services): ``$SHELL -c`` in the workspace, in its own process group, under the
session's kernel sandbox with the scrubbed environment, output sanitised and scrubbed of secrets by
the redactor, and the bash tool's time cap (90 s). Two differences: a command still running at the
cap is killed rather than handed to the background jobs (nobody asked for a job), and the
permission rules are not consulted (they govern what the *model* may run; the user typed this one).
When the sandbox blocks it and the session can ask, the user is asked once whether to run it
outside, as for the model's calls.

What front ends see: the events of a tool call - ``tool_start``, ``tool_update`` (streamed output),
``tool_end`` - named ``bash`` with a ``call_id`` starting ``shell-`` and, on ``tool_end``,
``details.source == "user"``. No new event type: the TUI and plain mode draw it as a bash block.

What the model sees: one message, user-provided context, ``The user ran a shell command: $ cmd``
followed by the output as the bash tool would have returned it. When the agent is idle it is added
to the history (lane ``notice``, source ``shell``) and no model call starts: the next prompt carries
it. While a run goes it is queued in the aside lane (source ``shell``) and delivered at the run's
next poll point, as asides are.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, replace
from typing import Any

from owltui.agent.agent import Agent
from owltui.agent.cancel import CancelToken
from owltui.agent.events import Emitter, ToolEnd, ToolStart, ToolUpdate
from owltui.agent.messages import ToolStatus, UserMessage
from owltui.agent.tool import ToolContext, ToolError, ToolOutput

SOURCE = "shell"
CAP = 90.0  # seconds, the bash tool's default wait
PREFIX = "!"
_ids = itertools.count(1)


def shell_command(text: str) -> str | None:
    """The command of a ``!command`` line, None when the line is not one. ``!!text`` is not a
    command (it sends ``!text`` as a message, see ``unescape``)."""
    stripped = text.lstrip()
    if not stripped.startswith(PREFIX) or stripped.startswith(PREFIX * 2):
        return None
    return stripped[1:].strip()


def unescape(text: str) -> str:
    """A message starting ``!!`` is sent with one ``!`` less (``!!`` stands for a literal ``!``)."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith(PREFIX * 2) else text


def new_call_id() -> str:
    return f"shell-{next(_ids)}"


@dataclass
class ShellResult:
    call_id: str
    command: str
    output: str  # as the bash tool returned it (exit code and sandbox notes included)
    status: ToolStatus
    exit_code: int | None
    delivered: str  # "history" or "aside" (how the model gets it), "" when not delivered

    def summary(self) -> str:
        if self.status == "cancelled":
            return f"`{self.command}` was cancelled"
        if self.exit_code is None:
            return f"`{self.command}` failed: {self.output.splitlines()[0] if self.output else 'no output'}"
        return f"`{self.command}` exited {self.exit_code}"


def context_message(command: str, output: str) -> str:
    """What the model is given: the command and its output, as user-provided context."""
    return f"The user ran a shell command:\n$ {command}\n{output.rstrip()}"


def deliver_context(agent: Agent, text: str, source: str) -> str:
    """Give the model ``text`` as user-provided context with its next request. Idle: appended to the
    history (lane ``notice``), no run starts. Running: queued in the aside lane. Returns which."""
    if agent.running:
        agent.aside(text, source=source)
        return "aside"
    agent.history.append(UserMessage(text=text, lane="notice", source=source))
    return "history"


async def run_shell(
    agent: Agent,
    emitter: Emitter,
    command: str,
    *,
    call_id: str | None = None,
    cancel: CancelToken | None = None,
    cap: float = CAP,
    deliver: bool = True,
) -> ShellResult:
    """Run ``command`` for the user (see the module docstring) and hand the result to the model."""
    from owltui.tools.exec.bash import BashParams, BashTool

    call_id = call_id or new_call_id()
    cancel = cancel or CancelToken()
    services = replace(agent.config.services, jobs=None)

    def progress(text: str) -> None:
        emitter.emit(ToolUpdate(call_id=call_id, name="bash", text=text))

    ctx = ToolContext(
        workspace=agent.config.workspace, cancel=cancel, call_id=call_id, progress=progress, services=services
    )
    emitter.emit(ToolStart(call_id=call_id, name="bash", arguments={"command": command}))
    try:
        out = await BashTool().run(BashParams(command=command, timeout=cap), ctx)
    except ToolError as exc:
        out = ToolOutput(str(exc), is_error=True)
    except Exception as exc:  # a bug below: one sentence, never a dead front end
        out = ToolOutput(f"The command could not be run: {type(exc).__name__}: {exc}", is_error=True)
    if out.full_output is not None:  # the preview is what anyone gets; the whole output is not kept
        with contextlib.suppress(OSError):
            out.full_output.unlink()
    status: ToolStatus = "cancelled" if out.details.get("cancelled") else "error" if out.is_error else "ok"
    code = out.details.get("exit_code")
    exit_code = code if isinstance(code, int) else None
    details: dict[str, Any] = {"source": "user", "exit_code": exit_code}
    if out.details.get("sandbox_blocked"):
        details["sandbox_blocked"] = True
    emitter.emit(
        ToolEnd(
            call_id=call_id,
            name="bash",
            is_error=out.is_error,
            output=out.content,
            status=status,
            details=details,
        )
    )
    how = ""
    if deliver:
        text = context_message(command, out.content)
        redactor = services.redactor
        text = redactor.scrub(text) if redactor is not None else text  # the command too
        how = deliver_context(agent, text, SOURCE)
    return ShellResult(call_id, command, out.content, status, exit_code, how)
