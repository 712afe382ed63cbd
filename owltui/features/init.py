"""``/init``: write or update ``AGENTS.md`` from a look at the repository.

A feature on the same loop as chat, differing in its prompt, tools, checks and history:

- **prompt**: what a good ``AGENTS.md`` holds, and the current ``AGENTS.md`` when there is one (it
  is updated, not replaced blindly); a ``CLAUDE.md`` without an ``AGENTS.md`` is given as material;
- **tools**: the read-only ones (``read``, ``ls``, ``grep``, ``find``; the loop adds
  ``read_result``) and ``write`` - nothing that runs commands or edits other files;
- **checks** (refusals, before permission): ``read`` of one file at most ``READS_PER_FILE`` times
  (re-reading is the usual way such a run wanders), ``write`` only to ``AGENTS.md`` at the root and
  only once;
- **hooks**: after the write the tools go off for the closing sentence; a refused write (the user
  said no) ends the run; two rounds before the round limit the model is told to write and the next
  call is forced to ``write``;
- **history**: in memory; nothing of it joins the chat session.

The write goes through the session's permission policy like any other: in the default mode the user
is asked; with nobody to ask (print mode without ``--yes``) it is refused. Events go to the
session's emitter marked ``agent: "init"``, so front ends show the tool calls and the approval and
keep the run out of the main conversation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from owltui.agent.agent import Agent
from owltui.agent.cancel import CancelToken
from owltui.agent.config import LoopConfig
from owltui.agent.events import Emitter
from owltui.agent.hooks import Directive, Hooks, Permission, Refusal
from owltui.agent.messages import ToolCall, ToolResult, UserMessage
from owltui.agent.model import Model
from owltui.agent.pause import GATE, PauseGate
from owltui.agent.services import Services
from owltui.agent.state import RunState
from owltui.agent.tool import Tool
from owltui.features.instructions import read_start

NAME = "init"
TARGET = "AGENTS.md"
READ_TOOLS = ("find", "grep", "ls", "read")
WRITE_TOOL = "write"
READS_PER_FILE = 3
MAX_ROUNDS = 30
MAX_CURRENT_CHARS = 32_000

SYSTEM_PROMPT = """\
You are OwlTUI's /init. You write AGENTS.md: the file of instructions that coding agents read at the
start of every session in the repository at {workspace}.

First look at the repository with the read-only tools (ls, find, grep, read): the README, the build
and package files (pyproject.toml, package.json, Cargo.toml, go.mod, Makefile, ...), CI workflows,
linter and formatter configuration, the layout of the source and test directories, and existing
instructions for agents (CLAUDE.md, .cursorrules, .github/copilot-instructions.md). Read what you
need and no more: each file at most {reads} times. Do not run commands; you cannot.

Then call `write` once, with path "AGENTS.md" and the whole file. Keep it short (well under 150
lines) and specific to this repository:
- what the project is, in one or two sentences;
- the exact commands to set up, build, run all tests and a single test, lint, and format;
- the layout: the main directories and what lives in each;
- conventions a newcomer would get wrong (style, naming, error handling, tests, commits), as the
  code and configuration show them.
Write only what you found evidence for; no generic advice, no invented commands.
{current}
After the write, say in one or two sentences what the file covers.
"""

CURRENT = """
AGENTS.md already exists; its current text is below. Update it: keep what is still true and every
instruction a person wrote, correct what is out of date, add what is missing, and write the whole
updated file.

<current path="AGENTS.md">
{text}
</current>
"""

CLAUDE = """
There is no AGENTS.md, but CLAUDE.md holds instructions (below): carry over what applies.

<current path="CLAUDE.md">
{text}
</current>
"""

TASK = "Look at this repository and write AGENTS.md for it."
WRITE_NOW = (
    "You are close to the round limit: stop exploring and write AGENTS.md now with what you have found."
)


@dataclass
class InitOutcome:
    written: bool
    path: Path
    reason: str  # the run's end reason, or why nothing was written
    text: str = ""  # the closing answer
    lines: int = 0
    updated: bool = False  # AGENTS.md existed before

    def summary(self) -> str:
        if self.written:
            verb = "updated" if self.updated else "wrote"
            return f"/init {verb} {TARGET} ({self.lines} lines)"
        return f"/init did not write {TARGET}: {self.reason}"


def _current(path: Path) -> str | None:
    text = read_start(path, MAX_CURRENT_CHARS)
    if text is None:
        return None
    return text[:MAX_CURRENT_CHARS] + ("\n[… cut]" if len(text) > MAX_CURRENT_CHARS else "")


def system_prompt(workspace: Path, reads: int = READS_PER_FILE) -> str:
    current = ""
    agents = _current(workspace / TARGET)
    if agents is not None:
        current = CURRENT.format(text=agents.strip())
    else:
        claude = _current(workspace / "CLAUDE.md")
        if claude is not None and claude.strip():
            current = CLAUDE.format(text=claude.strip())
    return SYSTEM_PROMPT.format(workspace=workspace, reads=reads, current=current)


def init_tools(tools: Sequence[Tool]) -> list[Tool]:
    """The read-only tools and ``write`` out of a session's tools, sorted by name."""
    wanted = {*READ_TOOLS, WRITE_TOOL}
    return sorted((t for t in tools if t.name in wanted), key=lambda t: t.name)


def _normal(workspace: Path, raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    path = os.path.expanduser(raw)
    return os.path.normpath(path if os.path.isabs(path) else workspace / path)


class InitChecks:
    """The refusals and hooks of one ``/init`` run."""

    def __init__(self, workspace: Path, reads_per_file: int = READS_PER_FILE, max_rounds: int = MAX_ROUNDS):
        self.workspace = workspace
        self.target = os.path.normpath(workspace / TARGET)
        self.reads_per_file = reads_per_file
        self.max_rounds = max_rounds
        self.reads: dict[str, int] = {}
        self.written = False
        self.write_refused: str | None = None
        self._own: set[str] = set()  # calls refused by these checks (the model may try again)

    def refusal(self) -> Refusal:
        async def check(_state: RunState, call: ToolCall) -> str | None:
            why = self._check(call)
            if why is not None:
                self._own.add(call.id)
            return why

        return check

    def _check(self, call: ToolCall) -> str | None:
        if call.name == "read":
            key = _normal(self.workspace, call.arguments.get("path"))
            if key is None:
                return None
            if self.reads.get(key, 0) >= self.reads_per_file:
                return (
                    f"Refused: /init reads a file at most {self.reads_per_file} times and "
                    f"{call.arguments['path']} was read that often; use what you have read."
                )
            self.reads[key] = self.reads.get(key, 0) + 1
        elif call.name == WRITE_TOOL:
            if _normal(self.workspace, call.arguments.get("path")) != self.target:
                return f"Refused: /init writes only {TARGET} at the repository root."
            if self.written:
                return f"Refused: {TARGET} was written already; /init writes it once."
        return None

    def hooks(self) -> Hooks:
        async def after_tools(state: RunState, results: list[ToolResult]) -> Directive | None:
            writes = [r for r in results if r.name == WRITE_TOOL]
            if any(r.status == "ok" for r in writes):
                self.written = True
                return Directive(tools_off=True)
            refused = [r for r in writes if r.status == "refused" and r.call_id not in self._own]
            if refused:
                self.write_refused = refused[0].content
                return Directive(end_with=f"{TARGET} was not written: {refused[0].content}")
            if not self.written and state.round >= self.max_rounds - 2:
                return Directive(
                    force_tool=WRITE_TOOL,
                    append=[UserMessage(text=WRITE_NOW, lane="notice", source="system")],
                )
            return None

        return Hooks(after_tools=after_tools)


def init_config(
    model: Model,
    tools: Sequence[Tool],
    workspace: Path,
    *,
    permission: Permission | None,
    services: Services | None = None,
    checks: InitChecks | None = None,
    max_rounds: int = MAX_ROUNDS,
) -> LoopConfig:
    """The loop configuration of ``/init``."""
    checks = checks or InitChecks(workspace, max_rounds=max_rounds)
    return LoopConfig(
        model=model,
        system_prompt=system_prompt(workspace, checks.reads_per_file),
        tools=init_tools(tools),
        hooks=checks.hooks(),
        refusals=[checks.refusal()],
        max_rounds=max_rounds,
        permission=permission,
        workspace=workspace,
        services=services if services is not None else Services(),
        name=NAME,
    )


def _lines(path: Path) -> int:
    try:
        return len(path.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return 0


async def run_init(
    model: Model,
    tools: Sequence[Tool],
    workspace: Path,
    *,
    permission: Permission | None,
    services: Services | None = None,
    emitter: Emitter | None = None,
    gate: PauseGate = GATE,
    cancel: CancelToken | None = None,
    max_rounds: int = MAX_ROUNDS,
) -> InitOutcome:
    """One ``/init`` run to its end. ``cancel`` aborts it (the write, if it already asked, is withdrawn)."""
    target = workspace / TARGET
    existed = target.is_file()
    checks = InitChecks(workspace, max_rounds=max_rounds)
    config = init_config(
        model,
        tools,
        workspace,
        permission=permission,
        services=services,
        checks=checks,
        max_rounds=max_rounds,
    )
    agent = Agent(config, emitter=emitter, gate=gate)
    async with anyio.create_task_group() as tg:
        if cancel is not None:

            async def watch() -> None:
                await cancel.wait()
                agent.abort()

            tg.start_soon(watch)
        outcome = await agent.run(TASK)
        tg.cancel_scope.cancel()
    if checks.written:
        return InitOutcome(True, target, outcome.reason, outcome.text, _lines(target), existed)
    if checks.write_refused is not None:
        why = checks.write_refused
    elif outcome.reason == "done":
        why = "the model finished without writing it"
    else:
        why = f"the run ended ({outcome.reason}{': ' + outcome.error if outcome.error else ''})"
    return InitOutcome(False, target, why, outcome.text, 0, existed)
