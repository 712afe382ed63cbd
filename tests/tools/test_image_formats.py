"""Image formats by magic bytes, dimensions from headers without Pillow, the limits, and the token
estimate of each provider's rule."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from owltui.agent.context import CHARS_PER_TOKEN, ITEM_OVERHEAD, item_chars
from owltui.agent.imagecost import anthropic_tokens, image_tokens, openai_tokens
from owltui.agent.imagefmt import dimensions, sniff
from owltui.agent.messages import UserMessage
from owltui.tools.files.imageload import ImageError, NotAnImage, describe, image_ref

FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


def encoded(fmt: str, size: tuple[int, int], **opts: object) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (10, 120, 200)).save(out, fmt, **opts)
    return out.getvalue()


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("size", [(1, 1), (321, 123), (1000, 7)])
def test_sniff_and_dimensions_from_the_header(fmt: str, size: tuple[int, int]) -> None:
    data = encoded(fmt, size)
    assert sniff(data) == FORMATS[fmt]
    assert dimensions(data, FORMATS[fmt]) == size


def test_webp_lossless_and_extended_headers() -> None:
    assert dimensions(encoded("WEBP", (77, 33), lossless=True), "image/webp") == (77, 33)
    out = io.BytesIO()
    Image.new("RGBA", (50, 20), (1, 2, 3, 100)).save(out, "WEBP", exif=b"Exif\x00\x00")  # VP8X
    assert out.getvalue()[12:16] == b"VP8X"
    assert dimensions(out.getvalue(), "image/webp") == (50, 20)


def test_progressive_jpeg_with_exif_before_the_frame() -> None:
    data = encoded("JPEG", (640, 480), progressive=True, exif=b"Exif\x00\x00" + b"\x00" * 5000)
    assert dimensions(data, "image/jpeg") == (640, 480)


def test_text_named_png_is_not_an_image() -> None:
    assert sniff(b"just some text\n") is None
    with pytest.raises(NotAnImage):
        image_ref(b"just some text\n", "notes.png")


def test_truncated_headers_are_none() -> None:
    for fmt, media in FORMATS.items():
        assert dimensions(encoded(fmt, (5, 5))[:9], media) is None


def test_over_the_limits_without_pillow_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_pil(name: str, *args: object, **kwargs: object) -> object:
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    data = encoded("PNG", (3000, 10))
    monkeypatch.setattr(builtins, "__import__", no_pil)
    with pytest.raises(ImageError, match=r"install owltui\[images\]"):
        image_ref(data, "wide.png")
    small = image_ref(encoded("PNG", (30, 10)), "small.png")  # within the limits: sent as it is
    assert small.original is None


def test_anthropic_token_rule() -> None:
    assert anthropic_tokens(1000, 1000) == 1334  # ceil(1e6 / 750)
    assert anthropic_tokens(200, 200) == 54
    # over 1568 px / 1.15 MP: scaled down first, so never more than ~1.15 MP / 750
    assert anthropic_tokens(4000, 3000) == anthropic_tokens(1238, 928)
    assert anthropic_tokens(4000, 3000) <= 1_150_000 / 750 + 1


def test_openai_tile_rule() -> None:
    assert openai_tokens(512, 512) == 85 + 170  # one tile
    assert openai_tokens(1024, 1024) == 85 + 170 * 4  # short side 768: 768×768, 2×2 tiles
    assert openai_tokens(2048, 4096) == 85 + 170 * 6  # fit 1024×2048, then 768×1536: 2×3 tiles


def test_budget_counts_images_by_the_larger_rule() -> None:
    ref = image_ref(encoded("PNG", (1000, 1000)), "a.png")
    msg = UserMessage(text="hi", images=(ref,))
    assert image_tokens(ref) == max(anthropic_tokens(1000, 1000), openai_tokens(1000, 1000))
    assert item_chars(msg) == 2 + ITEM_OVERHEAD + image_tokens(ref) * CHARS_PER_TOKEN


def test_too_many_bytes_within_the_edge_is_reencoded_within_the_limit() -> None:
    import os

    from owltui.tools.files.imageload import MAX_BYTES

    noise = Image.frombytes("RGB", (1500, 1500), os.urandom(1500 * 1500 * 3))
    out = io.BytesIO()
    noise.save(out, "PNG")
    assert out.tell() > MAX_BYTES
    ref = image_ref(out.getvalue(), "noise.png")
    assert ref.media_type == "image/jpeg" and ref.size <= MAX_BYTES
    assert (ref.width, ref.height) == (1500, 1500) and ref.original == (1500, 1500)
    assert sniff(ref.data) == "image/jpeg"
    assert describe(ref) == "image noise.png 1500×1500 (re-encoded as JPEG to fit the size limit)"
