"""Compaction: replace the older part of a long conversation, for the model, by a summary.

The summary is written by the same loop as everything else: no tools, a summariser prompt, and an
in-memory history holding the transcript. The history keeps every item (the session file is never
rewritten); ``record_compaction`` only changes what the model is sent. The cut is always placed
at a user prompt, so no call is ever separated from its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from owltui.agent.agent import Agent
from owltui.agent.history import History
from owltui.agent.loop import LoopConfig
from owltui.agent.messages import AssistantMessage, Item, ToolResult, UserMessage
from owltui.agent.model import Model
from owltui.agent.pause import GATE, PauseGate

SUMMARY_PROMPT = """\
You summarise a coding session so that it can continue without the full transcript. Write a
compact summary with these parts: the user's goals and constraints; what was done (files read and
changed, commands run, results); decisions and their reasons; open problems and the next steps.
Keep exact file paths, names, numbers and error messages. Do not invent anything.
"""
MAX_RESULT_CHARS = 2000
MAX_TRANSCRIPT_CHARS = 400_000


class CompactionError(RuntimeError):
    """Compaction could not be done; the message says why in one sentence."""


@dataclass
class Compaction:
    summary: str
    first_kept: int
    replaced: int


def render(items: Sequence[Item]) -> str:
    """A plain-text transcript for the summariser (long tool output shortened)."""
    out: list[str] = []
    for item in items:
        if isinstance(item, UserMessage):
            out.append(f"[{item.lane}] {item.text}")
        elif isinstance(item, AssistantMessage):
            if item.text:
                out.append(f"[assistant] {item.text}")
            for call in item.tool_calls:
                out.append(f"[tool call] {call.name} {call.arguments}")
        elif isinstance(item, ToolResult):
            text = item.content
            if len(text) > MAX_RESULT_CHARS:
                text = text[:MAX_RESULT_CHARS // 2] + "\n[...]\n" + text[-MAX_RESULT_CHARS // 2:]
            out.append(f"[tool result {item.status}] {text}")
    text = "\n\n".join(out)
    if len(text) > MAX_TRANSCRIPT_CHARS:
        half = MAX_TRANSCRIPT_CHARS // 2
        text = text[:half] + "\n\n[... middle of the session omitted ...]\n\n" + text[-half:]
    return text


def cut_point(items: Sequence[Item], keep_turns: int) -> int:
    """Index of the user prompt that starts the last ``keep_turns`` turns (0: nothing to cut)."""
    starts = [i for i, it in enumerate(items) if isinstance(it, UserMessage) and it.lane == "user"]
    if len(starts) <= keep_turns:
        return 0
    return starts[-keep_turns] if keep_turns > 0 else len(items)


async def compact(history: History, model: Model, *, keep_turns: int = 2,
                  gate: PauseGate = GATE) -> Compaction:
    items = history.items()
    first_kept = cut_point(items, keep_turns)
    if first_kept == 0:
        raise CompactionError("The conversation is too short to compact.")
    record = getattr(history, "record_compaction", None)
    if record is None:
        raise CompactionError("This history cannot be compacted.")
    summariser = Agent(LoopConfig(model=model, system_prompt=SUMMARY_PROMPT, name="compaction"), gate=gate)
    outcome = await summariser.run("Summarise this session:\n\n" + render(items[:first_kept]))
    if outcome.reason != "done" or not outcome.text.strip():
        raise CompactionError(f"The summary could not be written ({outcome.error or outcome.reason}).")
    record(outcome.text.strip(), first_kept)
    return Compaction(outcome.text.strip(), first_kept, first_kept)
