"""What an apply_patch approval shows: every file it touches (a move as source -> destination),
where a symlinked path really lands, and the patch itself above the question."""

from __future__ import annotations

from pathlib import Path

from owltui.ui.approval import build_view
from owltui.ui.call_preview import preview_lines

PATCH = (
    "*** Begin Patch\n*** Add File: new.py\n+print(1)\n*** Delete File: old.txt\n"
    "*** Update File: a.py\n*** Move to: lib/a.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch"
)


def test_the_approval_names_each_file_and_the_preview_is_the_patch(tmp_path: Path) -> None:
    view = build_view("c1", "apply_patch", {"input": PATCH}, workspace=tmp_path)
    fields = dict(view.fields)
    assert fields["files"] == "add new.py, delete old.txt, update a.py -> lib/a.py"
    assert "input" not in fields
    lines = preview_lines("apply_patch", {"input": PATCH})
    assert lines[0] == "*** Add File: new.py" and lines[-1] == "+    return 1"
    assert "*** Begin Patch" not in lines


def test_a_symlinked_target_is_shown_with_where_it_lands(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link.txt").symlink_to(outside)
    text = "*** Begin Patch\n*** Update File: link.txt\n@@\n-x\n+y\n*** End Patch"
    view = build_view("c1", "apply_patch", {"input": text}, workspace=ws)
    writes = [text for label, text in view.fields if label == "writes"]
    assert writes and str(outside) in writes[0]


def test_hidden_characters_in_a_patch_are_warned_about(tmp_path: Path) -> None:
    text = "*** Begin Patch\n*** Add File: a.txt\n+evil\u202etxt\n*** End Patch"
    view = build_view("c1", "apply_patch", {"input": text}, workspace=tmp_path)
    assert any("patch" in w for w in view.warnings)
