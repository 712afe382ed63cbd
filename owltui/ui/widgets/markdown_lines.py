"""A Markdown segment rendered once per width into cached lines (Line API, no child widgets)."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from rich.style import Style
from textual.app import App
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


def render_markdown(app: App[object], source: str, width: int) -> list[list[Segment]]:
    """``source`` rendered by Rich Markdown into lines of segments, ``width`` cells wide."""
    dark = app.current_theme.dark
    options = app.console_options.update_width(max(1, width)).update(highlight=False)
    markdown = RichMarkdown(source, code_theme="monokai" if dark else "friendly")
    return app.console.render_lines(markdown, options, pad=False)


class MarkdownLines(Widget):
    """Rich Markdown drawn from a line cache: the text is rendered once per (source, width), so the
    height is known to layout and scrolling or repainting never re-renders it."""

    DEFAULT_CSS = """
    MarkdownLines { height: auto; }
    """

    def __init__(self, source: str = "", classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.source = source
        self._lines: list[list[Segment]] = []
        self._key: tuple[int, bool] | None = None
        self._strips: dict[int, Strip] = {}
        self._strip_key: tuple[int, Style] | None = None
        self._paint: tuple[list[list[Segment]], int, Style] = ([], 0, Style.null())

    def set_source(self, source: str, lines: list[list[Segment]] | None = None, width: int = 0) -> None:
        """Replace the Markdown text: ``lines`` (rendered ``width`` wide) if given, else rendered at
        the next layout."""
        self.source = source
        self._key = None
        if lines is not None and width > 0:
            self._lines = lines
            self._key = (width, self.app.current_theme.dark)
            self._strips.clear()
        self.refresh(layout=True)

    def _lines_at(self, width: int) -> list[list[Segment]]:
        app = self.app
        dark = app.current_theme.dark
        if self._key != (width, dark):
            self._lines = render_markdown(app, self.source, width)
            self._key = (width, dark)
            self._strips.clear()
        return self._lines

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines_at(width)) if self.source else 0

    def render_lines(self, crop: Region) -> list[Strip]:
        # once per paint, not per line: the base style and the theme's line cache
        width = self.content_size.width
        self._paint = (self._lines_at(width), width, self.rich_style)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        lines, width, style = self._paint
        if self._strip_key != (width, style):
            self._strip_key = (width, style)
            self._strips.clear()
        strip = self._strips.get(y)
        if strip is None:
            line = lines[y] if y < len(lines) else []
            strip = self._strips[y] = Strip(line).crop_extend(0, width, None).apply_style(style)
        return strip
