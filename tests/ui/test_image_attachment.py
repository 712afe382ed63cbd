"""The attachments line names an image with its size: ``image shot.png 1200×800 (downscaled to …)``."""

from __future__ import annotations

from pathlib import Path

from owltui.session.input.mentions import expand_mentions, split_attachments
from owltui.ui.widgets.blocks import AttachmentsBlock


def test_attachments_title_shows_images_with_their_size(tmp_path: Path) -> None:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3000, 1000)).save(out, "PNG")
    (tmp_path / "shot.png").write_bytes(out.getvalue())
    (tmp_path / "notes.txt").write_text("hi\n")
    sent = expand_mentions("@shot.png @notes.txt", tmp_path, images=None)
    _typed, blocks = split_attachments(sent.text)
    block = AttachmentsBlock(blocks)
    assert block.paths == ["image shot.png 3000×1000 (downscaled to 2048×683)", "notes.txt"]
