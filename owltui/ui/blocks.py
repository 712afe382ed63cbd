"""Conversation blocks: inputs (marked with their lane), streamed assistant Markdown, thinking, notices."""

from __future__ import annotations

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
    """Assistant text streamed through ``Markdown.get_stream`` (fragments are batched by the stream)."""

    DEFAULT_CSS = """
    AssistantBlock { height: auto; margin: 1 0 0 0; padding: 0 1; }
    AssistantBlock Markdown { margin: 0; padding: 0; background: transparent; }
    AssistantBlock Markdown > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.markdown = Markdown("")
        self._stream: MarkdownStream | None = None
        self._cleaner = StreamCleaner()
        self.text = ""
        self.done = False

    def compose(self) -> ComposeResult:
        yield self.markdown

    async def append(self, fragment: str) -> None:
        text = self._cleaner.feed(fragment)
        if not text:
            return
        self.text += text
        if self._stream is None:
            self._stream = Markdown.get_stream(self.markdown)
        await self._stream.write(text)

    async def finish(self) -> None:
        tail = self._cleaner.close()
        if tail:
            self.text += tail
            if self._stream is None:
                self._stream = Markdown.get_stream(self.markdown)
            await self._stream.write(tail)
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.done = True
