"""Sessions through the real CLI: SIGKILL mid-run, the queue surviving a crash, -c, --resume,
--sessions, --no-session, and secrets never reaching the file."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from owltui.agent.messages import AssistantMessage, ToolResult, UserMessage
from owltui.session.store.store import SessionStore
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, openai_args, owltui_cmd, records, released, run_cli, session_files


def test_sigkill_mid_run_loses_nothing_completed(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    hold = threading.Event()
    fake.add(Turn(text="Reading.", calls=[("read", {"path": "hello.txt"})]), Turn(text="It says", hold=hold))
    p = subprocess.Popen(
        owltui_cmd("-p", "what does hello.txt say", *openai_args(fake.url)),
        env=env,
        cwd=workspace,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        fake.wait_request()
        fake.wait_request()  # the second model call: the tool result was recorded before it
        p.kill()
        p.wait(timeout=30)
    finally:
        hold.set()
    [path] = session_files(workspace, env)
    items = list(SessionStore.open(released(path)).items())
    assert [type(i) for i in items] == [UserMessage, AssistantMessage, ToolResult]
    assert items[0].text == "what does hello.txt say"
    assert isinstance(items[1], AssistantMessage) and items[1].text == "Reading."
    assert isinstance(items[2], ToolResult) and "hello" in items[2].content
    assert items[2].call_id == items[1].tool_calls[0].id


def test_queue_survives_a_crash(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    hold = threading.Event()
    fake.add(Turn(text="half", hold=hold))
    rpc = Proc(["--rpc", *openai_args(fake.url)], env, workspace)
    try:
        rpc.call({"type": "prompt", "text": "first", "id": 1})
        fake.wait_request()
        rpc.call({"type": "follow_up", "text": "remember me", "id": 2})
        rpc.p.kill()
        rpc.p.wait(timeout=30)
    finally:
        hold.set()
    [path] = session_files(workspace, env)
    assert [q.text for q in SessionStore.open(path).undelivered()] == ["remember me"]
    fake.add(Turn(text="both handled"))
    r = run_cli(["-p", "-c", "next", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    sent = str(fake.requests[-1]["messages"])
    assert "first" in sent and "next" in sent and "remember me" in sent
    assert SessionStore.open(path).undelivered() == []


def test_continue_sends_earlier_turns(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(text="The answer is 42."), Turn(text="You asked about the answer."), Turn(text="fresh"))
    assert run_cli(["-p", "what is the answer", *openai_args(fake.url)], env, workspace).returncode == 0
    r = run_cli(["-p", "--continue", "what did I ask", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    msgs = [(m["role"], m.get("content")) for m in fake.requests[1]["messages"] if m["role"] != "system"]
    assert msgs == [
        ("user", "what is the answer"),
        ("assistant", "The answer is 42."),
        ("user", "what did I ask"),
    ]
    assert len(session_files(workspace, env)) == 1
    r = run_cli(["-p", "new topic", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0
    assert [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "user"] == ["new topic"]
    assert len(session_files(workspace, env)) == 2


def test_sessions_listing_and_resume(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(text="one"), Turn(text="two"), Turn(text="resumed"))
    run_cli(["-p", "alpha prompt", *openai_args(fake.url)], env, workspace)
    run_cli(["-p", "beta prompt", *openai_args(fake.url)], env, workspace)
    listing = run_cli(["--sessions"], env, workspace)
    assert listing.returncode == 0
    lines = listing.stdout.strip().splitlines()
    assert len(lines) == 2
    alpha = next(line for line in lines if "alpha prompt" in line)
    assert "2 msgs" in alpha
    sid = alpha.split()[0]
    r = run_cli(["-p", "--resume", sid[:6], "again", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    users = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "user"]
    assert users == ["alpha prompt", "again"]
    missing = run_cli(["-p", "--resume", "nosuchid", "x", *openai_args(fake.url)], env, workspace)
    assert missing.returncode == 1 and "No session" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_no_session_writes_nothing(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(text="ok"))
    r = run_cli(["-p", "--no-session", "hi", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0
    assert session_files(workspace, env) == []
    bad = run_cli(["-p", "--no-session", "-c", "hi", *openai_args(fake.url)], env, workspace)
    assert bad.returncode == 1 and "--no-session" in bad.stderr


def test_secrets_never_reach_the_session_file(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    key = "sk-test-0123456789abcdefSECRET"
    env = {**env, "OPENAI_API_KEY": key}
    fake.add(Turn(text=f"Your key is {key}. Header: Authorization: Bearer tok_abcdef123456789"))
    r = run_cli(
        ["-p", f"my key is {key}, x-api-key: other-secret-value-1", *openai_args(fake.url)], env, workspace
    )
    assert r.returncode == 0, r.stderr
    assert fake.requests[0]["_headers"]["authorization"] == f"Bearer {key}"
    [path] = session_files(workspace, env)
    text = path.read_text()
    assert key not in text and "tok_abcdef123456789" not in text and "other-secret-value-1" not in text
    assert "[REDACTED]" in text
    assert records(path)[0]["type"] == "session"
