"""The images of a session, beside its file: ``<session>.images/<sha256>.<ext>``, content-addressed,
each written (atomically, fsynced) before the line that references it, so a line never names an
image that is not on disk. The JSONL line holds only the ``ImageRef``; reading a session puts the
bytes back (an image whose file is gone stays a reference, and the wire sends a placeholder)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from owltui.agent.imagefmt import EXTENSIONS
from owltui.agent.messages import ImageRef, Item, ToolResult, UserMessage
from owltui.files.atomic import atomic_write


def image_dir(session: Path) -> Path:
    return session.with_name(session.name.removesuffix(".jsonl") + ".images")


def image_path(session: Path, ref: ImageRef) -> Path:
    return image_dir(session) / f"{ref.sha256}.{EXTENSIONS.get(ref.media_type, 'bin')}"


def save_images(session: Path, item: Item) -> None:
    """Write the item's images not on disk yet (OSError when one cannot be written)."""
    if not isinstance(item, UserMessage | ToolResult) or not item.images:
        return
    folder = image_dir(session)
    folder.mkdir(mode=0o700, exist_ok=True)
    for ref in item.images:
        path = image_path(session, ref)
        if ref.data and not path.exists():
            atomic_write(path, ref.data)


def item_record(item: Item) -> dict[str, Any]:
    """The item as its line holds it: without images when it has none (old readers, small lines)."""
    data = item.model_dump(mode="json", exclude_none=True)
    if not data.get("images"):
        data.pop("images", None)
    return data


def _load(session: Path, ref: ImageRef) -> ImageRef:
    try:
        data = image_path(session, ref).read_bytes()
    except OSError:
        return ref
    if hashlib.sha256(data).hexdigest() != ref.sha256:
        return ref  # altered on disk: sent as the placeholder, never as another image
    return ref.model_copy(update={"data": data})


def load_images(session: Path, item: Item) -> Item:
    """The item with its images' bytes read back from the store."""
    if not isinstance(item, UserMessage | ToolResult) or not item.images:
        return item
    return item.model_copy(update={"images": tuple(_load(session, r) for r in item.images)})
