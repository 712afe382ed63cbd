"""Plain mode shows what an approval is about before it asks: an edit's diff and a write's first
lines, the same lines the TUI's tool block draws, each once (not again when the call runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.testing.scripted import Call, Step
from owltui.ui.widgets.tool_block import edit_diff
from tests.ui.test_plain import _plain_runtime, drive, until

pytestmark = pytest.mark.anyio

EDIT = {"path": "a.py", "old_text": "x = 1\ny = 2", "new_text": "x = 10\ny = 2"}
WRITE = {"path": "notes.md", "content": "# Notes\nfirst line\n"}


async def test_edit_and_write_approvals_show_what_they_change(tmp_path: Path) -> None:
    rt = _plain_runtime(
        tmp_path,
        [
            Step(calls=[Call("edit", EDIT, id="e1")]),
            Step(calls=[Call("write", WRITE, id="w1")]),
            Step(text="all done"),
        ],
    )
    source = tmp_path / "ws" / "a.py"
    source.write_text("x = 1\ny = 2\n")

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("change it\r")
        await until(lambda: any(line.startswith("? Allow edit?") for line in out), "edit asks")
        inp.send_text("/allow\r")
        await until(lambda: any(line.startswith("? Allow write?") for line in out), "write asks")
        inp.send_text("/allow\r")
        await until(lambda: "all done" in out, "done")
        inp.send_text("\x04")

    out = await drive(rt, script)
    assert source.read_text() == "x = 10\ny = 2\n"
    asked = next(i for i, line in enumerate(out) if line.startswith("? Allow edit?"))
    started = out.index("⏺ edit a.py")
    diff = edit_diff(EDIT)
    assert diff is not None
    tui_lines = diff.plain.split("\n")
    assert tui_lines[:3] == ["@@ -1,2 +1,2 @@", "-x = 1", "+x = 10"]
    assert out[asked - len(tui_lines) : asked] == [f"    {line}" for line in tui_lines]  # above the ask
    assert "  change: replaces 2 lines with 2 lines (the diff is above)" in out
    for line in tui_lines:  # once: not again after the approval, when the edit runs
        assert out.count(f"    {line}") == 1, line
    assert started > asked
    write_asked = next(i for i, line in enumerate(out) if line.startswith("? Allow write?"))
    assert out[write_asked - 3 : write_asked] == ["    # Notes", "    first line", "    "]
