"""``@path`` mentions (issue 13, item 2): the grammar, what is attached (the read tool's page, a
listing), what is refused (deny rules, outside the workspace), completion ranking, and the file
reaching the model in print mode (the real CLI against the fake OpenAI server) and in RPC mode."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.session.input.mention_completion import MentionCompleter, rank_paths
from owltui.session.input.mentions import (
    MAX_MENTIONS,
    expand_mentions,
    find_mentions,
    mention_token,
    split_attachments,
)
from owltui.tools.files.tools import ReadParams, ReadTool
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, cli_env, openai_args, run_cli


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "docs").mkdir()
    (ws / "src" / "app.py").write_text('def main():\n    print("hi")\n')
    (ws / "docs" / "my notes.txt").write_text("remember the milk\n")
    (ws / "README.md").write_text("# Demo\n")
    return ws


def mentioned(text: str) -> list[str]:
    return [m.path for m in find_mentions(text)]


# ---- the grammar ---------------------------------------------------------------------------------
def test_grammar_start_whitespace_quotes_not_mail_or_code() -> None:
    assert mentioned("@a.py and\t@b/c.md\n@d") == ["a.py", "b/c.md", "d"]
    assert mentioned('read @"my notes.txt" please') == ["my notes.txt"]
    assert mentioned("mail bob@example.com or x@y") == []  # @ inside a word
    assert mentioned("use `@property` here") == []  # inline code
    assert mentioned("```\n@decorator\ndef f(): ...\n```\nthen @a.py") == ["a.py"]  # fenced code
    assert mentioned('@ alone, @"" and @"unclosed') == []
    m = find_mentions("x @a.py.")[0]
    assert (m.start, m.end, m.quoted) == (2, 8, False)
    assert mention_token("src/a.py") == "@src/a.py" and mention_token("my notes.txt") == '@"my notes.txt"'


def test_trailing_punctuation_and_what_is_left_as_text(ws: Path) -> None:
    e = expand_mentions("see @src/app.py, then (@README.md) and @bob.", ws)
    assert e.attached == ["src/app.py"]  # "(@" is not after whitespace
    e = expand_mentions("see @src/app.py, @README.md. ok", ws)
    assert e.attached == ["src/app.py", "README.md"]
    e = expand_mentions("ask @bob about @nope/missing.py and @ghost.txt", ws)
    assert e.attachments == [] and e.text == e.typed  # nothing attached: the text goes as typed
    assert e.notes == [
        "@nope/missing.py: no such file; left as text",
        "@ghost.txt: no such file; left as text",
    ]


# ---- what is attached ----------------------------------------------------------------------------
@pytest.mark.anyio
async def test_a_file_is_attached_as_read_shows_it(ws: Path) -> None:
    typed = "explain @src/app.py please"
    e = expand_mentions(typed, ws)
    assert e.text.startswith(typed + "\n\n") and e.attached == ["src/app.py"]
    read = await ReadTool().run(ReadParams(path="src/app.py"), ToolContext(ws, CancelToken()))
    assert e.text.endswith(f'<file path="src/app.py">\n{read.content}\n</file>')
    assert split_attachments(e.text) == (typed, [e.attachments[0].block()])
    assert e.summary() == "attached src/app.py"


def test_encodings_and_long_files_page_like_read(ws: Path) -> None:
    (ws / "latin.txt").write_bytes("café\r\n".encode("cp1252"))
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    e = expand_mentions("@latin.txt @long.txt", ws)
    latin, long = (a.body for a in e.attachments)
    assert "café" in latin and "Windows-1252" in latin and "CRLF" in latin
    assert "  1998\tline 1998" in long and "line 1999" not in long  # read's page: under 2,000 lines
    assert long.endswith(
        '[Showing lines 1-1998 of 3000. The rest: read {"path": "long.txt", "offset": 1999}.]'
    )


def test_directory_listing_binary_and_duplicates(ws: Path) -> None:
    (ws / "logo.png").write_bytes(b"\x89PNG\x00\x00data")
    (ws / "src" / "pkg").mkdir()
    e = expand_mentions("@src @src/ @logo.png @src/app.py @./src/app.py", ws)
    by = {a.shown: a for a in e.attachments}
    assert list(by) == ["src/", "logo.png", "src/app.py"]  # each path once
    assert by["src/"].kind == "directory" and by["src/"].body == "app.py\npkg/"
    assert by["logo.png"].error is not None and "binary" in by["logo.png"].error
    assert "(not attached: logo.png is a binary file" in e.text
    assert e.attached == ["src/", "src/app.py"]
    assert e.summary().startswith("attached src/, src/app.py; @logo.png: logo.png is a binary file")


def test_quoted_path_with_spaces(ws: Path) -> None:
    e = expand_mentions('what is in @"docs/my notes.txt"?', ws)
    assert e.attached == ["docs/my notes.txt"] and "remember the milk" in e.text


def test_at_most_max_mentions(ws: Path) -> None:
    for i in range(MAX_MENTIONS + 3):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
    e = expand_mentions(" ".join(f"@f{i}.txt" for i in range(MAX_MENTIONS + 3)), ws)
    assert len(e.attachments) == MAX_MENTIONS
    assert e.notes == [f"only the first {MAX_MENTIONS} mentions are attached"]


# ---- what is refused -----------------------------------------------------------------------------
def test_deny_rules_refuse_inside_and_outside(ws: Path, tmp_path: Path) -> None:
    (ws / ".env").write_text("API_TOKEN=abc\n")
    (ws / "link-to-env").symlink_to(ws / ".env")
    secret_dir = tmp_path / "keys"
    secret_dir.mkdir()
    (secret_dir / "id").write_text("private\n")
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text(f'[deny]\nread = [".env", "{secret_dir}/**"]\n')
    policy = PermissionPolicy(ws, "ask")
    e = expand_mentions(f"@.env @link-to-env @{secret_dir}/id @src/app.py", ws, policy.read_denied)
    assert e.attached == ["src/app.py"]
    assert "abc" not in e.text and "private" not in e.text
    errors = [a.error or "" for a in e.attachments]
    assert all(why.startswith("Refused: the deny rule read =") for why in errors[:3])


def test_relative_paths_stay_inside_absolute_ones_may_not(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("out there\n")
    e = expand_mentions("@../outside.txt", ws)
    assert e.attachments == [] and e.notes == [
        "@../outside.txt: outside the workspace; name it by its absolute path to attach it"
    ]
    e = expand_mentions(f"@{outside}", ws)
    assert e.attached == [str(outside)] and "out there" in e.text


# ---- completion ----------------------------------------------------------------------------------
PATHS = [
    "README.md",
    "docs/readme-old.md",
    "src/owltui/main.py",
    "src/owltui/domain.py",
    "tests/test_main.py",
    "src/owltui/ui/main_window.py",
    "src/",
    "src/owltui/",
    "docs/",
]


def test_rank_paths_with_rapidfuzz() -> None:
    assert rank_paths("readme", PATHS)[0] == "README.md"
    main = rank_paths("main", PATHS)
    assert main[0] == "src/owltui/main.py"
    assert main.index("src/owltui/ui/main_window.py") < main.index("src/owltui/domain.py")
    assert rank_paths("src/owltui/ma", PATHS)[0] == "src/owltui/main.py"
    assert "tests/test_main.py" in rank_paths("tstmain", PATHS, limit=3)  # characters in order
    assert rank_paths("mian.py", PATHS)[0] == "src/owltui/main.py"  # a typo
    assert rank_paths("", PATHS, limit=3) == ["src/", "docs/", "README.md"]  # shallow first
    assert rank_paths("zzzzqqq", PATHS) == [] and rank_paths("main", PATHS, limit=0) == []


def test_completer_lists_what_rg_lists_without_denied_files(ws: Path) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("x\n")
    (ws / ".env").write_text("A=1\n")
    (ws / ".owltui").mkdir()
    (ws / ".owltui" / "permissions.toml").write_text('[deny]\nread = [".env"]\n')
    c = MentionCompleter(ws, PermissionPolicy(ws, "ask").read_denied)
    paths = c.paths()
    assert "src/app.py" in paths and "src/" in paths and "docs/" in paths
    assert "build/out.py" not in paths and ".env" not in paths
    assert c.complete_mentions("app")[0] == "src/app.py"
    assert c.complete_mentions('"my no')[0] == "docs/my notes.txt"
    (ws / "src" / "new_module.py").write_text("\n")
    assert "src/new_module.py" not in c.paths()  # kept for ttl seconds
    assert "src/new_module.py" in c.refresh()


# ---- every mode ----------------------------------------------------------------------------------
def test_print_mode_sends_the_file(tmp_path: Path, ws: Path) -> None:
    fake = FakeOpenAI()
    try:
        fake.add(Turn(text="It prints hi."), Turn(text="ok"))
        env = cli_env(tmp_path)
        r = run_cli(["-p", "what does @src/app.py do? see also @nope.py", *openai_args(fake.url)], env, ws)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "It prints hi.\n"
        content = fake.requests[0]["messages"][-1]["content"]
        assert content.startswith('what does @src/app.py do? see also @nope.py\n\n<file path="src/app.py">\n')
        assert '     2\t    print("hi")' in content and content.endswith("</file>")
        assert "@nope.py: no such file; left as text" in r.stderr
        r = run_cli(["-p", "!ls @src", *openai_args(fake.url)], env, ws)  # ! is text in print mode
        assert r.returncode == 0, r.stderr
        content = fake.requests[1]["messages"][-1]["content"]
        assert content.startswith('!ls @src\n\n<directory path="src/">\napp.py\n</directory>')
    finally:
        fake.close()


def test_rpc_prompt_attaches_and_says_so(tmp_path: Path, ws: Path) -> None:
    fake = FakeOpenAI()
    fake.add(Turn(text="done"))
    p = Proc(["--rpc", *openai_args(fake.url)], cli_env(tmp_path), ws)
    try:
        r = p.call({"type": "prompt", "text": "check @README.md", "id": 1})
        assert r["ok"] is True and r["attached"] == ["README.md"]
        p.expect(type="agent_end")
        sent = fake.requests[0]["messages"][-1]["content"]
        assert sent == 'check @README.md\n\n<file path="README.md">\n     1\t# Demo\n</file>'
        event = next(m for m in p.seen if m.get("type") == "input")
        assert event["text"] == sent
        p.call({"type": "quit", "id": 2})
        assert p.wait() == 0
    finally:
        p.kill()
        fake.close()
    assert json.dumps(sent)  # plain JSON text
