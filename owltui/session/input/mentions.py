"""``@path`` mentions: a file (or a directory's listing) the user names in a message is attached to it.

Grammar. A mention is ``@`` at the start of the text or after whitespace, followed by a path that
exists: ``@src/app.py``, ``@docs/``, ``@/etc/hosts``, ``@~/notes.txt``, or quoted for names with
spaces, ``@"my notes.txt"``. Punctuation that ends a sentence is not part of an unquoted path when
the path without it exists (``see @app.py, then`` names ``app.py``). Not mentions: ``@`` inside a
word (``bob@example.com``), inside inline code or a fenced code block (`` `@decorator` ``), and a
name that exists nowhere (``@bob``: left as text; when it looks like a path - a ``/`` or ``.`` in it,
or quoted - the user is told it was not found).

Where. Relative paths are taken from the workspace and must stay inside it (``@../x`` is refused: a
relative path that climbs out is usually a slip, and ``..`` tricks should not reach files nobody
meant to send). An absolute or ``~`` path may name a file anywhere - the user typed it out, and the
model's own ``read`` may read it too - unless the ``[deny] read`` rules (the permission policy's read
filter) cover it; denied files are never attached, inside the workspace or out.

What is attached. The message text keeps what the user typed, word for word, and gets one block per
mention after a blank line: ``<file path="…">`` with the file's first page exactly as the ``read``
tool shows it (numbered lines, encodings and controls made visible, at most 2,000 lines / 50 KB, a
last line saying how to read on), or ``<directory path="…">`` with a listing like ``ls``'s. A file
that exists but cannot be attached (binary, a device, denied, larger than ``MAX_SCAN_BYTES``) gets a
block saying why, so the model knows the user meant it. An image file (by its bytes) goes with the
message as an image, its block naming it; a pasted image path alone on a line too
(``mention_images``). ``split_attachments`` takes a message apart
again (for a front end that shows attachments apart from the text).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from owltui.agent.agent import Agent
from owltui.agent.messages import ImageRef, Lane, UserMessage
from owltui.agent.paging import NOTICE_BYTES
from owltui.agent.services import ImageInput
from owltui.agent.tool import ToolError
from owltui.session.input.mention_content import list_directory, read_attachment
from owltui.session.input.mention_images import TEXT_ONLY, attach_image, pasted_paths
from owltui.text.codec import show_name
from owltui.tools.base import MAX_BYTES, display_path
from owltui.tools.files.imageload import is_image_file

ReadFilter = Callable[[Path], "str | None"]  # the permission policy's ``read_denied``

MAX_MENTIONS = 20  # per message; the rest stay text
MAX_TOTAL_BYTES = 200 * 1024  # all attachments of one message together
TRAILING = ".,;:!?)]}>'\""  # may end a sentence after an unquoted mention

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_AT = re.compile(r"(?<!\S)@")
_BLOCK_START = re.compile(r'\n\n<(?:(?:file|directory) path|resource uri)="')  # resource: @server:uri

Kind = Literal["file", "directory"]


@dataclass(frozen=True)
class Mention:
    """One ``@`` token as typed: where it is in the text and the path it names."""

    start: int
    end: int
    path: str  # as typed (quotes removed)
    quoted: bool = False


@dataclass(frozen=True)
class Attachment:
    """A mention that became a block. ``error``: why its content is not attached."""

    mention: str  # the path as typed
    path: Path
    shown: str  # the path in the block (workspace-relative when inside)
    kind: Kind
    body: str
    error: str | None = None
    image: ImageRef | None = None  # an image file's image (``mention_images``)

    def block(self) -> str:
        return f'<{self.kind} path="{_attr(self.shown)}">\n{self.body.rstrip(chr(10))}\n</{self.kind}>'


@dataclass
class Expansion:
    """A message with its mentions attached. ``text`` is what the model gets; ``notes`` tell the
    user about mentions that were not attached (one line each)."""

    typed: str
    text: str
    attachments: list[Attachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def images(self) -> tuple[ImageRef, ...]:
        """The images the mentions attached (they go with the message beside its text)."""
        return tuple(a.image for a in self.attachments if a.image is not None)

    def message(self, lane: Lane = "user") -> str | UserMessage:
        """What to send: the text, or a message for ``lane`` carrying the text and the images."""
        return UserMessage(text=self.text, lane=lane, images=self.images) if self.images else self.text

    @property
    def attached(self) -> list[str]:
        """The paths whose content went with the message."""
        return [a.shown for a in self.attachments if a.error is None]

    def summary(self) -> str:
        """One line for the user: what went along and what did not."""
        parts: list[str] = []
        if self.attached:
            parts.append("attached " + ", ".join(self.attached))
        parts += [f"@{a.mention}: {a.error}" for a in self.attachments if a.error is not None]
        parts += self.notes
        return "; ".join(parts)


def _attr(text: str) -> str:
    return show_name(text).replace("&", "&amp;").replace('"', "&quot;")


# ---- the grammar ---------------------------------------------------------------------------------
def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE.finditer(text)] if "`" in text else []


def find_mentions(text: str) -> list[Mention]:
    """Every ``@`` token that may be a mention, whether or not its path exists (see the module
    docstring for the grammar); in order."""
    if "@" not in text:
        return []
    code = _code_spans(text)
    found: list[Mention] = []
    for m in _AT.finditer(text):
        at = m.start()
        if any(a <= at < b for a, b in code):
            continue
        rest = at + 1
        if rest < len(text) and text[rest] == '"':
            close = text.find('"', rest + 1)
            if close == -1 or "\n" in text[rest + 1 : close] or close == rest + 1:
                continue
            found.append(Mention(at, close + 1, text[rest + 1 : close], quoted=True))
            continue
        end = rest
        while end < len(text) and not text[end].isspace():
            end += 1
        if end > rest:
            found.append(Mention(at, end, text[rest:end]))
    return found


def mention_token(path: str) -> str:
    """How to write a mention of ``path``: ``@path``, quoted when it holds whitespace or quotes."""
    return f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"


def _looks_like_path(mention: Mention) -> bool:
    return (
        mention.quoted
        or "/" in mention.path
        or "." in mention.path.strip(TRAILING)
        or mention.path.startswith("~")
    )


def _candidates(mention: Mention) -> Iterable[str]:
    """The path as typed, then (unquoted) without trailing sentence punctuation, one by one."""
    path = mention.path
    yield path
    if mention.quoted:
        return
    while path and path[-1] in TRAILING:
        path = path[:-1]
        if path:
            yield path


def _inside(workspace: Path, path: Path) -> bool:
    return path == workspace or workspace in path.parents


def _locate(raw: str, workspace: Path) -> tuple[Path, bool]:
    """(absolute normalised path, typed as absolute or ``~``)."""
    expanded = os.path.expanduser(raw)
    absolute = os.path.isabs(expanded)
    path = Path(expanded) if absolute else workspace / expanded
    return Path(os.path.normpath(path)), absolute


# ---- expanding a message -------------------------------------------------------------------------
def expand_mentions(
    text: str, workspace: Path, read_filter: ReadFilter | None = None, images: ImageInput | None = TEXT_ONLY
) -> Expansion:
    """``text`` with every mention's file or listing attached (see the module docstring), and the
    images of image files and pasted image paths (``mention_images``) unless ``images`` refuses
    them: by default they are (a caller that sends ``text`` only); None attaches them unasked."""
    workspace = Path(os.path.normpath(workspace))
    out = Expansion(typed=text, text=text)
    seen: set[Path] = set()
    budget = MAX_TOTAL_BYTES
    mentions = find_mentions(text)
    for count, mention in enumerate(mentions):
        if count >= MAX_MENTIONS:
            out.notes.append(f"only the first {MAX_MENTIONS} mentions are attached")
            break
        found: tuple[str, Path, bool] | None = None
        outside: str | None = None
        for raw in _candidates(mention):
            path, absolute = _locate(raw, workspace)
            if not os.path.exists(path):
                continue
            if not absolute and not _inside(workspace, path):
                outside = raw
                break
            found = (raw, path, absolute)
            break
        if outside is not None:
            out.notes.append(f"@{outside}: outside the workspace; name it by its absolute path to attach it")
            continue
        if found is None:
            if _looks_like_path(mention):
                named = mention.path if mention.quoted else (mention.path.rstrip(TRAILING) or mention.path)
                out.notes.append(f"@{named}: no such file; left as text")
            continue
        raw, path, _absolute = found
        if path in seen:
            continue
        seen.add(path)
        shown = display_path(workspace, path) if _inside(workspace, path) else show_name(str(path))
        if os.path.isdir(path) and not shown.endswith("/"):
            shown += "/"
        attachment = _attach(raw, path, shown, read_filter, budget, images)
        budget -= len(attachment.body.encode("utf-8", "replace"))
        out.attachments.append(attachment)
    for raw, path in pasted_paths(text):
        if path not in seen:
            seen.add(path)
            shown = display_path(workspace, path) if _inside(workspace, path) else show_name(str(path))
            out.attachments.append(_attach(raw, path, shown, read_filter, budget, images))
    if out.attachments:
        out.text = text.rstrip() + "\n\n" + "\n\n".join(a.block() for a in out.attachments)
    return out


def attach_mentions(agent: Agent, text: str) -> Expansion:
    """``expand_mentions`` for ``agent``: its workspace and its ``read_filter`` service (every mode
    sends user text through this: the command layer's prompt, steer and follow-up, print mode)."""
    cfg = agent.config
    return expand_mentions(text, cfg.workspace, cfg.services.read_filter, cfg.services.images)


def _attach(
    raw: str, path: Path, shown: str, read_filter: ReadFilter | None, budget: int, images: ImageInput | None
) -> Attachment:
    kind: Kind = "directory" if os.path.isdir(path) else "file"

    def failed(why: str) -> Attachment:
        return Attachment(raw, path, shown, kind, f"(not attached: {why})", error=why)

    if read_filter is not None:
        why = read_filter(path)
        if why:
            return failed(why)
    try:
        if kind == "directory":
            return Attachment(raw, path, shown, kind, list_directory(path, shown))
        if is_image_file(path) and (img := attach_image(path, shown, images)) is not None:
            return Attachment(raw, path, shown, kind, img.body, error=img.error, image=img.ref)
        if budget < 2 * NOTICE_BYTES:
            return failed("this message's attachments are already large; read it with the read tool")
        return Attachment(raw, path, shown, kind, read_attachment(path, shown, min(budget, MAX_BYTES)))
    except ToolError as exc:
        return failed(str(exc).rstrip("."))
    except OSError as exc:
        return failed(f"cannot read {shown}: {exc.strerror or exc}")


def split_attachments(text: str) -> tuple[str, list[str]]:
    """A delivered message taken apart: (the text as typed, the attachment blocks). For a front end
    that echoes what was typed and shows the attachments apart."""
    m = _BLOCK_START.search(text)
    if m is None:
        return text, []
    head, tail = text[: m.start()], text[m.start() + 2 :]
    blocks = re.split(r'\n\n(?=<(?:(?:file|directory) path|resource uri)=")', tail)
    shape = r'<(file|directory) path="[^"]*">\n.*\n</\1>\Z|<resource uri="[^"]*"[^>\n]*>\n.*\n</resource>\Z'
    if not all(re.match(shape, b, re.S) for b in blocks):
        return text, []
    return head, blocks
