import os
from pathlib import Path

import pytest

from owltui.agent.tool import ToolError
from owltui.tools.search import tools as search
from owltui.tools.search.tools import FindParams, FindTool, GrepParams, GrepTool, LsParams, LsTool
from tests.tools.conftest import MakeCtx

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(ws: Path) -> Path:
    files = {
        ".gitignore": "*.log\nbuild/\n",
        "src/app.py": "import os\n\ndef main():\n    return TODO_value\n",
        "src/util.py": "def helper():\n    pass  # todo: later\n",
        "src/.gitignore": "secret.py\n",
        "src/secret.py": "TODO hidden\n",
        "build/out.py": "TODO built\n",
        "debug.log": "TODO logged\n",
        "docs/readme.md": "TODO docs\n",
        ".git/config": "TODO git\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (ws / "blob.bin").write_bytes(b"TODO\x00\x01")
    return ws


async def grep(make_ctx: MakeCtx, **kw: object) -> str:
    out = await GrepTool().run(GrepParams.model_validate(kw), make_ctx())
    return out.content


async def test_grep_respects_gitignore_and_skips_binary(tree: Path, make_ctx: MakeCtx) -> None:
    out = await grep(make_ctx, pattern="TODO")
    assert out.splitlines() == ["docs/readme.md:1: TODO docs", "src/app.py:4:     return TODO_value"]


async def test_grep_ignore_case_glob_and_path(tree: Path, make_ctx: MakeCtx) -> None:
    out = await grep(make_ctx, pattern="todo", ignore_case=True, glob="*.py")
    assert out.splitlines() == [
        "src/app.py:4:     return TODO_value",
        "src/util.py:2:     pass  # todo: later",
    ]
    out = await grep(make_ctx, pattern="def \\w+", path="src")
    assert out.splitlines() == ["src/app.py:3: def main():", "src/util.py:1: def helper():"]
    assert await grep(make_ctx, pattern="nothing-like-this") == "No matches."


async def test_grep_caps_matches_and_line_length(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "many.txt").write_text("".join(f"hit {i}\n" for i in range(300)))
    (ws / "long.txt").write_text("needle " + "x" * 2000 + "\n")
    out = await grep(make_ctx, pattern="^hit")
    assert out.count("many.txt:") == 100
    assert out.endswith("[200 more matching lines not shown (300 in all); narrow the pattern, path or glob.]")
    out = await grep(make_ctx, pattern="needle")
    assert "[line truncated]" in out and len(out) < 600


async def test_grep_invalid_regex(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match="regex parse error"):  # rg's own message
        await grep(make_ctx, pattern="(unclosed")
    with pytest.raises(ToolError, match="look-around"):
        await grep(make_ctx, pattern="a(?=b)")


async def test_find_globs_respect_gitignore(tree: Path, make_ctx: MakeCtx) -> None:
    out = await FindTool().run(FindParams(pattern="*.py"), make_ctx())
    assert out.content.splitlines() == ["src/app.py", "src/util.py"]
    out = await FindTool().run(FindParams(pattern="src/*"), make_ctx())
    assert out.content.splitlines() == ["src/.gitignore", "src/app.py", "src/util.py"]
    out = await FindTool().run(FindParams(pattern="docs"), make_ctx())
    assert out.content == "docs/"
    out = await FindTool().run(FindParams(pattern="*.py", path="src"), make_ctx())
    assert out.content.splitlines() == ["src/app.py", "src/util.py"]
    out = await FindTool().run(FindParams(pattern="*.rs"), make_ctx())
    assert out.content.startswith("No files match")


async def test_find_caps_results(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "d").mkdir()
    for i in range(1010):
        (ws / "d" / f"f{i:04d}.txt").touch()
    out = await FindTool().run(FindParams(pattern="*.txt"), make_ctx())
    assert out.content.count(".txt") == 1000
    assert out.content.endswith("[Results 1-1000 of 1010. Use offset=1001 to continue.]")
    out = await FindTool().run(FindParams(pattern="*.txt", offset=1001), make_ctx())
    assert out.content.splitlines()[0] == "d/f1000.txt"
    assert out.content.endswith("d/f1009.txt\n\n[Results 1001-1010 of 1010.]")


async def test_ls_sorted_with_slash_after_directories(tree: Path, make_ctx: MakeCtx) -> None:
    out = await LsTool().run(LsParams(), make_ctx())
    assert out.content.splitlines() == [
        ".git/",
        ".gitignore",
        "blob.bin",
        "build/",
        "debug.log",
        "docs/",
        "src/",
    ]
    out = await LsTool().run(LsParams(path="src"), make_ctx())
    assert out.content.splitlines() == [".gitignore", "app.py", "secret.py", "util.py"]


async def test_ls_caps_and_errors(ws: Path, make_ctx: MakeCtx) -> None:
    for i in range(520):
        (ws / f"e{i:03d}").touch()
    out = await LsTool().run(LsParams(), make_ctx())
    assert len(out.content.splitlines()) == 502
    assert out.content.endswith("[Entries 1-500 of 520. Use offset=501 to continue.]")
    out = await LsTool().run(LsParams(offset=501), make_ctx())
    assert out.content.splitlines()[:2] == ["e500", "e501"] and "[Entries 501-520 of 520.]" in out.content
    with pytest.raises(ToolError, match="not a directory"):
        await LsTool().run(LsParams(path="e001"), make_ctx())
    with pytest.raises(ToolError, match="not found"):
        await LsTool().run(LsParams(path="nope"), make_ctx())


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("test_?.py", "t/test_1.py", True),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
        ("docs", "docs/readme.md", False),
        ("*.{ts,tsx}", "a/b.tsx", True),
        ("*.{ts,tsx}", "a/b.js", False),
        ("/setup.py", "setup.py", True),
        ("/setup.py", "x/setup.py", False),
    ],
)
def test_glob_regex(pattern: str, path: str, hit: bool) -> None:
    assert bool(search.glob_regex(pattern).match(path)) is hit


# --- issue 11/12 -----------------------------------------------------------------------------------
async def test_non_utf8_names_in_ls_find_and_grep(ws: Path, make_ctx: MakeCtx) -> None:
    bad = os.fsdecode(b"bad_\xff.txt")
    (ws / bad).write_text("needle\n")
    (ws / os.fsdecode(b"dir_\xfe")).mkdir()
    (ws / os.fsdecode(b"dir_\xfe") / "x.txt").write_text("needle\n")
    (ws / "tab\there.txt").write_text("needle\n")
    ls = (await LsTool().run(LsParams(), make_ctx())).content
    assert ls.splitlines() == ["bad_\\xff.txt", "dir_\\xfe/", "tab␉here.txt"]
    found = (await FindTool().run(FindParams(pattern="*.txt"), make_ctx())).content
    assert found.splitlines() == ["bad_\\xff.txt", "dir_\\xfe/x.txt", "tab␉here.txt"]
    assert (await FindTool().run(FindParams(pattern="bad_*"), make_ctx())).content == "bad_\\xff.txt"
    hits = await grep(make_ctx, pattern="needle")
    assert hits.splitlines() == [
        "bad_\\xff.txt:1: needle",
        "dir_\\xfe/x.txt:1: needle",
        "tab␉here.txt:1: needle",
    ]
    assert await grep(make_ctx, pattern="needle", path="dir_\\xfe") == "dir_\\xfe/x.txt:1: needle"
    for text in (ls, found, hits):
        text.encode("utf-8")  # never a surrogate


async def test_ls_marks_symlinks_and_directory_links(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "src").mkdir()
    (ws / "a.py").write_text("x")
    (ws / "srclink").symlink_to("src")
    (ws / "alink.py").symlink_to("a.py")
    (ws / "broken").symlink_to("nowhere")
    (ws / "loop").symlink_to("loop")
    out = (await LsTool().run(LsParams(), make_ctx())).content
    assert out.splitlines() == [
        "a.py",
        "alink.py -> a.py",
        "broken -> nowhere (broken)",
        "loop -> loop (broken)",
        "src/",
        "srclink/ -> src",
    ]


async def test_grep_glob_never_brings_back_ignored_files(tree: Path, make_ctx: MakeCtx) -> None:
    (tree / "src/sub").mkdir()
    (tree / "src/sub/deep.py").write_text("TODO deep\n")
    assert await grep(make_ctx, pattern="TODO", glob="*.log") == "No matches."  # debug.log is ignored
    assert await grep(make_ctx, pattern="TODO", glob="secret.py") == "No matches."
    out = await grep(make_ctx, pattern="TODO", glob="src/*.py")  # directly in src only
    assert out.splitlines() == ["src/app.py:4:     return TODO_value"]
    out = await grep(make_ctx, pattern="TODO", glob="src/**/*.py")
    assert out.splitlines() == ["src/app.py:4:     return TODO_value", "src/sub/deep.py:1: TODO deep"]
    out = await grep(make_ctx, pattern="TODO", glob="**/sub/*.py")
    assert out.splitlines() == ["src/sub/deep.py:1: TODO deep"]
    out = await grep(make_ctx, pattern="TODO", glob="!*.py")
    assert out.splitlines() == ["docs/readme.md:1: TODO docs"]
    out = await grep(make_ctx, pattern="TODO", glob="*.{md,py}")
    assert len(out.splitlines()) == 3
    with pytest.raises(ToolError, match="unclosed alternate group"):
        await grep(make_ctx, pattern="TODO", glob="*.{md")


async def test_grep_decodes_like_read_and_handles_crlf(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "crlf.txt").write_bytes(b"value = 1  \r\nother\r\n")
    (ws / "u16.txt").write_bytes(b"\xff\xfe" + "value = 2\r\n".encode("utf-16-le"))
    (ws / "lat.txt").write_bytes(b"value = caf\xe9\n")
    (ws / "ctl.txt").write_bytes(b"value 10%\rvalue 100%\n\x0cvalue\n")
    (ws / "big.txt").write_bytes(b"x" * (21 * 1024 * 1024) + b"\nvalue = big\n")  # over 20 MB
    out = await grep(make_ctx, pattern="value")
    assert out.splitlines() == [
        "big.txt:2: value = big",
        "crlf.txt:1: value = 1  ",
        "ctl.txt:1: value 10%␍value 100%",
        "ctl.txt:2: ␌value",
        "lat.txt:1: value = café",
        "u16.txt:1: value = 2",
    ]
    assert await grep(make_ctx, pattern=r"1\s+$") == "crlf.txt:1: value = 1  "  # `$` before \r\n
    assert await grep(make_ctx, pattern=r"\s+$") == "crlf.txt:1: value = 1  "  # not every CRLF line


async def test_grep_page_fits_the_budget_and_counts_the_rest(ws: Path, make_ctx: MakeCtx) -> None:
    (ws / "wide.txt").write_text("".join(f"hit {i} " + "é" * 490 + "\n" for i in range(150)))
    out = await GrepTool().run(GrepParams(pattern="hit"), make_ctx())
    assert len(out.content.encode()) <= 50 * 1024 and out.content.count("\n") < 2000
    shown = out.details["shown"]
    assert shown < 100 and out.details["matches"] == 150 and out.details["no_spill"] is True
    assert f"[{150 - shown} more matching lines not shown (150 in all)" in out.content


async def test_grep_counts_matches_not_shown_under_a_path_glob(ws: Path, make_ctx: MakeCtx) -> None:
    for d in ("a/x", "a/y", "b/x"):
        (ws / d).mkdir(parents=True)
        for i in range(3):
            (ws / d / f"f{i}.py").write_text("hit\n" * 50)
    out = await GrepTool().run(GrepParams(pattern="hit", glob="*/x/*.py"), make_ctx())  # checked here
    assert out.details["matches"] == 300 and out.details["shown"] == 100
    assert out.content.endswith(
        "[200 more matching lines not shown (300 in all); narrow the pattern, path or glob.]"
    )
    assert {line.split("/")[1] for line in out.content.split("\n\n")[0].splitlines()} == {"x"}


async def test_grep_never_walks_a_directory_on_one_thread(
    ws: Path, make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rg --sort path`` walks on one thread: a directory is counted unsorted, and only the files
    of the first page (in the order --sort path gives) are read again, sorted; the page and the
    total are those of a sorted search."""
    from owltui.tools.search import grep_files
    from owltui.tools.search.rg import run_rg

    for d in ("b", "a", "a/z", "c"):
        for i in range(3):
            (ws / d).mkdir(parents=True, exist_ok=True)
            (ws / d / f"f{i}.txt").write_text("".join(f"hit {n}\n" for n in range(30)))
    (ws / "a.txt").write_text("hit top\n")  # after a/ in path order: components, not characters
    calls: list[list[str]] = []

    def recorded(args: list[str], *rest: object, **kw: object) -> object:
        calls.append(args)
        return run_rg(args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "run_rg", recorded)
    monkeypatch.setattr(grep_files, "run_rg", recorded)
    out = await grep(make_ctx, pattern="^hit")
    for args in calls:
        after = args[args.index("--") + 1 :]
        assert "--sort" not in args or all(a.endswith(".txt") for a in after), args  # files, no directory
    assert any("--count" in args for args in calls)
    names = [line.split(":")[0] for line in out.splitlines()[:100]]
    assert names == ["a/f0.txt"] * 30 + ["a/f1.txt"] * 30 + ["a/f2.txt"] * 30 + ["a/z/f0.txt"] * 10
    assert out.endswith("[261 more matching lines not shown (361 in all); narrow the pattern, path or glob.]")
