"""An image file made into an ``ImageRef`` to attach: the format by its magic bytes, the size read
from the header, the limits, and a downscale with Pillow when it is installed (the optional
``owltui[images]`` extra). Without Pillow an image within the limits is sent as it is and one over
them is refused with a line naming the extra: resampling and re-encoding four formats well is
Pillow's job, not something to write here.

The limits are the strictest of the two wire formats': 3.75 MB of bytes per image, so that its
base64 text stays within Anthropic's 5 MB (which it measures on the base64 data; OpenAI takes
20 MB), and a long edge of 2048 px (OpenAI's high-detail fit; Anthropic scales anything over
1568 px down itself and refuses 8000 px). Files over 20 MB are not read at all.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from pathlib import Path

from owltui.agent.imagefmt import dimensions, sniff
from owltui.agent.messages import ImageRef

MAX_FILE = 20 * 1024 * 1024
MAX_BYTES = 5 * 1024 * 1024 * 3 // 4  # base64 makes 4 characters of 3 bytes
MAX_EDGE = 2048
INSTALL = "install owltui[images] (Pillow) to have it downscaled"


class ImageError(Exception):
    """An image that cannot be attached; the message is one line for the user or the model."""


class NotAnImage(ImageError):
    """The bytes start like an image but their header is no valid one (a binary file, not an
    image: ``read`` says so as it does for any binary file)."""


def is_image_file(path: Path) -> bool:
    """True when the file starts with one of the four formats' magic bytes (a ``.png`` holding text
    is not an image)."""
    try:  # O_NONBLOCK: a FIFO never blocks; only a regular file is looked into
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and sniff(os.read(fd, 16)) is not None
    except OSError:
        return False
    finally:
        os.close(fd)


def refusal(model: str) -> str:
    """The one line a model without image input gets instead of an image."""
    return f"this model cannot see images (model {model}); switch to a model that accepts images with /model"


def _downscale(data: bytes, media_type: str) -> tuple[bytes, str, int, int] | None:
    """The image fitted in ``MAX_EDGE`` and re-encoded (PNG stays PNG, GIF becomes PNG, JPEG and
    WebP keep their format), or None when Pillow is not installed."""
    try:
        from PIL import Image
    except ImportError:
        return None
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        fitted = img.copy()
    fitted.thumbnail((MAX_EDGE, MAX_EDGE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if media_type == "image/jpeg":
        fitted.convert("RGB").save(out, "JPEG", quality=85)
    elif media_type == "image/webp":
        fitted.save(out, "WEBP", quality=85)
    else:
        media_type = "image/png"
        fitted.save(out, "PNG", optimize=True)
    if out.tell() > MAX_BYTES:  # still too big: JPEG is the smallest of the four
        out = io.BytesIO()
        fitted.convert("RGB").save(out, "JPEG", quality=80)
        media_type = "image/jpeg"
        if out.tell() > MAX_BYTES:
            raise ImageError(
                f"it is still over {MAX_BYTES // 1024} KB as a JPEG of {fitted.width}×{fitted.height}"
            )
    return out.getvalue(), media_type, fitted.width, fitted.height


def image_ref(data: bytes, name: str = "") -> ImageRef:
    """The bytes as an attachable image, downscaled when over the limits. ImageError when the
    bytes are no image of the four formats, a broken one, or too big without Pillow."""
    media_type = sniff(data)
    if media_type is None:
        raise NotAnImage(f"{name or 'the file'} is not a PNG, JPEG, GIF or WebP image.")
    size = dimensions(data, media_type)
    if size is None or min(size) < 1:
        raise NotAnImage(f"{name or 'the image'} has a broken {media_type} header.")
    width, height = size
    original: tuple[int, int] | None = None
    if len(data) > MAX_BYTES or max(width, height) > MAX_EDGE:
        try:
            done = _downscale(data, media_type)
        except ImageError as exc:
            raise ImageError(f"{name or 'the image'} cannot be made small enough: {exc}.") from None
        except Exception as exc:  # Pillow's errors for a file it cannot decode are of many kinds
            raise ImageError(f"{name or 'the image'} cannot be decoded: {exc}") from None
        if done is None:
            raise ImageError(
                f"{name or 'the image'} is {width}×{height} and {len(data) // 1024} KB, over the "
                f"limits ({MAX_EDGE} px, {MAX_BYTES / (1024 * 1024):.2f} MB); {INSTALL}."
            )
        original = (width, height)
        data, media_type, width, height = done
    return ImageRef(
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        width=width,
        height=height,
        size=len(data),
        name=name,
        original=original,
        data=data,
    )


def load_image(path: Path, name: str = "") -> ImageRef:
    """An image file as an ``ImageRef`` (see ``image_ref``); ImageError when it is over 20 MB or
    cannot be read."""
    shown = name or path.name
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE + 1)
    except OSError as exc:
        raise ImageError(f"cannot read {shown}: {exc.strerror or exc}.") from None
    if len(data) > MAX_FILE:
        raise ImageError(f"{shown} is over {MAX_FILE // (1024 * 1024)} MB; images that big are not read.")
    return image_ref(data, shown)


def describe(ref: ImageRef) -> str:
    """``image shot.png 1200×800``, with ``(downscaled to …)`` or ``(re-encoded …)`` when it was."""
    name = ref.name or ref.sha256[:12]
    if ref.original is None:
        return f"image {name} {ref.width}×{ref.height}"
    if ref.original == (ref.width, ref.height):  # too many bytes, not too many pixels
        kind = ref.media_type.removeprefix("image/").upper()
        return f"image {name} {ref.width}×{ref.height} (re-encoded as {kind} to fit the size limit)"
    return f"image {name} {ref.original[0]}×{ref.original[1]} (downscaled to {ref.width}×{ref.height})"
