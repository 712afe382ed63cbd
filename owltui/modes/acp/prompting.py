"""A ``session/prompt`` as OwlTUI's input, and the bookkeeping of the prompts waiting for an answer.

``prompt_text`` turns the prompt's content blocks into one message: ``text`` blocks as typed, a
``resource_link`` to a ``file://`` URI as an ``@path`` mention (attached by the command layer's
mention rules: the read filter, the first page as ``read`` shows it), a link with a line range
(``#L10-20`` or ``#L10:20``) as a ``<file path=… lines=…>`` block of those lines, an embedded
``resource`` as a ``<file>`` block with the text the client sent. Images, audio and binary blobs are
said to be left out, in one line each.

``Prompts`` keeps the outstanding ``session/prompt`` requests of one session, oldest first: the one
whose run is going (``current``), then those queued while it ran, each with the id of its queued
message. A queued one becomes current when the loop delivers its message; the ones before it are
answered ``end_turn`` then. The end of a run answers every outstanding prompt with its stop reason.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from owltui.agent.messages import ImageRef, UserMessage
from owltui.agent.paging import NOTICE_BYTES
from owltui.agent.services import ImageInput
from owltui.agent.tool import ToolError
from owltui.session.input.mentions import expand_mentions, mention_token
from owltui.text.codec import head_text, line_ending
from owltui.tools.base import MAX_BYTES, display_path
from owltui.tools.files.imageload import ImageError, image_ref
from owltui.tools.files.paging import open_text, page_text, read_page

ReadFilter = Callable[[Path], str | None]
RANGE = re.compile(r"^L?(\d+)(?:[-:]L?(\d+))?$")
LANES = ("steer", "follow_up", "immediate")


def file_path(uri: str) -> tuple[Path, tuple[int, int] | None] | None:
    """A ``file://`` URI's path and line range (``#L10-20``, ``#L10:20``, ``#L7``); None for
    another scheme."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    found = RANGE.match(parsed.fragment) if parsed.fragment else None
    if found is None:
        return path, None
    start = int(found.group(1))
    end = int(found.group(2)) if found.group(2) else start
    return path, (max(1, start), max(start, end))


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


def _shown(path: Path, workspace: Path) -> str:
    try:
        path.relative_to(workspace)
    except ValueError:
        return str(path)
    return display_path(workspace, path)


def line_block(path: Path, lines: tuple[int, int], workspace: Path, read_filter: ReadFilter | None) -> str:
    """Lines ``lines`` of ``path`` as ``read`` shows them, in a ``<file>`` block (or why not)."""
    shown = _shown(path, workspace)
    start, end = lines
    head = f'<file path="{_attr(shown)}" lines="{start}-{end}">'
    why = read_filter(path) if read_filter is not None else None
    if why:
        return f"{head}\n(not attached: {why})\n</file>"
    try:
        fd, enc, first, _size = open_text(path, shown, "only text is attached")
        newline = line_ending(head_text(first, enc))
        page = read_page(fd, enc, start, end - start + 1, 1, MAX_BYTES - NOTICE_BYTES, threading.Event())
        body, _last = page_text(page, enc, newline)
    except ToolError as exc:
        body = f"(not attached: {str(exc).rstrip('.')})"
    except OSError as exc:
        body = f"(not attached: cannot read {shown}: {exc.strerror or exc})"
    return f"{head}\n{body.rstrip(chr(10))}\n</file>"


def _embedded(resource: TextResourceContents | BlobResourceContents, workspace: Path) -> str:
    uri = resource.uri
    located = file_path(uri)
    shown = _shown(located[0], workspace) if located is not None else uri
    if not isinstance(resource, TextResourceContents):
        return f'<file path="{_attr(shown)}">\n(not attached: binary content)\n</file>'
    return f'<file path="{_attr(shown)}">\n{resource.text.rstrip(chr(10))}\n</file>'


@dataclass
class PromptText:
    """What a prompt says: ``typed`` (text and mentions, what a slash command would read), the
    blocks attached after it, the images it carries, and the notes for the user about what was left
    out."""

    typed: str
    blocks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)

    def message(
        self, workspace: Path, read_filter: ReadFilter | None, images: ImageInput | None
    ) -> tuple[str | UserMessage, str, list[str]]:
        """What to send (the text, or a message carrying it and the images), the text the model gets
        (mentions attached, then the blocks) and the notes. ``images`` says whether the session's
        model takes images now: when it does not, they are refused with its reason, never dropped
        silently."""
        expansion = expand_mentions(self.typed, workspace, read_filter, images)
        text = expansion.text
        if self.blocks:
            text = text.rstrip() + "\n\n" + "\n\n".join(self.blocks)
        notes = [*self.notes, *expansion.notes]
        notes += [f"@{a.mention}: {a.error}" for a in expansion.attachments if a.error is not None]
        attached = list(expansion.images)
        if self.images:
            refused = images.image_refusal() if images is not None else None
            if refused is None:
                attached += self.images
            else:
                notes += [f"image {ref.name or ref.media_type}: {refused}" for ref in self.images]
        if not attached:
            return text, text, notes
        return UserMessage(text=text, images=tuple(attached)), text, notes


def _image(block: ImageContentBlock, number: int) -> ImageRef | str:
    """An image block as an attachable image (downscaled when over the limits), or why not."""
    name = block.uri.rsplit("/", 1)[-1] if block.uri else f"image {number}"
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return f"{name}: the image data is not base64: left out"
    try:
        return image_ref(data, name)
    except ImageError as exc:
        return f"{name}: {exc}"


PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def prompt_text(blocks: Sequence[PromptBlock], workspace: Path, read_filter: ReadFilter | None) -> PromptText:
    """The content blocks of a ``session/prompt`` (acp.schema models) as one message."""
    out = PromptText("")
    pieces: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            pieces.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            located = file_path(block.uri)
            if located is None:
                pieces.append(block.uri)
            elif located[1] is None:
                shown = _shown(located[0], workspace)
                token = mention_token(shown if os.path.exists(workspace / shown) else str(located[0]))
                pieces.append(token if not pieces or pieces[-1].endswith((" ", "\n")) else " " + token)
            else:
                out.blocks.append(line_block(located[0], located[1], workspace, read_filter))
        elif isinstance(block, EmbeddedResourceContentBlock):
            out.blocks.append(_embedded(block.resource, workspace))
        elif isinstance(block, ImageContentBlock):
            got = _image(block, len(out.images) + 1)
            if isinstance(got, str):
                out.notes.append(got)
            else:
                out.images.append(got)
        else:
            out.notes.append(f"{block.type} content is not supported: left out")
    out.typed = "".join(pieces)
    return out


def lane_of(meta: dict[str, Any] | None) -> str:
    """The lane ``_meta.owltui.lane`` names for a prompt sent during a run (default ``steer``)."""
    owl = meta.get("owltui") if isinstance(meta, dict) else None
    lane = owl.get("lane") if isinstance(owl, dict) else None
    return lane if isinstance(lane, str) and lane in LANES else "steer"


class Waiting:
    """One outstanding ``session/prompt``: its answer, once known (``done``)."""

    def __init__(self, queue_id: str | None = None) -> None:
        self.queue_id = queue_id
        self.reason: str | None = None
        self.done = anyio.Event()

    def answer(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self.done.set()


class Prompts:
    """The outstanding prompts of one session, oldest first."""

    def __init__(self) -> None:
        self.waiting: list[Waiting] = []

    def add(self, queue_id: str | None = None) -> Waiting:
        w = Waiting(queue_id)
        self.waiting.append(w)
        return w

    def delivered(self, is_queued: Callable[[str], bool]) -> list[Waiting]:
        """The prompts answered ``end_turn`` because a later one's message was delivered: every
        one before the last delivered queued message (which becomes the current prompt)."""
        last = -1
        for i, w in enumerate(self.waiting):
            if w.queue_id is not None and not is_queued(w.queue_id):
                last = i
        if last < 0:
            return []
        done, self.waiting = self.waiting[:last], self.waiting[last:]
        self.waiting[0].queue_id = None
        return done

    def drop(self, waiting: Waiting) -> None:
        if waiting in self.waiting:
            self.waiting.remove(waiting)

    def withdrawn(self, queue_id: str) -> Waiting | None:
        """The prompt whose queued message was removed from the queue."""
        for w in self.waiting:
            if w.queue_id == queue_id:
                self.waiting.remove(w)
                return w
        return None

    def ending(self, is_queued: Callable[[str], bool]) -> list[Waiting]:
        """The prompts a run's end answers, taken off the list: all but those whose message is
        still queued (delivered by the next run)."""
        out = [w for w in self.waiting if w.queue_id is None or not is_queued(w.queue_id)]
        self.waiting = [w for w in self.waiting if w not in out]
        return out

    def queued_ids(self) -> list[str]:
        return [w.queue_id for w in self.waiting if w.queue_id is not None]
