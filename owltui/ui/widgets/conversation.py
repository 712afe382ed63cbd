"""The scrolling conversation: starts at the top while it fits, follows the bottom once it overflows
and while an answer streams, drops old blocks in long sessions (not while the user reads back through
them) and, scrolled back to the top of what it holds, asks for the earlier ones to be drawn again.

It keeps the newest blocks that fill ``KEEP_SCREENS`` views (and never more than ``max_blocks``):
every block kept is walked by each layout of the screen, so a long turn of small tool blocks keeps a
few dozen, not a hundred, and what it holds still scrolls back a page before anything is drawn
again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from textual import events
from textual.containers import VerticalScroll
from textual.widget import Widget

from owltui.ui import look
from owltui.ui.textual_compat import follows_bottom
from owltui.ui.widgets.blocks import AssistantBlock, NoticeBlock

MAX_BLOCKS = 100  # widgets kept at most; scrolling back past them draws the earlier ones again
KEEP_SCREENS = 2  # the newest blocks that fill this many views are kept (the cap still holds)


class ConversationView(VerticalScroll, can_focus=False):
    DEFAULT_CSS = look.rules("ConversationView", look.CONVERSATION)

    def __init__(self, max_blocks: int = MAX_BLOCKS, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_blocks = max_blocks
        self.pruned = 0
        self.dropped: Callable[[Sequence[Widget]], None] | None = None  # told of the blocks it drops
        # draws the items before the oldest block shown; returns how many are still above
        self.earlier: Callable[[], Awaitable[int]] | None = None
        self._drawing = False
        self._reading_back = False  # earlier blocks were drawn again and the user has not left them

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

    async def add_all(self, widgets: Sequence[Widget]) -> None:
        if widgets:
            await self.mount_all(widgets)
            await self._prune()

    def blocks(self) -> list[Widget]:
        """The blocks shown, oldest first (the line saying some were dropped is not one)."""
        return [c for c in self.children if not c.has_class("-pruned")]

    def _marker(self) -> NoticeBlock | None:
        first = self.children[0] if self.children else None
        return first if isinstance(first, NoticeBlock) and first.has_class("-pruned") else None

    def _extra(self, blocks: list[Widget]) -> int:
        """How many of the oldest ``blocks`` are beyond what is kept: past the cap, or older than
        the newest ones that fill ``KEEP_SCREENS`` views (a block not laid out yet counts as empty)."""
        extra = len(blocks) - self.max_blocks
        view = self.scrollable_content_region.height
        if view <= 0:
            return extra
        need, filled = KEEP_SCREENS * view, 0
        for kept, block in enumerate(reversed(blocks)):
            if filled >= need:
                return max(extra, len(blocks) - kept)
            filled += block.outer_size.height + block.styles.margin.top
        return extra

    async def _prune(self) -> None:
        """Past what is kept, the oldest blocks go (not while the user reads what was drawn again)."""
        blocks = self.blocks()
        extra = self._extra(blocks)
        if extra <= 0:
            return
        if self._reading_back:
            if self.scroll_y < self.max_scroll_y and not follows_bottom(self):
                return
            self._reading_back = False
        victims = [c for c in blocks[:extra] if not (isinstance(c, AssistantBlock) and not c.done)]
        if not victims:
            return
        self.pruned += len(victims)
        await self.remove_children(victims)
        if self.dropped is not None:
            self.dropped(victims)
        await self._mark(f"… {self.pruned} earlier blocks pruned (scroll up to draw them again)")

    async def _mark(self, text: str) -> None:
        marker = self._marker()
        if marker is not None:
            marker.update(text)
        else:
            note = NoticeBlock(text)
            note.add_class("-pruned")
            await self.mount(note, before=0)

    async def add_earlier(self, widgets: Sequence[Widget], before: Widget) -> None:
        if widgets:
            await self.mount_all(widgets, before=before)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self.pruned and self.earlier is not None and not self._drawing:
            self._drawing = True
            self.call_later(self._draw_earlier)

    async def _draw_earlier(self) -> None:
        """Draw what is above the oldest block shown, keeping that block where it is on screen."""
        try:
            if self.earlier is None:
                return
            shown = {id(b) for b in self.blocks()}
            left = await self.earlier()
            self._reading_back = True
            keep = next((b for b in self.blocks() if id(b) in shown), None)
            marker = self._marker()
            if left:
                await self._mark(f"… {left} earlier messages (scroll up to draw them)")
            elif marker is not None:
                self.pruned = 0
                await marker.remove()
            if keep is not None:
                self.call_after_refresh(self.scroll_to_widget, keep, animate=False, top=True)
        finally:
            self._drawing = False
