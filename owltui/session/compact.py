"""Compaction: one model call (tools off) that summarises the conversation so far."""

from __future__ import annotations

from collections.abc import Sequence

from owltui.agent.messages import Item, UserMessage
from owltui.agent.model import MessageAssembler, Model, ModelRequest, StreamError, ToolSpec

SUMMARY_SYSTEM = "You summarise a conversation between a user and a coding agent, for the agent's later use."
SUMMARY_REQUEST = (
    "Summarise the conversation so far so that you can continue the work from the summary alone: the "
    "user's goals and constraints, what was done (files read or changed, commands run, results), "
    "decisions taken, open problems and the next steps. Be concise and factual; keep file paths, "
    "names and numbers exact."
)


async def summarize(model: Model, items: Sequence[Item], tools: Sequence[ToolSpec] = ()) -> str:
    """The summary text; raises RuntimeError with the provider's message when the call fails.

    The session's tools are sent with tool choice ``none`` (the history holds tool calls)."""
    note = UserMessage(text=SUMMARY_REQUEST, lane="notice", source="system")
    request = ModelRequest(system=SUMMARY_SYSTEM, messages=[*items, note], tools=tools,
                           tool_choice="none" if tools else "auto")
    asm = MessageAssembler(model.name)
    async for ev in model.stream(request):
        if isinstance(ev, StreamError):
            raise RuntimeError(ev.message)
        asm.feed(ev)
    text = asm.finish().text.strip()
    if not text:
        raise RuntimeError("the model returned an empty summary")
    return text
