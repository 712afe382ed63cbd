"""Conversation blocks: inputs (marked with their lane) and their attachments, streamed assistant
Markdown, thinking, notices, and the welcome line."""

from __future__ import annotations

import asyncio
import html
import re
import time

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.markup import escape
from textual.widgets import Collapsible, Static

from owltui.ui import look
from owltui.ui.text import StreamCleaner, clean
from owltui.ui.widgets.markdown_lines import MarkdownLines, render_markdown

_PATH_ATTR = re.compile(r'<(?:file|directory) path="([^"]*)">')
LANE_LABELS = {
    "user": "you",
    "steer": "steer",
    "follow_up": "follow-up",
    "aside": "aside",
    "reminder": "reminder",
    "notice": "notice",
}


class InputBlock(Static):
    """A message that went to the model: the prompt, steering, a follow-up, an aside, a reminder."""

    DEFAULT_CSS = """
    InputBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: wide $primary;
        background: $boost;
    }
    InputBlock.-steer { border-left: wide $warning; }
    InputBlock.-follow_up { border-left: wide $secondary; }
    InputBlock.-aside, InputBlock.-reminder, InputBlock.-notice {
        border-left: wide $foreground-darken-3;
        color: $text-muted;
        background: transparent;
    }
    """

    def __init__(self, lane: str, text: str) -> None:
        self.lane = lane
        label = LANE_LABELS.get(lane, lane)
        body = Text.assemble((f"{label} ", "bold"), clean(text))
        super().__init__(body, classes=f"-{lane}")
        self.text = text


_IMAGE_BODY = re.compile(r"\((image .+): attached as an image\)\n</file>\Z", re.S)


def _attached_name(block: str) -> str:
    """A block's name in the title: its path, or ``image shot.png 1200×800 (downscaled to …)``."""
    image = _IMAGE_BODY.search(block)
    if image is not None:
        return image.group(1)
    m = _PATH_ATTR.match(block)
    return html.unescape(m.group(1)) if m else ""


class AttachmentsBlock(Collapsible):
    """The files an ``@`` mention attached to the message above it: collapsed, the paths in the title."""

    DEFAULT_CSS = """
    AttachmentsBlock { margin: 0; border: none; padding: 0 0 0 1; background: transparent; }
    AttachmentsBlock Static { color: $text-muted; }
    """

    def __init__(self, blocks: list[str]) -> None:
        self.blocks = blocks
        self.paths = [_attached_name(b) for b in blocks if _PATH_ATTR.match(b)]
        more = len(self.paths) - 4
        shown = ", ".join(self.paths[:4]) + (f" and {more} more" if more > 0 else "")
        body = Static(Text(clean("\n\n".join(blocks))), markup=False)
        super().__init__(body, title=escape(f"attached: {shown}"), collapsed=True)


class WelcomeBlock(Static):
    """OwlTUI's first line: the model, the directory, the session, and where help is."""

    DEFAULT_CSS = look.rules("WelcomeBlock", look.WELCOME)

    def __init__(self, text: str) -> None:
        super().__init__(Text(clean(text)))
        self.text = text


class NoticeBlock(Static):
    """A line from OwlTUI itself: info, warnings and errors (never from the model)."""

    DEFAULT_CSS = """
    NoticeBlock { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    NoticeBlock.-warning { color: $warning; }
    NoticeBlock.-error { color: $error; text-style: bold; }
    NoticeBlock.-success { color: $success; }
    """

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(Text(clean(text)), classes=f"-{kind}")
        self.kind = kind
        self.text = text


class ThinkingBlock(Collapsible):
    """The model's reasoning: collapsed by default, text appended as it streams."""

    DEFAULT_CSS = """
    ThinkingBlock { margin: 1 0 0 0; border: none; padding: 0; background: transparent; }
    ThinkingBlock Static { color: $text-muted; text-style: italic; }
    """

    def __init__(self) -> None:
        self._body = Static("")
        self._text = ""
        super().__init__(self._body, title="thinking", collapsed=True)

    def append(self, text: str) -> None:
        self._text += clean(text)
        self._body.update(Text(self._text))

    @property
    def text(self) -> str:
        return self._text


class AssistantBlock(Vertical):
    """Assistant text, streamed as Markdown one finished paragraph at a time.

    Appends are batched (at most one write per ``WRITE_INTERVAL``, in this widget's own message loop,
    so keystrokes are never queued behind Markdown work). The unfinished paragraph is drawn as plain
    text in the ``tail`` Static (one wrap pass per write); once a blank line outside a code fence
    closes it, it moves into the current segment, a ``MarkdownLines`` (Rich Markdown rendered once
    per width into cached lines). A segment holds about ``SEGMENT_CHARS``, then a new one starts: each
    write re-renders a bounded amount of text, and closed segments keep their cached lines and height
    (no widget tree to re-mount or re-lay out).
    """

    DEFAULT_CSS = """
    AssistantBlock { height: auto; margin: 1 0 0 0; padding: 0 1; }
    AssistantBlock > .segment { margin: 1 0 0 0; }
    AssistantBlock > .-first { margin: 0; }
    AssistantBlock > .tail.-after { margin: 1 0 0 0; }
    """

    WRITE_INTERVAL = 0.15  # ~7 tail updates a second: keeps the loop free for keystrokes
    SEGMENT_CHARS = 1000

    def __init__(self) -> None:
        super().__init__()
        self.segments: list[MarkdownLines] = []
        self.tail = Static("", classes="tail", markup=False)
        self.tail.display = False
        self._closed_text = ""
        self._segment_text = ""
        self._cleaner = StreamCleaner()
        self._pending = ""
        self._open = ""
        self._last_write = 0.0
        self._scheduled = False
        self._lock = asyncio.Lock()
        self.text = ""
        self.done = False

    def compose(self) -> ComposeResult:
        yield self.tail

    @property
    def shown(self) -> str:
        """The text drawn so far (Markdown segments, then the plain unfinished paragraph)."""
        return self._closed_text + self._segment_text + self._open

    def feed(self, fragment: str) -> None:
        """Queue text (called from the app's event handler: cheap, never awaits)."""
        text = self._cleaner.feed(fragment)
        if not text:
            return
        self.text += text
        self._pending += text
        if not self._scheduled:
            self._scheduled = True
            wait = self._last_write + self.WRITE_INTERVAL - time.monotonic()
            if wait > 0:
                self.set_timer(wait, self._write)
            else:
                self.call_later(self._write)

    def end(self) -> None:
        """The message is complete: flush everything as Markdown (in this widget's loop), mark done."""
        tail = self._cleaner.close()
        self.text += tail
        self._pending += tail
        self.call_later(self._finish)

    async def _write(self, final: bool = False) -> None:
        async with self._lock:  # a timer's write and the final flush never interleave
            await self._write_locked(final)

    async def _write_locked(self, final: bool) -> None:
        self._scheduled = False
        self._last_write = time.monotonic()
        if not self._pending and not final:
            return
        text = self._open + self._pending
        self._pending = ""
        cut = len(text) if final else self._paragraph_end(text)
        closed, self._open = text[:cut], text[cut:]
        plan = self._plan(closed) if closed else []
        # Markdown is rendered here, one segment per loop turn, not inside the next layout: a key
        # press waits for at most one segment's render, and the frame after it only lays out
        width = self.content_size.width
        rendered: list[list[list[Segment]] | None] = []
        for _new, source in plan:
            rendered.append(render_markdown(self.app, source, width) if width > 0 else None)
            await asyncio.sleep(0)
        with self.app.batch_update():
            for (new, source), lines in zip(plan, rendered, strict=True):
                if new:
                    await self._new_segment()
                self.segments[-1].set_source(source, lines, width)
            shown = self._open.strip("\n")
            if shown:
                self.tail.update(Text(shown))
            self.tail.display = bool(shown)

    def _paragraph_end(self, text: str) -> int:
        """Where the finished paragraphs of ``text`` end: after its last blank line outside a fence."""
        pos = text.rfind("\n\n")
        while pos >= 0:
            if (self._segment_text + text[:pos]).count("```") % 2 == 0:
                return pos + 2
            pos = text.rfind("\n\n", 0, pos)
        return 0

    def _plan(self, text: str) -> list[tuple[bool, str]]:
        """Add finished paragraphs to the current segment, starting new segments as they fill: the
        sources to draw, each with whether it opens a new segment."""
        plan: list[tuple[bool, str]] = []
        new = not self.segments
        while text:
            if new or len(self._segment_text) >= self.SEGMENT_CHARS:
                self._closed_text += self._segment_text
                self._segment_text = ""
                new = True
            cut = self._segment_cut(text)
            part, text = text[:cut], text[cut:]
            self._segment_text += part
            if plan and not new:
                plan[-1] = (plan[-1][0], self._segment_text)
            else:
                plan.append((new, self._segment_text))
            new = False
        return plan

    async def _new_segment(self) -> None:
        first = not self.segments
        self.segments.append(MarkdownLines(classes="segment -first" if first else "segment"))
        await self.mount(self.segments[-1], before=self.tail)
        if first:
            self.tail.add_class("-after")

    def _segment_cut(self, text: str) -> int:
        """How much of ``text`` goes to the current segment: up to the first blank line outside a
        code fence once the segment holds ``SEGMENT_CHARS`` (all of it if there is none)."""
        pos = text.find("\n\n", max(0, self.SEGMENT_CHARS - len(self._segment_text)))
        while pos >= 0:
            if (self._segment_text + text[:pos]).count("```") % 2 == 0:
                return pos + 2
            pos = text.find("\n\n", pos + 2)
        return len(text)

    async def _finish(self) -> None:
        await self._write(final=True)
        await self.tail.remove()
        self.done = True
