"""grep and find against the references on one tree with every hard case (issue 12).

The workspace sits inside a parent git repository and holds nested ignores with negations, a
``.ignore``, a ``.git/info/exclude`` entry, a tracked-but-ignored file, hidden files, symlinks (to a
file, to a directory, broken, looping), CRLF, BOM, UTF-16, Latin-1, control characters, a file over
20 MB, a long single line, a late NUL, binary data and a name that is not UTF-8.

``find`` must list exactly what ``rg --files`` lists, and what ``git ls-files --cached --others
--exclude-standard`` lists except for the documented differences (``.ignore`` is ripgrep's own,
tracked-but-ignored files are git's, symlinks are not listed). ``grep`` must report exactly the lines
``rg -n`` reports, for 20 patterns, with and without globs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext, ToolError
from owltui.text.codec import show_name
from owltui.tools.base import rg_path
from owltui.tools.search.globs import glob_regex
from owltui.tools.search.tools import FindParams, FindTool, GrepParams, GrepTool

pytestmark = pytest.mark.anyio

RG = rg_path()
FLAGS = ["--no-config", "--hidden", "--glob", "!.git"]

FILES: dict[str, bytes] = {
    ".gitignore": b"*.log\nbuild/\n!keep.log\n",
    ".ignore": b"only_rg_ignores.txt\n",
    "only_rg_ignores.txt": b"TODO dotignore\n",
    "excluded_by_info.txt": b"TODO info exclude\n",
    "x.parentignored": b"TODO parent\n",
    "debug.log": b"TODO logged\n",
    "keep.log": b"TODO kept log\n",
    "tracked.log": b"TODO tracked but ignored\n",
    "build/out.py": b"TODO built\n",
    "src/.gitignore": b"*_secret.py\n!important_secret.py\n*.tmp\n",
    "src/app.py": b"import os\n\ndef main():\n    return TODO_value  \n# done\n",
    "src/util.py": b"def helper():\n    pass  # todo: later\nx = 1\n",
    "src/db_secret.py": b"TODO secret\n",
    "src/important_secret.py": b"TODO important\n",
    "src/y.tmp": b"TODO tmp\n",
    "src/deep/.gitignore": b"!*.tmp\n",
    "src/deep/x.tmp": b"TODO deep tmp\n",
    "src/deep/mod.py": b"import sys\nvalue = 123\n",
    ".hidden/config.py": b"value = 1\n",
    ".hidden.txt": b"value hidden\n",
    "crlf.txt": b"value = 1  \r\nok\r\nline 7\r\n",
    "bom.py": b"\xef\xbb\xbfimport os\nvalue = 2\n",
    "u16.txt": b"\xff\xfe" + "héllo wörld\r\nvalue = 3\r\n".encode("utf-16-le"),
    "latin1.txt": b"caf\xe9 = value\n\x93quoted\x94\n",
    "ctl.txt": b"progress 10%\rprogress 100%\n\x0cpage value\n\x1b[31mred\x1b[0m\n",
    "many.txt": b"".join(b"line %d\n" % i for i in range(300)),
    "long.txt": b"ab" * 500_000 + b" needle " + b"cd" * 1000 + b"\n",
    "late_nul.txt": b"TODO before\n" + b"y" * 70_000 + b"\n\x00\nTODO after\n",
    "binary.bin": b"TODO\x00\x01\x02",
    "tab\there.txt": b"value\ttab\n",
    "a.c": b"int abc = 1;\n",
}


def git(cwd: Path, *args: str) -> bytes:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env).stdout


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or RG is None:
        pytest.skip("needs git and rg")
    parent = tmp_path_factory.mktemp("corpus") / "parent"
    ws = parent / "ws"
    ws.mkdir(parents=True)
    git(parent, "init", "-q")
    (parent / ".gitignore").write_text("*.parentignored\n")
    (parent / ".git/info").mkdir(parents=True, exist_ok=True)
    (parent / ".git/info/exclude").write_text("excluded_by_info.txt\n")
    for name, data in FILES.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(data)
    (ws / os.fsdecode(b"bad_\xff.txt")).write_bytes(b"TODO bad name\nvalue\n")
    with (ws / "big.txt").open("wb") as fh:  # over 20 MB, a match at its end
        fh.write(b"filler line\n" * (22 * 1024 * 1024 // 12))
        fh.write(b"TODO at the end of a big file\n")
    (ws / "link_dir").symlink_to("src")
    (ws / "link_file.py").symlink_to("src/app.py")
    (ws / "broken").symlink_to("nowhere")
    (ws / "loop").symlink_to("loop")
    (ws / "src/deep/up").symlink_to("../..")  # a directory loop
    git(parent, "add", "-f", "ws/tracked.log")
    git(parent, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "tracked")
    return ws


def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, cancel=CancelToken())


def rg(ws: Path, *args: str) -> tuple[int, bytes, bytes]:
    assert RG is not None
    done = subprocess.run([RG, *FLAGS, *args], cwd=ws, capture_output=True)
    return done.returncode, done.stdout, done.stderr


def names(raw: bytes, sep: bytes = b"\0") -> set[str]:
    return {show_name(os.fsdecode(p).removeprefix("./")) for p in raw.split(sep) if p}


async def find_all(ws: Path, pattern: str = "*") -> list[str]:
    out = await FindTool().run(FindParams(pattern=pattern), ctx(ws))
    lines = out.content.split("\n\n")[0].splitlines()
    assert "more" not in out.content and "offset=" not in out.content
    return lines


async def test_find_lists_exactly_what_rg_files_lists(corpus: Path) -> None:
    found = await find_all(corpus)
    files = {f for f in found if not f.endswith("/")}
    code, out, _ = rg(corpus, "--files", "--null")
    assert code == 0
    assert files == names(out)
    assert len(files) == len(found) - sum(f.endswith("/") for f in found)
    dirs = {f for f in found if f.endswith("/")}
    assert dirs == {".hidden/", "src/", "src/deep/"}  # directories holding listed files
    # the cases themselves
    for gone in (
        "debug.log",
        "build/out.py",
        "src/db_secret.py",
        "src/y.tmp",
        "only_rg_ignores.txt",
        "excluded_by_info.txt",
        "x.parentignored",
        "tracked.log",
        "link_dir",
        "loop",
    ):
        assert gone not in files, gone
    for kept in (
        "keep.log",
        "src/important_secret.py",
        "src/deep/x.tmp",
        ".hidden/config.py",
        ".hidden.txt",
        "big.txt",
        "bad_\\xff.txt",
        "tab␉here.txt",
        "u16.txt",
    ):
        assert kept in files, kept


async def test_find_matches_git_ls_files_but_for_the_documented_differences(corpus: Path) -> None:
    files = {f for f in await find_all(corpus) if not f.endswith("/")}
    listed = names(git(corpus, "ls-files", "-z", "--cached", "--others", "--exclude-standard"))
    assert files - listed == set()
    assert listed - files == {
        "only_rg_ignores.txt",  # .ignore is ripgrep's
        "tracked.log",  # tracked but ignored: git lists it, ripgrep cannot know
        "link_dir",
        "link_file.py",
        "broken",
        "loop",
        "src/deep/up",  # symlinks are not listed
    }


@pytest.mark.parametrize(
    "pattern",
    ["*.py", "src/*.py", "src/**/*.py", "**/deep/*", "*.{txt,log}", "src/", "*.tmp", "bad_*", "[!a-m]*.txt"],
)
async def test_find_globs_filter_rg_files(corpus: Path, pattern: str) -> None:
    _, out, _ = rg(corpus, "--files", "--null")
    every = names(out)
    dirs = {posixpath_parents(f) for f in every}
    regex = glob_regex(pattern)
    want_files = {f for f in every if regex.match(f)} if not pattern.endswith("/") else set()
    want_dirs = {d + "/" for ds in dirs for d in ds if regex.match(d)}
    assert set(await find_all(corpus, pattern)) == want_files | want_dirs


def posixpath_parents(name: str) -> frozenset[str]:
    parts = name.split("/")[:-1]
    return frozenset("/".join(parts[: i + 1]) for i in range(len(parts)))


PATTERNS = [
    "TODO", r"\s+$", "^import", "ok$", "caf", "(?i)HELLO", r"\bdef\b", "é", "[0-9]{3}", "^$",
    r"line \d+7", "x = 1", "value", "needle", r"\t", "wörld", "^#", "a.c", "secret", "quoted",
    "progress", "page", "red",
]  # fmt: skip

RECORD = re.compile(rb"^(.*?)\x00(\d+):(.*)$", re.S)


def rg_lines(ws: Path, pattern: str, *extra: str) -> list[tuple[str, int, bytes]]:
    code, out, err = rg(ws, "--crlf", "--line-number", "--with-filename", "--no-heading", "--null",
                        "--sort", "path", *extra, "--regexp", pattern)  # fmt: skip
    assert code in (0, 1), err
    rows = []
    for line in out.split(b"\n"):
        if m := RECORD.match(line):
            rows.append((show_name(os.fsdecode(m.group(1)).removeprefix("./")), int(m.group(2)), m.group(3)))
    # a binary file is skipped whole: rg, walking, shows the lines it read before it met the NUL
    # (late_nul.txt's first line) and then stops; grep shows none, as rg's own --count does
    binary = {
        show_name(os.fsdecode(m.group(1)).removeprefix("./"))
        for m in re.finditer(rb"^(.*?): WARNING: stopped searching binary file", out, re.M)
    }
    return [row for row in rows if row[0] not in binary]


async def grep_lines(ws: Path, **kw: object) -> tuple[list[tuple[str, int, str]], str]:
    out = await GrepTool().run(GrepParams.model_validate(kw), ctx(ws))
    rows = []
    for line in out.content.split("\n\n")[0].splitlines():
        if line == "No matches.":
            continue
        m = re.match(r"^(.*?):(\d+): (.*)$", line)
        assert m, line
        rows.append((m.group(1), int(m.group(2)), m.group(3)))
    return rows, out.content


@pytest.mark.parametrize("pattern", PATTERNS)
async def test_grep_reports_exactly_what_rg_reports(corpus: Path, pattern: str) -> None:
    want = rg_lines(corpus, pattern)
    got, content = await grep_lines(corpus, pattern=pattern)
    assert [(p, n) for p, n, _ in got] == [(p, n) for p, n, _ in want][:100]
    if len(want) > len(got):
        assert f"[{len(want) - len(got)} more matching lines not shown ({len(want)} in all);" in content
    for (_, _, shown), (_, _, raw) in zip(got, want, strict=False):
        text = raw.removesuffix(b"\r")
        if text.isascii() and text.decode().isprintable() and len(text) <= 500:
            assert shown == text.decode()


@pytest.mark.parametrize(
    ("pattern", "glob"),
    [("TODO", "*.py"), ("value", "src/**/*.py"), ("TODO", "*.log"), ("TODO", "src/*"), ("value", "**/deep/*.py"),
     ("TODO", "*_secret.py"), ("TODO", "*.tmp"), ("value|TODO", "*.{txt,py}"), ("TODO|value", "*/deep/*"),
     ("TODO", "*/*_secret.py"), ("TODO|value", "s*/**")],
)  # fmt: skip
async def test_grep_globs_select_among_the_files_rg_would_search(
    corpus: Path, pattern: str, glob: str
) -> None:
    """A glob narrows rg's own file set: never an ignored file (rg's -g would bring some back)."""
    regex = glob_regex(glob)
    want = [(p, n) for p, n, _ in rg_lines(corpus, pattern) if regex.match(p.replace("␉", "\t"))]
    got, _ = await grep_lines(corpus, pattern=pattern, glob=glob)
    assert [(p, n) for p, n, _ in got] == want


async def test_grep_ignore_case_and_paths(corpus: Path) -> None:
    want = [(p, n) for p, n, _ in rg_lines(corpus, "todo", "--ignore-case")]
    got, _ = await grep_lines(corpus, pattern="todo", ignore_case=True)
    assert [(p, n) for p, n, _ in got] == want[:100]
    # explicit paths: a directory rg would skip is searched when named, like rg does
    want = [(p, n) for p, n, _ in rg_lines(corpus, "TODO", "./build")]
    got, _ = await grep_lines(corpus, pattern="TODO", path="build")
    assert [(p, n) for p, n, _ in got] == want == [("build/out.py", 1)]
    got, _ = await grep_lines(corpus, pattern="TODO", path="link_file.py")  # a symlink named explicitly
    assert got == [("link_file.py", 4, "    return TODO_value  ")]


@pytest.mark.parametrize("pattern", ["(unclosed", "a(?=b)", r"\1", "[z-a]"])
async def test_invalid_patterns_give_rgs_message(corpus: Path, pattern: str) -> None:
    code, _, err = rg(corpus, "--regexp", pattern)
    assert code == 2
    with pytest.raises(ToolError) as info:
        await GrepTool().run(GrepParams(pattern=pattern), ctx(corpus))
    first = err.decode().strip().splitlines()[0]
    assert first in str(info.value)
