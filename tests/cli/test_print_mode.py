"""Print mode as a real subprocess: stdout/stderr, exit codes, refusals, jobs, --output jsonl order."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, owltui_cmd, run_cli


def test_answer_on_stdout_sanitized_exit_0(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(text="\x1b]0;pwned\x07Hello \x1b[31mworld\x1b[0m", pieces=3))
    r = run_cli(["-p", "say hi", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Hello world\n"
    body = fake.requests[0]
    assert body["messages"][-1] == {"role": "user", "content": "say hi"}
    assert body["_headers"]["authorization"] == "Bearer test"


def test_prompt_from_stdin(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(text="ok"))
    r = run_cli(["-p", *openai_args(fake.url)], env, workspace, stdin="from stdin\n")
    assert r.returncode == 0, r.stderr
    assert fake.requests[0]["messages"][-1]["content"] == "from stdin"


def test_auth_failure_exit_1_one_line(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(status=401, error="invalid api key"))
    r = run_cli(["-p", "hi", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 1
    assert r.stdout == ""
    assert "authentication failed" in r.stderr and "OPENAI_API_KEY" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_config_exit_1_names_file_line_key(env: dict[str, str], workspace: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "config" / "owltui" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('provider = "demo"\n\nmax_roundz = 3\n')
    r = run_cli(["-p", "hi"], env, workspace)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(cfg) in lines[0] and "line 3" in lines[0] and "max_roundz" in lines[0]


def test_usage_errors_exit_2(env: dict[str, str], workspace: Path) -> None:
    assert run_cli(["-p", "--max-rounds", "0", "hi"], env, workspace).returncode == 2
    assert run_cli(["-p"], env, workspace).returncode == 2  # no prompt, empty stdin
    assert run_cli(["--output", "jsonl", "hi"], env, workspace).returncode == 2
    assert run_cli(["-p", "x", "--rpc"], env, workspace).returncode == 2


def test_unknown_provider_config_exit_1(env: dict[str, str], workspace: Path) -> None:
    r = run_cli(["-p", "hi", "--provider", "anthropic"], env, workspace)  # no ANTHROPIC_API_KEY
    assert r.returncode == 1
    assert "ANTHROPIC_API_KEY" in r.stderr and "Traceback" not in r.stderr


def test_round_limit_exit_1_with_wrapup_text(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(calls=[("ls", {})]), Turn(text="Stopped early; here is what I found."))
    r = run_cli(["-p", "explore", "--max-rounds", "1", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 1
    assert r.stdout == "Stopped early; here is what I found.\n"
    assert "round limit" in r.stderr
    assert len(fake.requests) == 2 and fake.requests[1]["tool_choice"] == "none"


def test_refusal_without_yes_is_the_tool_result(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    fake.add(Turn(calls=[("bash", {"command": "touch made.txt"})]), Turn(text="I could not run it."))
    r = run_cli(["-p", "make a file", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 3, r.stderr  # done, but a call was refused (tests/cli/test_print_refusals.py)
    assert not (workspace / "made.txt").exists()
    tool_msg = fake.requests[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and "Refused" in tool_msg["content"] and "--yes" in tool_msg["content"]


def test_yes_runs_tools(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(calls=[("bash", {"command": "touch made.txt"})]), Turn(text="Done."))
    r = run_cli(["-p", "make a file", "--yes", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert (workspace / "made.txt").exists()
    assert "· bash" in r.stderr  # progress goes to stderr
    assert r.stdout == "Done.\n"


def test_waits_for_background_job_then_answers(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    fake.add(
        Turn(calls=[("bash", {"command": "echo started; sleep 1; echo finished", "timeout": 0.2})]),
        Turn(text="Waiting for the job."),
        Turn(text="The job finished."),
    )
    r = run_cli(["-p", "run it", "--yes", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "The job finished.\n"
    assert len(fake.requests) == 3
    aside = json.dumps(fake.requests[2]["messages"][-1])
    assert "finished" in aside and "exit code 0" in aside


def test_sigint_exits_130(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    hold = threading.Event()
    fake.add(Turn(text="partial", hold=hold))
    p = subprocess.Popen(
        owltui_cmd("-p", "long", *openai_args(fake.url)),
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        fake.wait_request()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 130, err
        assert "Traceback" not in err
    finally:
        hold.set()
        if p.poll() is None:
            p.kill()


CONTRACT_ORDER = [
    "agent_start",
    "turn_start",
    "input",
    "message_start",
    "message_end",
    "tool_start",
    "tool_end",
    "turn_end",
    "turn_start",
    "message_start",
    "message_delta",
    "message_end",
    "turn_end",
    "agent_end",
]


def test_output_jsonl_event_order(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(calls=[("read", {"path": "hello.txt"})]), Turn(text="It says hello."))
    r = run_cli(["-p", "read it", "--output", "jsonl", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types == CONTRACT_ORDER
    assert events[2] == {"type": "input", "lane": "user", "text": "read it"}
    end = events[4]
    assert end["stop_reason"] == "tool_use"
    assert end["tool_calls"][0]["name"] == "read" and end["tool_calls"][0]["arguments"] == {
        "path": "hello.txt"
    }
    assert set(end["usage"]) >= {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"}
    tool_end = events[6]
    assert tool_end["status"] == "ok" and "hello" in tool_end["output"] and tool_end["is_error"] is False
    assert events[-1] == {"type": "agent_end", "reason": "done"}
    assert events[-3]["stop_reason"] == "stop"
