"""The TUI's presenter: agent events (and the host's other news) turned into widgets.

It is given the widgets it updates — the conversation, the status bar, the queue panel, the pause
banner, the todo list — and the host it reads; it knows nothing of the app. Events go through a
dispatch table keyed by event type. Notice wording comes from ``owltui.session.describe``; the
status bar's counters from the host's ``RunStats``, its context figure from the last response's
usage over the model's window.

``replay(items)`` draws a saved conversation (``-c``, ``--resume``, ``/sessions``, a rewind): messages,
attachments and tool blocks, folded. Blocks the conversation drops in a long session are forgotten
here too; scrolled back to, the items before the oldest block shown are drawn again from the history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from owltui.agent import events as ev
from owltui.agent.history import Compactable, CompactionMark
from owltui.agent.messages import Item
from owltui.agent.requirement import SoftRequirement
from owltui.agent.todo import saved_list
from owltui.session.approvals import Pending
from owltui.session.commands.host import Host
from owltui.session.commands.models import context_window
from owltui.session.describe import Notice, describe, model_display, requirement_outcome
from owltui.session.input.mentions import split_attachments
from owltui.session.stats import RunStats
from owltui.ui.approval import build_view
from owltui.ui.control.replay import draw_items, item_of, message_blocks
from owltui.ui.widgets.blocks import AssistantBlock, AttachmentsBlock, InputBlock, NoticeBlock, ThinkingBlock
from owltui.ui.widgets.conversation import ConversationView
from owltui.ui.widgets.pause_banner import PauseBanner
from owltui.ui.widgets.queue_panel import QueuePanel
from owltui.ui.widgets.status_bar import StatusBar
from owltui.ui.widgets.todo_panel import TodoPanel
from owltui.ui.widgets.tool_block import ToolBlock

Later = Callable[..., Any]  # run a callback (sync or async) on the UI's loop after this one
SUBAGENT_SHOWN = (ev.ToolStart, ev.ToolEnd, ev.ApprovalRequest)  # the rest stays out of the view
REPLAY_ITEMS = 200  # a resumed transcript draws at most the last this many items (~0.5 s)
EARLIER_ITEMS = 40  # scrolled back past the oldest block shown, this many earlier items are drawn


class Presenter:
    def __init__(
        self,
        host: Host,
        stats: RunStats,
        *,
        conversation: ConversationView,
        status: StatusBar,
        queue: QueuePanel,
        banner: PauseBanner,
        todo: TodoPanel | None = None,
        later: Later,
        alive: Callable[[], bool],
    ) -> None:
        self.host = host
        self.stats = stats
        self.conversation = conversation
        self.status = status
        self.queue = queue
        self.banner = banner
        self.todo = todo
        self._later = later
        self._alive = alive
        self._assistant: AssistantBlock | None = None
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        self.bash_lines = host.bash_output_lines
        # prompts already drawn, whose ``input`` event is not drawn again (only their attachments)
        self._echoed: list[tuple[str, InputBlock]] = []
        self.context_tokens: int | None = None  # the last request's size (its reported input + output)
        conversation.dropped = self._dropped
        conversation.earlier = self._draw_earlier
        self._steps: dict[type[ev.Event], Callable[[Any], Awaitable[None]]] = {
            ev.AgentStart: self._agent_start,
            ev.InputEvent: self._input,
            ev.MessageStart: self._message_start,
            ev.MessageDelta: self._thinking_delta,
            ev.MessageEnd: self._message_end,
            ev.ToolStart: self._tool_start,
            ev.ToolUpdate: self._tool_update,
            ev.ToolEnd: self._tool_end,
            ev.ApprovalRequest: self._approval_request,
            ev.RequirementEvent: self._describe,
            ev.Retry: self._describe,
            ev.HookEnd: self._describe,
            ev.Paused: self._describe,
            ev.Resumed: self._describe,
            ev.JobStarted: self._job,
            ev.JobFinished: self._job,
            ev.AgentEnd: self._agent_end,
            ev.TodoEvent: self._todo,
            **dict.fromkeys((ev.CompactionStart, ev.Compaction, ev.CompactionFailed), self._compaction),
        }

    # ---- events --------------------------------------------------------------------------
    async def show(self, batch: list[ev.Event]) -> None:
        """Draw a batch of events; consecutive text deltas are fed to the answer in one piece."""
        text: list[str] = []
        for event in batch:
            if not self._alive():
                return
            if type(event) is ev.MessageDelta and event.text is not None and event.agent is None:
                text.append(event.text)
                continue
            if text:
                await self._assistant_text("".join(text))
                text = []
            if event.agent is not None and not isinstance(event, SUBAGENT_SHOWN):
                continue  # subagent chatter stays out of the main conversation
            step = self._steps.get(type(event))
            if step is not None:
                await step(event)
        if text:
            await self._assistant_text("".join(text))
        self.redraw_status()

    async def _todo(self, e: ev.TodoEvent) -> None:
        if self.todo is not None:
            self.todo.show_items(e.items)

    def todo_from(self, items: Sequence[Item]) -> None:
        """The todo list a saved conversation left (a resumed session, a rewind, ``/new``)."""
        if self.todo is not None:
            self.todo.show_items(saved_list(items) or ())

    async def _agent_start(self, _e: ev.AgentStart) -> None:
        self._assistant = None

    async def _input(self, e: ev.InputEvent) -> None:
        typed, blocks = split_attachments(e.text)
        # attaching drops the spaces after the typed text (a completed mention leaves one)
        if e.lane == "user" and self._echoed and self._echoed[0][0].rstrip() == typed.rstrip():
            _, echoed = self._echoed.pop(0)
            if blocks and echoed.parent is not None:
                await self.conversation.mount(AttachmentsBlock(blocks), after=echoed)
            return
        await self._message(e.lane, e.text)

    async def _message(self, lane: str, text: str) -> None:
        for block in message_blocks(lane, text):
            await self.conversation.add(block)

    async def _message_start(self, _e: ev.MessageStart) -> None:
        self._assistant = None
        self._thinking = None

    async def _thinking_delta(self, e: ev.MessageDelta) -> None:
        if e.thinking:
            if self._thinking is None:
                self._thinking = ThinkingBlock()
                await self.conversation.add(self._thinking)
            self._thinking.append(e.thinking)

    async def _message_end(self, e: ev.MessageEnd) -> None:
        if e.usage.input_tokens:
            self.context_tokens = e.usage.input_tokens + e.usage.output_tokens
        await self._end_assistant(e.text)
        self._thinking = None
        for call in e.tool_calls:
            await self._tool_block(call.id, call.name, call.arguments)
        await self.say(describe(e))

    async def _tool_start(self, e: ev.ToolStart) -> None:
        (await self._tool_block(e.call_id, e.name, e.arguments)).set_status("running")

    async def _tool_update(self, e: ev.ToolUpdate) -> None:
        block = self._tools.get(e.call_id)
        if block is not None:
            block.append_output(e.text)

    async def _tool_end(self, e: ev.ToolEnd) -> None:
        (await self._tool_block(e.call_id, e.name, {})).finish(e.status, e.output)
        self._answered(e.call_id)

    async def _approval_request(self, e: ev.ApprovalRequest) -> None:
        pending = self.host.approvals.get(e.call_id)
        if pending is None:
            return  # answered or withdrawn before it was drawn
        # the event's arguments are the scrubbed ones (no key values on screen); the review is the
        # policy's, kept by the broker when it asked
        view = build_view(
            e.call_id, e.name, e.arguments, pending.review, pending.reason, workspace=self.host.workspace
        )
        (await self._tool_block(e.call_id, e.name, e.arguments)).ask(view)

    async def _describe(self, e: ev.Event) -> None:
        await self.say(describe(e))

    async def _compaction(self, e: ev.CompactionStart | ev.Compaction | ev.CompactionFailed) -> None:
        if isinstance(e, ev.Compaction) and e.tokens_after is not None:
            self.context_tokens = e.tokens_after
        await self.say(describe(e))  # /compact's start is its reply; the rest as for the automatic one

    async def _job(self, e: ev.JobStarted | ev.JobFinished) -> None:
        await self.say(describe(e))
        self.queue_changed()

    async def _agent_end(self, e: ev.AgentEnd) -> None:
        self._echoed.clear()
        await self._end_assistant()
        await self.say(describe(e, queued=self.stats.waiting))

    # ---- blocks --------------------------------------------------------------------------
    async def _assistant_text(self, text: str) -> None:
        if self._assistant is None:
            self._assistant = AssistantBlock()
            await self.conversation.add(self._assistant)
        self._assistant.feed(text)

    async def _end_assistant(self, final_text: str = "") -> None:
        block, self._assistant = self._assistant, None
        if block is None and final_text.strip():
            block = AssistantBlock()
            await self.conversation.add(block)
            block.feed(final_text)
        if block is not None:
            block.end()

    async def _tool_block(
        self, call_id: str, name: str, arguments: dict[str, Any], collapsed: bool = False
    ) -> ToolBlock:
        block = self._tools.get(call_id)
        if block is None:
            block = ToolBlock(call_id, name, arguments, collapsed=collapsed, inline_lines=self.bash_lines)
            self._tools[call_id] = block
            await self.conversation.add(block)
        return block

    def _answered(self, call_id: str) -> None:
        block = self._tools.get(call_id)
        if block is not None:
            block.answered()

    async def notice(self, text: str, kind: str = "info") -> NoticeBlock:
        block = NoticeBlock(text, kind)
        await self.conversation.add(block)
        return block

    async def say(self, notice: Notice | None) -> None:
        if notice is not None:
            await self.notice(notice.text, notice.kind)

    async def echo(self, text: str) -> InputBlock:
        """Draw a prompt as sent (a paused gate parks the run before it is delivered)."""
        block = InputBlock("user", text)
        self._echoed.append((text, block))
        await self.conversation.add(block)
        return block

    async def reset(self) -> None:
        """An empty conversation (``/new``, before a replay)."""
        self._tools.clear()
        self._echoed.clear()
        self._assistant = self._thinking = None
        self.context_tokens = None
        self.conversation.pruned = 0
        await self.conversation.remove_children()

    async def replay(
        self, items: Sequence[Item], compaction: CompactionMark | None = None, limit: int = REPLAY_ITEMS
    ) -> int:
        """Draw a saved conversation: messages with their attachments folded, answers as Markdown,
        thinking and tool blocks folded; where a compaction cut, a line says so. At most the last
        ``limit`` items; returns how many were left out."""
        start = max(0, len(items) - limit)
        if start:
            await self.notice(f"… {start} earlier messages not shown")
        drawn = draw_items(items, start, len(items), bash_lines=self.bash_lines, compaction=compaction)
        self._tools.update(drawn.tools)  # before mounting: those the cap drops are forgotten again
        await self.conversation.add_all(drawn.widgets)
        drawn.fill()
        if drawn.context_tokens is not None:
            self.context_tokens = drawn.context_tokens
        self._assistant = self._thinking = None
        self.redraw_status()
        return start

    # ---- a long conversation -------------------------------------------------------------
    def _dropped(self, blocks: Sequence[object]) -> None:
        """Blocks the conversation dropped: no reference to them is kept."""
        gone = {id(b) for b in blocks}
        self._tools = {k: b for k, b in self._tools.items() if id(b) not in gone}
        self._echoed = [(t, b) for t, b in self._echoed if id(b) not in gone]
        if id(self._thinking) in gone:
            self._thinking = None

    async def _draw_earlier(self) -> int:
        """Draw the items before the oldest block shown (the blocks above it that no item maps to are
        drawn again with them); how many items are still above."""
        conv = self.conversation
        items = self.host.agent.history.items()
        shown = conv.blocks()
        index, first = next(((i, b) for b in shown if (i := item_of(b, items)) is not None), (None, None))
        if index is None or first is None:
            return 0
        start = max(0, index - EARLIER_ITEMS)
        history = self.host.agent.history
        compaction = history.compaction() if isinstance(history, Compactable) else None
        drawn = draw_items(
            items,
            start,
            index,
            bash_lines=self.bash_lines,
            compaction=compaction,
            head_of_next=isinstance(first, ToolBlock),
        )
        stale = shown[: shown.index(first)]
        if stale:
            self._dropped(stale)
            await conv.remove_children(stale)
        await conv.add_earlier(drawn.widgets, before=first)
        drawn.fill()
        return start

    # ---- the host's other news -----------------------------------------------------------
    def redraw_status(self) -> None:
        if not self._alive():
            return
        host, stats, st = self.host, self.stats, self.status.state
        st.model = model_display(host.model_label)
        st.running = host.agent.running
        st.tokens_in, st.tokens_out, st.cache_read = stats.tokens_in, stats.tokens_out, stats.cache_read
        st.cost = stats.cost
        st.round, st.max_rounds = stats.round, host.agent.config.max_rounds
        st.paused = host.gate.paused
        st.mode = host.permissions.mode if host.permissions is not None else "ask"
        req = host.requirement.current
        st.requirement = req.tool if req is not None else None
        st.escalation = stats.escalation
        st.steer, st.follow_up = stats.queued["steer"], stats.queued["follow_up"]
        st.jobs = len(stats.jobs)
        window = context_window(host)
        used = self.context_tokens
        st.context = None if used is None or not window else min(999, round(100 * used / window))
        self.status.redraw()

    def queue_changed(self) -> None:
        if not self._alive():
            return
        self.queue.show_queue(self.host.inbox.snapshot(), self.stats.jobs)
        self.redraw_status()

    def gate_changed(self, *_: object) -> None:
        if not self._alive():
            return
        self.banner.redraw()
        self.redraw_status()

    def requirement_changed(self, what: str, req: SoftRequirement | None) -> None:
        if not self._alive():
            return
        self.redraw_status()
        if req is not None:
            self._later(self.say, requirement_outcome(what, req.tool))

    def approval_changed(self, action: str, pending: Pending) -> None:
        if action in ("withdrawn", "answered"):
            self._answered(pending.call_id)
