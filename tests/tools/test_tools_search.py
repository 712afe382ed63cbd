import shutil
from pathlib import Path

import pytest

from owltui.agent.tool import ToolError
from owltui.tools import search
from owltui.tools.search import FindParams, FindTool, GrepParams, GrepTool, LsParams, LsTool

from .conftest import MakeCtx

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["python", "rg"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(search, "rg_path", lambda: None)
    elif shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    return str(request.param)


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


async def test_grep_respects_gitignore_and_skips_binary(tree: Path, make_ctx: MakeCtx, backend: str) -> None:
    out = await grep(make_ctx, pattern="TODO")
    assert out.splitlines() == ["docs/readme.md:1: TODO docs", "src/app.py:4:     return TODO_value"]


async def test_grep_ignore_case_glob_and_path(tree: Path, make_ctx: MakeCtx, backend: str) -> None:
    out = await grep(make_ctx, pattern="todo", ignore_case=True, glob="*.py")
    assert out.splitlines() == [
        "src/app.py:4:     return TODO_value",
        "src/util.py:2:     pass  # todo: later",
    ]
    out = await grep(make_ctx, pattern="def \\w+", path="src")
    assert out.splitlines() == ["src/app.py:3: def main():", "src/util.py:1: def helper():"]
    assert await grep(make_ctx, pattern="nothing-like-this") == "No matches."


async def test_grep_caps_matches_and_line_length(ws: Path, make_ctx: MakeCtx, backend: str) -> None:
    (ws / "many.txt").write_text("".join(f"hit {i}\n" for i in range(300)))
    (ws / "long.txt").write_text("needle " + "x" * 2000 + "\n")
    out = await grep(make_ctx, pattern="^hit")
    assert out.count("many.txt:") == 100 and "first 100 matches" in out
    out = await grep(make_ctx, pattern="needle")
    assert "[line truncated]" in out and len(out) < 600


async def test_grep_invalid_regex(ws: Path, make_ctx: MakeCtx, backend: str) -> None:
    (ws / "a.txt").write_text("x\n")
    with pytest.raises(ToolError):
        await grep(make_ctx, pattern="(unclosed")


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
    assert out.content.count(".txt") == 1000 and "first 1000 results" in out.content


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
    assert len(out.content.splitlines()) == 502 and "20 more entries not shown (520 in all)" in out.content
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
    ],
)
def test_glob_regex(pattern: str, path: str, hit: bool) -> None:
    assert bool(search.glob_regex(pattern).match(path)) is hit
