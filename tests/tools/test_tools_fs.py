import os
import stat
from pathlib import Path

import anyio
import pytest

from owltui.agent.tool import ToolError
from owltui.tools.files.tools import EditParams, EditTool, ReadParams, ReadTool, WriteParams, WriteTool
from tests.tools.conftest import MakeCtx

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


async def test_read_pages_stay_under_the_spill_limits(ws: Path, make_ctx: MakeCtx) -> None:
    """A page with its notice has fewer than 2000 lines (the loop's large-result rule), so 1998 file
    lines at most when a notice follows; the offset arithmetic stays exact."""
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    out = await read(make_ctx, path="big.txt")
    assert "  1998\tline 1998" in out and "line 1999" not in out
    assert out.endswith("[Showing lines 1-1998 of 5000. Use offset=1999 to continue.]")
    assert out.count("\n") < 2000
    out = await read(make_ctx, path="big.txt", offset=1999)
    assert out.startswith("  1999\tline 1999\n")
    out = await read(make_ctx, path="big.txt", offset=4990)
    assert "  5000\tline 5000" in out and "continue" not in out
    (ws / "exact.txt").write_text("".join(f"{i}\n" for i in range(2000)))
    out = await read(make_ctx, path="exact.txt")
    assert out.count("\n") == 1999 and "continue" not in out  # the whole file, no notice


async def test_read_truncates_at_50_kb(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "wide.txt").write_text("".join(f"{i:04d}" + "x" * 200 + "\n" for i in range(1, 1001)))
    out = await read(make_ctx, path="wide.txt")
    assert len(out.encode()) <= 51 * 1024
    last = int(out.rsplit("Use offset=", 1)[1].split(" ")[0]) - 1
    assert 200 < last < 260
    assert f"[Showing lines 1-{last} of 1000." in out


async def test_read_a_huge_single_line_by_character_ranges(ws: Path, make_ctx: MakeCtx) -> None:
    line = "".join(f"{i:07d}" for i in range(30_000))  # 210,000 characters
    (ws / "min.js").write_text(line + "\nnext\n")
    out = await read(make_ctx, path="min.js")
    assert len(out.encode()) <= 50 * 1024 and out.count("\n") < 2000
    first = out.split("\n")[0].split("\t", 1)[1]
    assert line.startswith(first)
    note = out.rsplit("\n", 1)[1]
    assert note.startswith(
        f"[Line 1 has 210000 characters; characters 1-{len(first)} are shown (the file has 2 lines)."
    )
    assert note.endswith(f"Continue with offset=1, column={len(first) + 1}.]")
    got = first
    while True:  # follow the notices: the pieces put the line back together exactly
        column = len(got) + 1
        out = await read(make_ctx, path="min.js", offset=1, column=column)
        piece = out.split("\n")[0].split("\t", 1)[1]
        got += piece
        if "column=" not in out:
            break
    assert got == line
    assert "     2\tnext" in out  # the last piece goes on with the next lines
    with pytest.raises(ToolError, match="past the end of line 2"):
        await ReadTool().run(ReadParams(path="min.js", offset=2, column=9), make_ctx())


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


async def test_read_shows_control_characters_visibly(ws: Path, make_ctx: MakeCtx) -> None:
    """Nothing is dropped and nothing reaches the terminal raw: C0 controls as Control Pictures,
    C1 and invisible format characters as \\uXXXX, stray bytes as \\xNN."""
    (ws / "evil.txt").write_text("safe\x1b]0;pwned\x07 \x1b[2Jtext\x9b31m\n")
    assert await read(make_ctx, path="evil.txt") == "     1\tsafe␛]0;pwned␇ ␛[2Jtext\\u009b31m"
    (ws / "cr.txt").write_bytes(b"progress 10%\rprogress 100%\n\x0cpage\tTab\x7f\xe2\x80\x8b\n")
    out = await read(make_ctx, path="cr.txt")
    assert out == "     1\tprogress 10%␍progress 100%\n     2\t␌page\tTab␡\\u200b"
    (ws / "late.txt").write_bytes(b"x" * 70_000 + b"\nNUL\x00here\n")  # a NUL past the 64 KB head
    out = await read(make_ctx, path="late.txt", offset=2)
    assert out == "     2\tNUL␀here"
    (ws / "bad.txt").write_bytes("naïve \u00e9\n".encode() + b"stray \xff byte\n")
    out = await read(make_ctx, path="bad.txt")
    assert out == "     1\tnaïve é\n     2\tstray \\xff byte"
    assert not any("\ud800" <= ch <= "\udfff" for ch in out)


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


# --- issue 11/12: special files, encodings, visible text, paging -----------------------------------
async def test_read_opens_regular_files_only(ws: Path, make_ctx: MakeCtx, tmp_path: Path) -> None:
    import socket

    os.mkfifo(ws / "pipe")
    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        (ws / "sock").symlink_to(sock_path)
        (ws / "to_pipe").symlink_to("pipe")
        cases = {
            "pipe": "named pipe",
            "to_pipe": "named pipe",
            "sock": "socket",
            "/dev/stdin": "",
            "/dev/zero": "character device",
            "/proc/self/fd/0": "",
        }
        with anyio.fail_after(10):  # a FIFO must not block
            for path, kind in cases.items():
                with pytest.raises(ToolError, match=f"{kind}.*regular files only"):
                    await ReadTool().run(ReadParams(path=path), make_ctx())
            with pytest.raises(ToolError, match="regular files only"):
                await EditTool().run(EditParams(path="pipe", old_text="a", new_text="b"), make_ctx())
            with pytest.raises(ToolError, match="regular files only"):
                await WriteTool().run(WriteParams(path="pipe", content="x"), make_ctx())
        assert stat.S_ISFIFO(os.stat(ws / "pipe").st_mode)  # still the pipe, not replaced
    finally:
        server.close()


async def test_file_work_runs_off_the_event_loop(
    ws: Path, make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from owltui.tools.files import put
    from owltui.tools.files import tools as fs

    threads: list[bool] = []
    real_page, real_atomic = fs.read_page, put.atomic_write

    def page(*a: object, **kw: object) -> object:
        threads.append(threading.current_thread() is threading.main_thread())
        return real_page(*a, **kw)  # type: ignore[arg-type]

    def atomic(*a: object, **kw: object) -> object:
        threads.append(threading.current_thread() is threading.main_thread())
        return real_atomic(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fs, "read_page", page)
    monkeypatch.setattr(put, "atomic_write", atomic)
    (ws / "a.txt").write_text("x\n")
    await read(make_ctx, path="a.txt")
    await edit(make_ctx, path="a.txt", old_text="x", new_text="y")
    await WriteTool().run(WriteParams(path="a.txt", content="z"), make_ctx())
    assert threads == [False, False, False]


READ_RSS_SCRIPT = """
import resource, sys, anyio
from pathlib import Path
from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext
from owltui.tools.files.tools import ReadParams, ReadTool
ws = Path(sys.argv[1])
ctx = ToolContext(workspace=ws, cancel=CancelToken())
async def main():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    first = await ReadTool().run(ReadParams(path="one.txt"), ctx)
    last = await ReadTool().run(ReadParams(path="one.txt", offset=1, column=119_999_000), ctx)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(before, after, len(first.content), repr(last.content))
anyio.run(main)
"""


def test_read_memory_is_bounded_by_the_page(ws: Path) -> None:
    """A 120 MB file with no newline: the first page and a page at its end cost a few MB."""
    import ast
    import subprocess
    import sys

    with (ws / "one.txt").open("wb") as fh:
        block = b"0123456789" * 100_000
        for _ in range(120):
            fh.write(block)
    done = subprocess.run(
        [sys.executable, "-c", READ_RSS_SCRIPT, str(ws)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    before, after, size, last = done.stdout.split(" ", 3)
    assert int(size) <= 50 * 1024
    # the page at the end is the line's last 1,001 characters (from character 119,999,000), nothing more
    assert ast.literal_eval(last) == "     1\t9" + "0123456789" * 100
    assert int(after) - int(before) < 40_000, done.stdout  # KB: far below the 120 MB line


ENCODED = {
    "crlf": (b"a = 1\r\nb = 2\r\nc = 3\r\n", None),
    "bom": (b"\xef\xbb\xbfimport os\r\nx = 1\r\n", None),
    "latin1": (b"caf\xe9 = 1\n\x93quoted\x94 = 2\n", "Windows-1252 (Latin-1)"),
    "utf16le": (b"\xff\xfe" + "héllo = 1\r\nwörld = 2\r\n".encode("utf-16-le"), "UTF-16 LE with BOM"),
    "utf16be": (b"\xfe\xff" + "héllo = 1\nwörld = 2\n".encode("utf-16-be"), "UTF-16 BE with BOM"),
}


async def test_read_decodes_and_names_encodings(ws: Path, make_ctx: MakeCtx) -> None:
    for name, (data, _label) in ENCODED.items():
        (ws / name).write_bytes(data)
    assert await read(make_ctx, path="crlf") == (
        "     1\ta = 1\n     2\tb = 2\n     3\tc = 3\n\n[CRLF line endings; edit and write keep it.]"
    )
    out = await read(make_ctx, path="bom")
    assert out.startswith("     1\timport os\n     2\tx = 1\n")  # the BOM is not shown
    assert "[UTF-8 with BOM, CRLF line endings; edit and write keep them.]" in out
    assert (await read(make_ctx, path="latin1")).startswith("     1\tcafé = 1\n     2\t“quoted” = 2")
    out = await read(make_ctx, path="utf16le")
    assert out == (
        "     1\théllo = 1\n     2\twörld = 2\n\n[UTF-16 LE with BOM, CRLF line endings; edit and write keep them.]"
    )
    assert (await read(make_ctx, path="utf16be")).startswith(
        "     1\théllo = 1\n     2\twörld = 2\n\n[UTF-16 BE"
    )
    out = await ReadTool().run(ReadParams(path="latin1"), make_ctx())
    assert out.details["encoding"] == "Windows-1252 (Latin-1)" and out.details["no_spill"] is True


@pytest.mark.parametrize(
    ("name", "old", "new", "expected"),
    [
        ("crlf", "b = 2", "x = 1\ny = 2", b"a = 1\r\nx = 1\r\ny = 2\r\nc = 3\r\n"),
        ("crlf", "b = 2\r\n", "b = 3\n", b"a = 1\r\nb = 3\r\nc = 3\r\n"),  # CRLF old, LF new
        ("crlf", "a = 1\nb = 2\n", "z\n", b"z\r\nc = 3\r\n"),  # LF old (as read shows it)
        ("bom", "\ufeffimport os", "import sys", b"\xef\xbb\xbfimport sys\r\nx = 1\r\n"),  # BOM copied
        ("bom", "import os\n", "import re\nimport os\n", b"\xef\xbb\xbfimport re\r\nimport os\r\nx = 1\r\n"),
        ("latin1", "café", "thé", b"th\xe9 = 1\n\x93quoted\x94 = 2\n"),
        ("latin1", "“quoted” = 2", "«q» = 3", b"caf\xe9 = 1\n\xabq\xbb = 3\n"),
        (
            "utf16le",
            "wörld = 2",
            "wörld = 3\nzwei = 4",
            b"\xff\xfe" + "héllo = 1\r\nwörld = 3\r\nzwei = 4\r\n".encode("utf-16-le"),
        ),
        ("utf16be", "héllo", "hallo", b"\xfe\xff" + "hallo = 1\nwörld = 2\n".encode("utf-16-be")),
    ],
)
async def test_edit_round_trips_encodings_and_line_endings(
    ws: Path, make_ctx: MakeCtx, name: str, old: str, new: str, expected: bytes
) -> None:
    (ws / name).write_bytes(ENCODED[name][0])
    await edit(make_ctx, path=name, old_text=old, new_text=new)
    assert (ws / name).read_bytes() == expected


async def test_edit_accepts_text_as_read_shows_it(ws: Path, make_ctx: MakeCtx) -> None:
    data = b"progress 10%\rprogress 100%\r\n\x0cpage \x1b[1mbold\r\nstray \xff byte\r\nna\xc3\xafve caf\xc3\xa9\r\n"
    (ws / "c.txt").write_bytes(data)
    shown = await read(make_ctx, path="c.txt")
    lines = [row.split("\t", 1)[1] for row in shown.split("\n\n")[0].split("\n")]
    assert lines == ["progress 10%␍progress 100%", "␌page ␛[1mbold", "stray \\xff byte", "naïve café"]
    out = await edit(
        make_ctx,
        path="c.txt",
        old_text="\n".join(lines[:3]),
        new_text="progress 10%␍progress 50%\n␌page ␛[1mbold\nstray \\xff bytes",
    )
    assert (ws / "c.txt").read_bytes() == (
        b"progress 10%\rprogress 50%\r\n\x0cpage \x1b[1mbold\r\nstray \xff bytes\r\nna\xc3\xafve caf\xc3\xa9\r\n"
    )
    assert "-progress 10%␍progress 100%\n+progress 10%␍progress 50%" in out  # diff split on \n only
    assert "\r" not in out and "\x0c" not in out and "\x1b" not in out
    # text that merely looks like a visible form is matched literally and kept literal
    (ws / "lit.py").write_text('s = "\\\\xff ␍"\n')
    await edit(make_ctx, path="lit.py", old_text='"\\\\xff ␍"', new_text='"\\\\xfe ␍"')
    assert (ws / "lit.py").read_text() == 's = "\\\\xfe ␍"\n'


async def test_edit_mixed_line_endings_follow_the_replaced_text(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "m.txt").write_bytes(b"a\r\nb\r\nc\nd\n")
    await edit(make_ctx, path="m.txt", old_text="c\n", new_text="c1\nc2\n")
    assert (ws / "m.txt").read_bytes() == b"a\r\nb\r\nc1\nc2\nd\n"


async def test_write_keeps_encoding_bom_and_line_endings(ws: Path, make_ctx: MakeCtx) -> None:
    for name, (data, _label) in ENCODED.items():
        (ws / name).write_bytes(data)
    await WriteTool().run(WriteParams(path="crlf", content="x\ny\n"), make_ctx())
    assert (ws / "crlf").read_bytes() == b"x\r\ny\r\n"
    await WriteTool().run(WriteParams(path="bom", content="é\n"), make_ctx())
    assert (ws / "bom").read_bytes() == b"\xef\xbb\xbf\xc3\xa9\r\n"
    out = await WriteTool().run(WriteParams(path="latin1", content="olé\n"), make_ctx())
    assert (ws / "latin1").read_bytes() == b"ol\xe9\n" and "kept as Windows-1252" in out.content
    await WriteTool().run(WriteParams(path="utf16le", content="z\n"), make_ctx())
    assert (ws / "utf16le").read_bytes() == b"\xff\xfe" + "z\r\n".encode("utf-16-le")
    with pytest.raises(ToolError, match="cannot hold '中'"):
        await WriteTool().run(WriteParams(path="latin1", content="中\n"), make_ctx())
    assert (ws / "latin1").read_bytes() == b"ol\xe9\n"  # untouched
    await WriteTool().run(WriteParams(path="new.txt", content="a\r\nb\n"), make_ctx())
    assert (ws / "new.txt").read_bytes() == b"a\r\nb\n"  # new files: UTF-8, as given


async def test_non_utf8_file_names_are_shown_and_accepted(ws: Path, make_ctx: MakeCtx) -> None:
    bad = os.fsdecode(b"bad_\xff.txt")
    (ws / bad).write_text("hello\n")
    out = await ReadTool().run(ReadParams(path="bad_\\xff.txt"), make_ctx())
    assert out.content == "     1\thello" and out.details["path"] == "bad_\\xff.txt"
    out = await EditTool().run(EditParams(path="bad_\\xff.txt", old_text="hello", new_text="bye"), make_ctx())
    assert "bad_\\xff.txt" in out.content and (ws / bad).read_text() == "bye\n"
    out.content.encode("utf-8")  # no surrogates anywhere
    with pytest.raises(ToolError, match=r"Did you mean: bad_\\xff\.txt"):
        await ReadTool().run(ReadParams(path="bad_xff.txt"), make_ctx())
    with pytest.raises(ToolError, match="NUL"):
        await ReadTool().run(ReadParams(path="a\x00b"), make_ctx())


async def test_suggestions_are_case_insensitive_and_path_aware(ws: Path, make_ctx: MakeCtx) -> None:
    for name in ["src/app/models.py", "src/app/views.py", "lib/util/helpers.py", "README.md"]:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("x\n")
    (ws / "src/app/broken.py").symlink_to("nowhere.py")

    async def hint(path: str) -> str:
        with pytest.raises(ToolError) as info:
            await ReadTool().run(ReadParams(path=path), make_ctx())
        message = str(info.value)
        return message.split("Did you mean: ", 1)[1] if "Did you mean" in message else ""

    assert (await hint("readme.MD")).startswith("README.md")  # case only
    assert (await hint("SRC/App/Models.py")).startswith("src/app/models.py")
    assert (await hint("src/util/helpers.py")).startswith("lib/util/helpers.py")  # one directory away
    assert (await hint("src/app/model.py")).startswith("src/app/models.py")  # a typo next to it
    assert "broken.py" not in await hint("src/app/broken.py")  # a broken link never suggests itself


def _follow_pages(path: Path, budget: int, limit: int, seed: int) -> list[str]:
    """Read a whole file page by page, as a model following the notices would."""
    import threading

    from owltui.text.codec import UTF8
    from owltui.tools.files.paging import read_page

    lines: list[str] = []
    offset, column = 1, 1
    while True:
        fd = os.open(path, os.O_RDONLY)
        page = read_page(fd, UTF8, offset, limit, column, budget, threading.Event())
        assert page.lines, (seed, offset, column)
        for i, (number, text) in enumerate(page.lines):
            assert number == offset + i
            if i == 0 and column > 1:
                lines[-1] += text
            else:
                lines.append(text)
        last = page.lines[-1][0]
        if page.cut is not None and page.cut[0] < page.cut[1]:
            assert len(page.lines) == 1
            offset, column = last, page.cut[0] + 1
            continue
        column = 1
        offset = page.next_offset or last + 1
        if offset > page.total:
            return lines


def test_following_the_pages_gives_back_the_file_exactly(tmp_path: Path) -> None:
    import random

    rng = random.Random(12)
    for seed in range(150):
        rows = []
        for _ in range(rng.randint(1, 40)):
            size = rng.choice([0, 1, 5, 50, 300, 2000])
            rows.append("".join(rng.choice("abcé€😀 \t") for _ in range(rng.randint(0, size))))
        ending = rng.choice(["\n", "\r\n"])
        data = ending.join(rows) + rng.choice(["", ending])
        if not data:
            continue  # read says "(empty)"
        path = tmp_path / f"f{seed}.txt"
        path.write_bytes(data.encode())
        got = _follow_pages(path, budget=rng.choice([64, 200, 1000]), limit=rng.randint(1, 7), seed=seed)
        want = data.replace("\r\n", "\n").split("\n")
        if data.endswith(("\n",)):
            want.pop()
        assert got == want, seed


async def test_text_page_serves_other_pagers(ws: Path) -> None:
    """read_result (the loop's) can page a saved result with ``text_page``: a 3 MB single line is read
    in character ranges, every page under the loop's limits, each notice the exact next call."""
    import json

    from owltui.tools.files.paging import text_page

    line = "".join(f"{i:09d}," for i in range(300_000))  # 3 MB, no newline
    (ws / "r1.txt").write_text(line + "\nend\n")

    def resume(offset: int, column: int | None) -> str:
        args = {"result_id": "r1", "offset": offset} | ({"column": column} if column else {})
        return f"Continue with: read_result {json.dumps(args)}"

    got, offset, column, pages = "", 1, 1, 0
    while True:
        text, details = text_page(ws / "r1.txt", "r1", offset=offset, column=column, resume=resume)
        pages += 1
        assert len(text) <= 50 * 1024 and text.count("\n") < 2000 and details["no_spill"]
        got += text.split("\n")[0].split("\t", 1)[1]
        if "column" not in text:
            break
        call = json.loads(text.rsplit("read_result ", 1)[1].rstrip(".]"))
        offset, column = call["offset"], call["column"]
    assert got == line and pages == 60  # 50,168 characters a page
    assert text.split("\n")[1] == "     2\tend"
