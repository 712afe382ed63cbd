"""``read`` of an image file: the image attached to the result for a model that accepts images
(downscaled where ``owltui.tools.files.imageload`` does), a clear error for one that does not. An image is
known by its magic bytes, so a ``.png`` that holds text is read as text."""

from __future__ import annotations

from pathlib import Path

from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.tools.files.imageload import ImageError, NotAnImage, describe, is_image_file, load_image


def read_image(path: Path, shown: str, ctx: ToolContext) -> ToolOutput | None:
    """The result for an image file, or None when the file is no image (read it as text). Blocking
    (reads the file): call it in the worker thread."""
    if not is_image_file(path):
        return None
    try:
        ref = load_image(path, shown)
    except NotAnImage:
        return None  # read's own check names it a binary file
    except ImageError as exc:
        raise ToolError(str(exc)) from None
    images = ctx.services.images
    refused = images.image_refusal() if images is not None else None
    if refused is not None:
        raise ToolError(f"{refused}. {shown} is an image, so read cannot show it.")
    line = f"{describe(ref)}, {ref.media_type}, {max(1, ref.size // 1024)} KB: attached below."
    details = {"path": shown, "image": describe(ref), "no_spill": True}
    return ToolOutput(line, images=(ref,), details=details)
