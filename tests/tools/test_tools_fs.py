import os
import stat
from pathlib import Path

import pytest

from owltui.agent.tool import ToolError
from owltui.tools.fs import EditParams, EditTool, ReadParams, ReadTool, WriteParams, WriteTool

from .conftest import MakeCtx

pytestmark = pytest.mark.anyio


async def read(ctx_factory: MakeCtx, **kw: object) -> str:
    out = await ReadTool().run(ReadParams.model_validate(kw), ctx_factory())
    assert not out.is_error
    return out.content


async def test_read_numbers_lines_with_offset_and_limit(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    assert await read(make_ctx, path="a.txt") == "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour"
    out = await read(make_ctx, path="a.txt", offset=2, limit=2)
    assert out.startswith("     2\ttwo\n     3\tthree")
    assert "[Showing lines 2-3 of 4. Use offset=4 to continue.]" in out


async def test_read_truncates_at_2000_lines(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    out = await read(make_ctx, path="big.txt")
    assert "  2000\tline 2000" in out and "line 2001" not in out
    assert "Use offset=2001 to continue." in out
    out = await read(make_ctx, path="big.txt", offset=4990)
    assert "  5000\tline 5000" in out and "continue" not in out


async def test_read_truncates_at_50_kb(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "wide.txt").write_text("".join(f"{i:04d}" + "x" * 200 + "\n" for i in range(1, 1001)))
    out = await read(make_ctx, path="wide.txt")
    assert len(out.encode()) <= 51 * 1024
    last = int(out.rsplit("Use offset=", 1)[1].split(" ")[0]) - 1
    assert 200 < last < 260
    assert f"[Showing lines 1-{last} of 1000." in out


async def test_read_cuts_a_huge_single_line(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "min.js").write_text("y" * 200_000 + "\nnext\n")
    out = await read(make_ctx, path="min.js")
    assert "longer than 50 KB" in out and "offset=2" in out
    assert len(out) < 52 * 1024


async def test_read_refuses_binary(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match="binary file"):
        await ReadTool().run(ReadParams(path="img.png"), make_ctx())


async def test_read_missing_file_suggests_close_names(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "config.py").write_text("x")
    (ws / "src" / "main.py").write_text("x")
    with pytest.raises(ToolError, match=r"File not found: src/confg\.py\. Did you mean: src/config\.py"):
        await ReadTool().run(ReadParams(path="src/confg.py"), make_ctx())
    with pytest.raises(ToolError, match=r"Did you mean: src/main\.py"):
        await ReadTool().run(ReadParams(path="main.py"), make_ctx())


async def test_read_errors(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "d").mkdir()
    (ws / "short.txt").write_text("a\n")
    with pytest.raises(ToolError, match="is a directory"):
        await ReadTool().run(ReadParams(path="d"), make_ctx())
    with pytest.raises(ToolError, match="past the end"):
        await ReadTool().run(ReadParams(path="short.txt", offset=5), make_ctx())


async def test_read_strips_escape_sequences(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "evil.txt").write_text("safe\x1b]0;pwned\x07 \x1b[2Jtext\x9b31m\n")
    assert await read(make_ctx, path="evil.txt") == "     1\tsafe text"


async def test_write_creates_parents(ws: Path, make_ctx: MakeCtx) -> None:
    out = await WriteTool().run(WriteParams(path="a/b/c.txt", content="hi\n"), make_ctx())
    assert (ws / "a/b/c.txt").read_text() == "hi\n"
    assert out.content.startswith("Created a/b/c.txt")
    mode = stat.S_IMODE((ws / "a/b/c.txt").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


async def test_write_is_atomic_and_keeps_mode(ws: Path, make_ctx: MakeCtx) -> None:
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    inode = script.stat().st_ino
    out = await WriteTool().run(WriteParams(path="run.sh", content="#!/bin/sh\necho new\n"), make_ctx())
    assert out.content.startswith("Overwrote run.sh")
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.stat().st_ino != inode  # replaced by rename, never written in place
    assert sorted(os.listdir(ws)) == ["run.sh"]  # no temp file left


async def test_write_through_symlink_keeps_link(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "real.txt").write_text("a")
    (ws / "link.txt").symlink_to("real.txt")
    await WriteTool().run(WriteParams(path="link.txt", content="b"), make_ctx())
    assert (ws / "link.txt").is_symlink() and (ws / "real.txt").read_text() == "b"


async def edit(make_ctx: MakeCtx, **kw: object) -> str:
    out = await EditTool().run(EditParams.model_validate(kw), make_ctx())
    assert not out.is_error
    return out.content


async def test_edit_unique_match_returns_diff(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "m.py").write_text("a = 1\nb = 2\nc = 3\n")
    out = await edit(make_ctx, path="m.py", old_text="b = 2", new_text="b = 20")
    assert (ws / "m.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert "Replaced 1 occurrence in m.py" in out
    assert "-b = 2\n+b = 20" in out


async def test_edit_not_found(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "m.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ToolError, match="not found"):
        await EditTool().run(EditParams(path="m.py", old_text="nothing", new_text="x"), make_ctx())
    with pytest.raises(ToolError, match="whitespace is ignored"):
        await EditTool().run(
            EditParams(path="m.py", old_text="def f():\n  return 1", new_text="x"), make_ctx()
        )


async def test_edit_several_matches_says_how_many(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "m.py").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolError, match="matches 3 times"):
        await EditTool().run(EditParams(path="m.py", old_text="x = 1", new_text="x = 2"), make_ctx())
    assert (ws / "m.py").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_edit_replace_all(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "m.py").write_text("x = 1\nx = 1\ny\n")
    out = await edit(make_ctx, path="m.py", old_text="x = 1", new_text="x = 2", replace_all=True)
    assert (ws / "m.py").read_text() == "x = 2\nx = 2\ny\n"
    assert "Replaced 2 occurrences" in out


async def test_edit_keeps_crlf(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await edit(make_ctx, path="w.txt", old_text="one\ntwo\n", new_text="uno\ndos\nmas\n")
    assert (ws / "w.txt").read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"


async def test_edit_keeps_bom(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "b.txt").write_bytes(b"\xef\xbb\xbfhello world\n")
    await edit(make_ctx, path="b.txt", old_text="hello", new_text="goodbye")
    assert (ws / "b.txt").read_bytes() == b"\xef\xbb\xbfgoodbye world\n"


async def test_edit_no_change(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "m.py").write_text("a = 1\n")
    with pytest.raises(ToolError, match="No change"):
        await EditTool().run(EditParams(path="m.py", old_text="a = 1", new_text="a = 1"), make_ctx())


async def test_edit_keeps_mode_and_missing_file(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "x.sh").write_text("echo a\n")
    (ws / "x.sh").chmod(0o700)
    await edit(make_ctx, path="x.sh", old_text="a", new_text="b")
    assert stat.S_IMODE((ws / "x.sh").stat().st_mode) == 0o700
    with pytest.raises(ToolError, match=r"File not found: y\.sh\. Did you mean: x\.sh"):
        await EditTool().run(EditParams(path="y.sh", old_text="a", new_text="b"), make_ctx())
