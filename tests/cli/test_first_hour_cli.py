"""A newcomer's first runs through the real CLI: ``-c`` takes the session used last (not the one
created last), and a first print-mode run leaves nothing in the repository."""

from __future__ import annotations

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
