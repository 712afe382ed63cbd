"""A newcomer's first runs through the real CLI: ``-c`` takes the session used last (not the one
created last), and a first print-mode run leaves nothing in the repository that git shows: no
``.owltui/`` at all without a command, and with one only the empty mount point that keeps it
read-only."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, run_cli


def test_continue_takes_the_session_used_last(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(text="one"), Turn(text="two"), Turn(text="again"), Turn(text="continued"))
    assert run_cli(["-p", "alpha prompt", *openai_args(fake.url)], env, workspace).returncode == 0
    assert run_cli(["-p", "beta prompt", *openai_args(fake.url)], env, workspace).returncode == 0
    listing = run_cli(["--sessions"], env, workspace).stdout.strip().splitlines()
    alpha = next(line for line in listing if "alpha prompt" in line).split()[0]
    r = run_cli(["-p", "--resume", alpha, "more alpha", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    r = run_cli(["-p", "-c", "which one", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    users = [m["content"] for m in fake.requests[3]["messages"] if m["role"] == "user"]
    assert users == ["alpha prompt", "more alpha", "which one"]  # the older-created, used last


def test_print_mode_leaves_no_owltui_directory(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    fake.add(Turn(text="Reading.", calls=[("read", {"path": "hello.txt"})]), Turn(text="It says hello."))
    r = run_cli(["-p", "what does hello.txt say", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert "hello" in r.stdout
    assert not (workspace / ".owltui").exists()


def test_a_first_command_leaves_only_an_empty_owltui_directory_git_does_not_show(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "-C", str(workspace), "add", "-A"], check=True)
    before = subprocess.run(
        ["git", "-C", str(workspace), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout
    fake.add(Turn(text="Listing.", calls=[("bash", {"command": "ls"})]), Turn(text="Listed."))
    r = run_cli(["-p", "--yes", "list the files", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert (workspace / ".owltui").is_dir() and not any((workspace / ".owltui").iterdir())
    after = subprocess.run(
        ["git", "-C", str(workspace), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout
    assert after == before
