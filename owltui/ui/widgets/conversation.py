"""The scrolling conversation: starts at the top while it fits, follows the bottom once it overflows
and while an answer streams, prunes old blocks in long sessions."""

from __future__ import annotations

from textual import events
from textual.containers import VerticalScroll
from textual.widget import Widget

from owltui.ui import look
from owltui.ui.textual_compat import follows_bottom
from owltui.ui.widgets.blocks import AssistantBlock, NoticeBlock

MAX_BLOCKS = 400


class ConversationView(VerticalScroll, can_focus=False):
    DEFAULT_CSS = look.rules("ConversationView", look.CONVERSATION)

    def __init__(self, max_blocks: int = MAX_BLOCKS, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_blocks = max_blocks
        self.pruned = 0

    def on_mount(self) -> None:
        self._anchor_once_full()

    def on_resize(self, event: events.Resize) -> None:
        self._anchor_once_full()

    def watch_virtual_size(self) -> None:
        if self.container_size:  # before the first layout it reads as empty: the Resize that follows checks
            self._anchor_once_full()

    def _anchor_once_full(self) -> None:
        """Anchored only while the content overflows the view: Textual puts anchored content shorter
        than the view at its bottom, under a wall of blank lines, so a short conversation is not
        anchored and starts at the top; once it overflows, anchoring scrolls to the end and follows it.
        """
        overflows = self.max_scroll_y > 0
        if overflows and not self.is_anchored:
            self.anchor()
        elif not overflows and self.is_anchored:
            self.anchor(False)
            # the anchored layout left the offset above the top; with no scrollbar only forced scrolls move
            self.scroll_home(animate=False, immediate=True, force=True)

    @property
    def following(self) -> bool:
        """Following the bottom (scrolling up stops it, until ``follow`` or back at the bottom); a
        conversation that fits the view is all in view, the end included."""
        return follows_bottom(self) or not self.is_anchored

    def follow(self) -> None:
        """Re-attach to the bottom (after the user scrolled up): anchoring scrolls to the end, which
        takes back a release; a conversation that fits needs no anchor."""
        if self.max_scroll_y > 0:
            self.anchor()

    async def add(self, widget: Widget) -> Widget:
        await self.mount(widget)
        await self._prune()
        return widget

    async def _prune(self) -> None:
        blocks = [c for c in self.children if not isinstance(c, NoticeBlock) or not c.has_class("-pruned")]
        extra = len(blocks) - self.max_blocks
        if extra <= 0:
            return
        victims = [c for c in blocks[:extra] if not (isinstance(c, AssistantBlock) and not c.done)]
        if not victims:
            return
        self.pruned += len(victims)
        await self.remove_children(victims)
        marker = self.query(".-pruned")
        if marker:
            marker.first(NoticeBlock).update(f"… {self.pruned} earlier blocks pruned")
        else:
            note = NoticeBlock(f"… {self.pruned} earlier blocks pruned")
            note.add_class("-pruned")
            await self.mount(note, before=0)
