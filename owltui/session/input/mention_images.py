"""Images a user's message attaches: an ``@`` mention of an image file, and a pasted image path.

An image is known by its magic bytes (PNG, JPEG, GIF, WebP), never its name: ``@notes.png`` that
holds text is attached as text. The pasted-path rule: a line that holds nothing but an absolute or
``~`` path, bare or in single or double quotes (what a terminal pastes for a file dropped on it;
backslash-escaped spaces are undone), naming an existing image file, attaches that image like
``@path``. A path inside a sentence stays text: only a mention (``@``) attaches there.

For a model without image input the attachment is refused with the reason (never dropped
silently); the message keeps a block naming the file either way, so the model knows which image
is which.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from owltui.agent.messages import ImageRef
from owltui.agent.services import ImageInput
from owltui.tools.files.imageload import ImageError, NotAnImage, describe, is_image_file, load_image

_PASTED = re.compile(r"""^[ \t]*(?:'([/~][^'\n]*)'|"([/~][^"\n]*)"|([/~](?:\\ |\S)*))[ \t]*$""", re.M)


class TextOnly:
    """The ``images`` of a caller whose messages carry text only: image files are refused, with
    the reason, instead of being dropped on the way."""

    def image_refusal(self) -> str | None:
        return "this front end sends text only, so images are not attached here"


TEXT_ONLY = TextOnly()


@dataclass(frozen=True)
class ImageAttachment:
    """What an image mention became: the image, or why not (``error``), and the block's body."""

    ref: ImageRef | None
    body: str
    error: str | None = None


def pasted_paths(text: str) -> list[tuple[str, Path]]:
    """Lines that are an absolute or ``~`` path of an existing image file: (as typed, path)."""
    out: list[tuple[str, Path]] = []
    for m in _PASTED.finditer(text):
        raw = m.group(1) or m.group(2) or m.group(3).replace("\\ ", " ")
        path = Path(os.path.normpath(os.path.expanduser(raw)))
        if path.is_absolute() and path.is_file() and is_image_file(path):
            out.append((raw, path))
    return out


def attach_image(path: Path, shown: str, images: ImageInput | None) -> ImageAttachment | None:
    """The image at ``path`` for the message, or the refusal (a model without image input, a file
    over the limits); None when its header is no image's (attach it as any other file)."""
    try:
        ref = load_image(path, shown)
    except NotAnImage:
        return None
    except ImageError as exc:
        why = str(exc).rstrip(".")
        return ImageAttachment(None, f"(not attached: {why})", error=why)
    refused = images.image_refusal() if images is not None else None
    if refused is not None:
        return ImageAttachment(None, f"(not attached: {refused})", error=refused)
    return ImageAttachment(ref, f"({describe(ref)}: attached as an image)")
