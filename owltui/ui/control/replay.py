"""Saved conversation items drawn as blocks (folded): a resumed session's last items, and the earlier
items of a long conversation whose blocks were dropped, drawn again when the user scrolls back to
them. ``draw_items`` builds the blocks unmounted; ``Drawn.fill`` gives them their text once mounted."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from textual.widget import Widget

from owltui.agent.history import CompactionMark
from owltui.agent.messages import AssistantMessage, Item, ToolResult, UserMessage
from owltui.session.input.mentions import split_attachments
from owltui.session.input.shell import SOURCE as SHELL_SOURCE
from owltui.session.input.shell import context_message
from owltui.ui.widgets.blocks import AssistantBlock, AttachmentsBlock, InputBlock, NoticeBlock, ThinkingBlock
from owltui.ui.widgets.tool_block import ToolBlock

SHELL_CONTEXT = context_message("\0", "").split("\0", 1)[0]  # how a `!command` reaches the model


def message_blocks(lane: str, text: str, source: str = "") -> list[Widget]:
    """A message in the conversation: its typed text, then its attachments (folded); a ``!command``
    given to the model is one line (its output is in the bash block above)."""
    if text.startswith(SHELL_CONTEXT) or source == SHELL_SOURCE:
        command = text[len(SHELL_CONTEXT) :].split("\n", 1)[0] if text.startswith(SHELL_CONTEXT) else ""
        return [InputBlock(lane, f"$ {command}  (the command and its output go to the model)")]
    typed, blocks = split_attachments(text)
    return [InputBlock(lane, typed), AttachmentsBlock(blocks)] if blocks else [InputBlock(lane, typed)]


@dataclass
class Drawn:
    """Blocks drawn from items, not yet mounted; what each needs once mounted; the tool blocks by call."""

    widgets: list[Widget] = field(default_factory=list)
    then: list[Callable[[], None]] = field(default_factory=list)
    tools: dict[str, ToolBlock] = field(default_factory=dict)
    context_tokens: int | None = None

    def fill(self) -> None:
        """Once mounted: tool outputs, thinking and answers (Markdown renders at the block's width)."""
        for step in self.then:
            step()
        self.then.clear()


def _tool(drawn: Drawn, call_id: str, name: str, arguments: dict[str, object], bash_lines: int) -> ToolBlock:
    block = drawn.tools.get(call_id)
    if block is None:
        block = drawn.tools[call_id] = ToolBlock(
            call_id, name, dict(arguments), collapsed=True, inline_lines=bash_lines
        )
        drawn.widgets.append(block)
    return block


def _finish(block: ToolBlock, status: str, output: str) -> Callable[[], None]:
    return lambda: block.finish(status, output, collapse=True)


def _think(block: ThinkingBlock, text: str) -> Callable[[], None]:
    return lambda: block.append(text)


def _answer(block: AssistantBlock, text: str) -> Callable[[], None]:
    def fill() -> None:
        block.feed(text)
        block.end()

    return fill


def draw_items(
    items: Sequence[Item],
    start: int,
    stop: int,
    *,
    bash_lines: int,
    compaction: CompactionMark | None = None,
    head_of_next: bool = False,
) -> Drawn:
    """``items[start:stop]`` as blocks; with ``head_of_next``, also the thinking and answer of the
    assistant message at ``stop`` (its tool calls are drawn already)."""
    drawn = Drawn()
    answers: list[Callable[[], None]] = []
    last = stop + 1 if head_of_next and stop < len(items) else stop
    for i in range(start, last):
        item = items[i]
        if compaction is not None and i == compaction.first_kept and i > 0:
            drawn.widgets.append(NoticeBlock("— compacted here: the model sees a summary of what is above —"))
        if isinstance(item, UserMessage) and item.text.startswith(SHELL_CONTEXT):
            command, _, output = item.text[len(SHELL_CONTEXT) :].partition("\n")
            shell = _tool(drawn, f"shell-replay-{i}", "bash", {"command": command}, bash_lines)
            drawn.then.append(_finish(shell, "ok", output))  # a `!command` the user ran
        elif isinstance(item, UserMessage):
            drawn.widgets.extend(message_blocks(item.lane, item.text, item.source))
        elif isinstance(item, AssistantMessage):
            if item.thinking_text.strip():
                thinking = ThinkingBlock()
                drawn.widgets.append(thinking)
                drawn.then.append(_think(thinking, item.thinking_text))
            if item.text.strip() or item.error:
                answer = AssistantBlock()
                drawn.widgets.append(answer)
                answers.append(_answer(answer, item.text or f"({item.error})"))
            for call in item.tool_calls if i < stop else ():
                _tool(drawn, call.id, call.name, call.arguments, bash_lines)
            if item.usage.input_tokens:
                drawn.context_tokens = item.usage.input_tokens + item.usage.output_tokens
        elif isinstance(item, ToolResult):
            tool = _tool(drawn, item.call_id, item.name, {}, bash_lines)
            drawn.then.append(_finish(tool, item.status, item.content))
    drawn.then.extend(answers)  # answers last, as a replay always drew them
    return drawn


def item_of(block: Widget, items: Sequence[Item]) -> int | None:
    """The index of the item ``block`` was drawn for (a tool block: the message that called it; a
    prompt: the last message with its text), or None for blocks no item maps to."""
    if isinstance(block, ToolBlock):
        if block.call_id.startswith("shell-replay-"):
            return int(block.call_id.rsplit("-", 1)[1])
        for i in range(len(items) - 1, -1, -1):
            item = items[i]
            if isinstance(item, AssistantMessage) and any(c.id == block.call_id for c in item.tool_calls):
                first = item.tool_calls[0].id == block.call_id
                return i if first else None  # a later call of a message: its earlier calls are above
        return None
    if isinstance(block, InputBlock):
        for i in range(len(items) - 1, -1, -1):
            item = items[i]
            if isinstance(item, UserMessage) and split_attachments(item.text)[0] == block.text:
                return i
    return None
