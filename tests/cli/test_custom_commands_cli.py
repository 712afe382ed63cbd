"""Custom slash commands in the real CLI: ``owltui -p "/review FILE"`` sends the template with the
file attached, a model and allowed-tools for that run, RPC lists and runs them, and a file named like a
built-in command stops print and RPC mode at start with one line naming both."""

from __future__ import annotations

from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, openai_args, run_cli


def _command(workspace: Path, rel: str, text: str) -> None:
    path = workspace / ".owltui" / "commands" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _user_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(messages[-1]["content"])


def test_print_mode_runs_a_command_with_its_file_attached(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    _command(
        workspace,
        "review.md",
        "---\ndescription: review one file\nargument-hint: FILE\nmodel: openai:review-model\n---\n"
        "Review @$1 carefully.",
    )
    fake.add(Turn(text="looks fine"))
    r = run_cli(["-p", "/review hello.txt", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "looks fine\n"
    body = fake.requests[0]
    text = _user_text(body)
    assert text.startswith("Review @hello.txt carefully.") and '<file path="hello.txt">' in text
    assert body["model"] == "review-model"  # the command's model for its run


def test_print_mode_allowed_tools_refusal_is_one_stderr_line(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    _command(workspace, "peek.md", "---\nallowed-tools: Read\n---\nPeek at $ARGUMENTS")
    fake.add(
        Turn(calls=[("write", {"path": "new.txt", "content": "x"})]),
        Turn(text="could not write"),
    )
    r = run_cli(["-p", "/peek hello.txt", "--yes", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 3, r.stderr  # done, but a call was refused
    assert not (workspace / "new.txt").exists()
    refused = [line for line in r.stderr.splitlines() if "write" in line and "/peek allows only read" in line]
    assert len(refused) == 1, r.stderr


def test_a_built_in_name_stops_print_and_rpc_mode(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    _command(workspace, "model.md", "my model prompt")
    for args in (["-p", "hi"], ["--rpc"]):
        r = run_cli([*args, *openai_args(fake.url)], env, workspace)
        assert r.returncode == 1
        assert r.stderr.strip().splitlines() == [
            "owltui: the custom command file .owltui/commands/model.md is named like the built-in "
            "command /model; rename the file"
        ]
        assert r.stdout == ""
    assert fake.requests == []


def test_rpc_lists_and_runs_custom_commands(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    _command(workspace, "git/commit.md", "---\ndescription: write the commit message\n---\nCommit: $1 / $2")
    _command(workspace, "bad.md", "---\nallowed-tools: Read(src/**)\n---\nbody")
    proc = Proc(["--rpc", *openai_args(fake.url)], env, workspace)
    try:
        listed = proc.call({"type": "get_commands", "id": 1})
        assert listed["ok"] is True
        custom = [c for c in listed["commands"] if c["source"] != "builtin"]
        assert custom == [
            {"name": "git:commit", "description": "write the commit message (project)", "source": "project"}
        ]
        fake.add(Turn(text="committed"))
        reply = proc.call({"type": "prompt", "text": '/git:commit "fix bug" now', "id": 2})
        assert reply["ok"] is True
        proc.expect(type="agent_end", reason="done")
        assert _user_text(fake.requests[0]) == "Commit: fix bug / now"
        proc.call({"type": "quit", "id": 3})
        assert proc.wait() == 0
        assert "custom command .owltui/commands/bad.md left out: allowed-tools:" in proc.stderr()
    finally:
        proc.kill()
