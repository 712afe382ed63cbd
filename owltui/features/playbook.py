"""Playbooks: a defined procedure run unattended, as one chat turn with a ``step_complete`` tool.

A playbook is a Markdown file: an optional ``---`` header of ``key: value`` lines (``time_limit``
like ``90m`` or ``2h``, ``max_rounds_per_step``), a ``# Title``, and steps — ``## `` headings, or a
top-level numbered list when there are no such headings. The feature differs from chat only in its
prompt (the procedure), one extra tool, and a before-yield hook that sends the agent back to work
while steps remain (a bounded number of times). Round limit: 40 × steps; time limit: 2 h by default.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from owltui.agent.hooks import Directive, Hooks
from owltui.agent.messages import UserMessage
from owltui.agent.state import RunState
from owltui.agent.tool import ToolContext, ToolError, ToolOutput

DEFAULT_TIME_LIMIT = 2 * 3600.0
ROUNDS_PER_STEP = 40
MAX_NUDGES = 3


class PlaybookError(ValueError):
    """A playbook file that cannot be run; the message is one sentence for the user."""


@dataclass
class PlaybookStep:
    title: str
    body: str = ""


@dataclass
class Playbook:
    title: str
    steps: list[PlaybookStep]
    time_limit: float = DEFAULT_TIME_LIMIT
    rounds_per_step: int = ROUNDS_PER_STEP
    preamble: str = ""

    @property
    def max_rounds(self) -> int:
        return self.rounds_per_step * len(self.steps)


def _duration(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*", text)
    if not m:
        raise PlaybookError(f"time_limit {text!r} is not a duration like 90s, 30m or 2h.")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def parse_playbook(text: str, name: str = "playbook") -> Playbook:
    lines = text.splitlines()
    meta: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise PlaybookError(f"{name}: the header starting with '---' is never closed.") from None
        for raw in lines[1:end]:
            if raw.strip():
                key, sep, value = raw.partition(":")
                if not sep:
                    raise PlaybookError(f"{name}: header line {raw.strip()!r} is not 'key: value'.")
                meta[key.strip().lower()] = value.strip()
        lines = lines[end + 1 :]
    title = name
    steps: list[PlaybookStep] = []
    preamble: list[str] = []
    headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
    if headings:
        for line in lines[: headings[0]]:
            if line.startswith("# ") and title == name:
                title = line[2:].strip()
            else:
                preamble.append(line)
        bounds = [*headings, len(lines)]
        for a, b in itertools.pairwise(bounds):
            steps.append(PlaybookStep(lines[a][3:].strip(), "\n".join(lines[a + 1 : b]).strip()))
    else:
        current: PlaybookStep | None = None
        for line in lines:
            m = re.match(r"^(\d+)[.)]\s+(.*)", line)
            if line.startswith("# ") and title == name and not steps:
                title = line[2:].strip()
            elif m:
                current = PlaybookStep(m.group(2).strip())
                steps.append(current)
            elif current is not None and (line.startswith((" ", "\t")) or not line.strip()):
                current.body = (current.body + "\n" + line.strip()).strip()
            elif current is None:
                preamble.append(line)
    if not steps:
        raise PlaybookError(f"{name}: no steps found (use '## Step' headings or a numbered list).")
    book = Playbook(title=title, steps=steps, preamble="\n".join(preamble).strip())
    if "time_limit" in meta:
        book.time_limit = _duration(meta["time_limit"])
    if "max_rounds_per_step" in meta:
        if not meta["max_rounds_per_step"].isdigit() or int(meta["max_rounds_per_step"]) < 1:
            raise PlaybookError(f"{name}: max_rounds_per_step must be a positive whole number.")
        book.rounds_per_step = int(meta["max_rounds_per_step"])
    return book


def load_playbook(path: Path) -> Playbook:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlaybookError(f"cannot read playbook {path}: {exc.strerror or exc}.") from None
    return parse_playbook(text, path.name)


@dataclass
class Progress:
    """Which steps are complete, with the agent's one-line summaries."""

    book: Playbook
    done: dict[int, str] = field(default_factory=dict)
    nudges: int = 0

    @property
    def finished(self) -> bool:
        return len(self.done) == len(self.book.steps)

    def next_step(self) -> int | None:
        return next((i for i in range(1, len(self.book.steps) + 1) if i not in self.done), None)


class StepCompleteParams(BaseModel):
    step: int = Field(description="The number of the step you have finished, from 1.")
    summary: str = Field(description="One or two sentences: what was done and how it was checked.")


class StepCompleteTool:
    name: ClassVar[str] = "step_complete"
    description: ClassVar[str] = (
        "Mark one step of the playbook as finished, with a short summary. Call it once per step, "
        "in order, only when the step's work is really done."
    )
    params: ClassVar[type[BaseModel]] = StepCompleteParams
    read_only: ClassVar[bool] = True  # changes no file; needs no approval

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    async def run(self, args: StepCompleteParams, ctx: ToolContext) -> ToolOutput:
        p = self.progress
        n = len(p.book.steps)
        if not 1 <= args.step <= n:
            raise ToolError(f"There is no step {args.step}: the playbook has steps 1 to {n}.")
        expected = p.next_step()
        if expected is None:
            raise ToolError(f"All {n} steps are already complete: give your final report.")
        if args.step != expected:
            if args.step in p.done:
                raise ToolError(f"Step {args.step} is already complete; the next step is {expected}.")
            raise ToolError(f"Finish step {expected} ({p.book.steps[expected - 1].title}) first.")
        p.done[args.step] = args.summary
        nxt = p.next_step()
        if nxt is None:
            return ToolOutput(
                f"Step {args.step} complete. All {n} steps are complete: give your final report."
            )
        return ToolOutput(f"Step {args.step} complete. Next, step {nxt}: {p.book.steps[nxt - 1].title}.")


def playbook_prompt(book: Playbook) -> str:
    def item(i: int, s: PlaybookStep) -> str:
        body = s.body.replace("\n", "\n   ")
        return f"{i}. {s.title}" + (f"\n   {body}" if body else "")

    steps = "\n".join(item(i, s) for i, s in enumerate(book.steps, 1))
    intro = f"\n{book.preamble}\n" if book.preamble else ""
    return (
        f'\nYou are running the playbook "{book.title}" unattended: nobody will answer questions, '
        f"so make reasonable choices and note them.{intro}\nSteps:\n{steps}\n\nWork through the steps "
        "in order. When a step is finished, call `step_complete` with its number and a short summary. "
        "After the last step, give a short final report."
    )


def playbook_hooks(progress: Progress) -> Hooks:
    """Send the agent back to work (at most ``MAX_NUDGES`` times) when it stops with steps left."""

    async def before_yield(state: RunState) -> Directive | None:
        nxt = progress.next_step()
        if nxt is None or progress.nudges >= MAX_NUDGES:
            return None
        progress.nudges += 1
        step = progress.book.steps[nxt - 1]
        return Directive(
            append=[
                UserMessage(
                    text=f"Step {nxt} ({step.title}) is not marked complete. Continue with it, and call "
                    "`step_complete` when it is done. If it cannot be done, say why and call "
                    "`step_complete` with that as the summary.",
                    lane="notice",
                    source="system",
                )
            ]
        )

    return Hooks(before_yield=before_yield)
