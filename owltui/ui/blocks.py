"""Conversation blocks: inputs (marked with their lane), streamed assistant Markdown, thinking, notices."""

from __future__ import annotations

import time

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from .text import StreamCleaner, clean

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


class AssistantBlock(Vertical):
    """Assistant text streamed through ``Markdown.get_stream``.

    Appends are batched (at most one write per ``WRITE_INTERVAL``) so the event loop stays free for
    keystrokes, and a long answer is cut into segments at paragraph boundaries outside code fences,
    so each append re-parses only the last segment, never the whole answer. A closed segment is
    frozen into one widget (a Rich Markdown render) so layout cost stays flat in long answers.
    """

    DEFAULT_CSS = """
    AssistantBlock { height: auto; margin: 1 0 0 0; padding: 0 1; }
    AssistantBlock Markdown { margin: 0; padding: 0; background: transparent; }
    AssistantBlock .frozen { margin: 0 0 1 0; }
    """

    WRITE_INTERVAL = 0.1
    SEGMENT_CHARS = 1500
    FREEZE = True  # replace closed segments by one Static each

    def __init__(self) -> None:
        super().__init__()
        self.markdown = Markdown("")
        self.segments: list[Markdown] = [self.markdown]
        self._frozen_text = ""
        self._stream: MarkdownStream | None = None
        self._cleaner = StreamCleaner()
        self._pending = ""
        self._segment_text = ""
        self._fences = 0
        self._last_write = 0.0
        self._scheduled = False
        self.text = ""
        self.done = False

    def compose(self) -> ComposeResult:
        yield self.markdown

    @property
    def shown(self) -> str:
        """The text handed to the Markdown widgets so far."""
        return self._frozen_text + self.markdown.source

    def feed(self, fragment: str) -> None:
        """Queue text (called from the app's event handler: cheap, never awaits). The Markdown work
        runs in this widget's own message loop, so keystrokes are never queued behind it."""
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
        """The message is complete: flush, close the stream (in this widget's loop), mark done."""
        tail = self._cleaner.close()
        self.text += tail
        self._pending += tail
        self.call_later(self._finish)

    async def _write(self) -> None:
        self._scheduled = False
        text, self._pending = self._pending, ""
        self._last_write = time.monotonic()
        if not text:
            return
        while (cut := self._segment_cut(text)) is not None:
            await self._stream_write(text[:cut])
            await self._close_stream()
            if self.FREEZE:
                await self._freeze()
            self.markdown = Markdown("")
            self.segments.append(self.markdown)
            self._segment_text = ""
            await self.mount(self.markdown)
            text = text[cut:]
        await self._stream_write(text)

    def _segment_cut(self, text: str) -> int | None:
        """Where to start a new segment in ``text``: the first blank line outside a code fence once
        the segment holds ``SEGMENT_CHARS``."""
        pos = text.find("\n\n", max(0, self.SEGMENT_CHARS - len(self._segment_text)))
        while pos >= 0:
            if (self._segment_text + text[:pos]).count("```") % 2 == 0:
                return pos + 2
            pos = text.find("\n\n", pos + 2)
        return None

    async def _stream_write(self, text: str) -> None:
        if not text:
            return
        self._segment_text += text
        if self._stream is None:
            self._stream = Markdown.get_stream(self.markdown)
        await self._stream.write(text)

    async def _close_stream(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None

    async def _freeze(self) -> None:
        """Replace the current segment's widget tree by one Static rendering the same Markdown."""
        source = self.markdown.source
        self._frozen_text += source
        frozen = Static(RichMarkdown(source), classes="frozen")
        await self.mount(frozen, before=self.markdown)
        await self.markdown.remove()

    async def _finish(self) -> None:
        await self._write()
        await self._close_stream()
        if len(self.segments) > 1 and self.FREEZE:
            await self._freeze()
            self.markdown = Markdown("")
        self.done = True
