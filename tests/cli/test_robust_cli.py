"""Bad input and faults through the real CLI (issue 11, items 1, 3, 4, 6): hostile RPC lines, non-UTF-8
file names and lone surrogates from the model, an unwritable data directory, a session in use by
another process, ``ulimit -f``, and a 200 that is an HTML page."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Any

from owltui.session.store.store import SessionStore
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, openai_args, owltui_cmd, released, run_cli, session_files
from tests.providers.loopback import LoopbackServer, Reply


def wire_lines(data: bytes) -> list[dict[str, Any]]:
    """Every line valid UTF-8 JSON without NaN, whatever splitter is used."""
    text = data.decode("utf-8")
    lines = text.splitlines()
    assert len(lines) == text.count("\n") == len(data.splitlines())

    def no_constants(name: str) -> Any:
        raise AssertionError(f"{name} in the output")

    return [json.loads(line, parse_constant=no_constants) for line in lines]


def test_rpc_answers_hostile_lines_and_keeps_serving(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    rpc = Proc(["--rpc", *openai_args(fake.url)], env, workspace)
    try:
        assert rpc.p.stdin is not None
        hostile: list[bytes] = [
            b"[" * 4096,  # RecursionError before
            b'{"type": "get_state", "id": NaN}',
            b'{"type": "get_state", "id": 1e400}',
            b'{"type": "get_state", "id": 3, "x": Infinity}',
            b'{"type": "get_state\xff\xfe", "id": 4}',  # invalid UTF-8
            b"\xff\xfe\xfd",
            b'{"type": "get_state", "id": ' + b"9" * 5000 + b"}",
            b'{"type": "get_state", "id": "' + b"[" * 5000 + b'"}',  # brackets inside a string are fine
        ]
        for line in hostile:
            rpc.p.stdin.write(line + b"\n")
            rpc.p.stdin.flush()
            answer = rpc.expect(type="response")
            if line.startswith(b'{"type": "get_state", "id": "'):
                assert answer["ok"] is True and answer["id"] == "[" * 5000
            else:
                assert answer["ok"] is False and answer["error"], answer
                assert answer.get("id") in (None, 3, 4), answer
        state = rpc.call({"type": "get_state", "id": "after"})
        assert state["ok"] is True and state["running"] is False
        fake.add(Turn(text="lone \ud800 and \u2028 LS \u2029 PS \u0085 NEL"))
        assert rpc.call({"type": "prompt", "text": "hi \\ud800", "id": "p"})["ok"] is True
        end = rpc.expect(type="message_end")
        # event text is the TUI's sanitised text: NEL (a C1 control) goes, the separators stay
        assert end["text"] == "lone \ufffd and \u2028 LS \u2029 PS  NEL"
        rpc.expect(type="agent_end", reason="done")
        assert rpc.call({"type": "quit", "id": "q"})["ok"] is True
        assert rpc.wait() == 0
        wire_lines(b"".join(rpc.raw))
    finally:
        rpc.kill()


def test_non_utf8_file_names_and_lone_surrogates_never_end_a_run(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    (workspace / os.fsdecode(b"bad_\xff.txt")).write_text("x\n")
    for extra in ([], ["--no-session"]):  # the session store failed first; without it, the request body
        fake.requests.clear()
        fake.add(Turn(text="Listing \ud800.", calls=[("ls", {"path": "."})]), Turn(text="Found \u2028 it."))
        r = subprocess.run(
            owltui_cmd("-p", "list", "--output", "jsonl", *extra, *openai_args(fake.url)),
            env=env,
            cwd=workspace,
            capture_output=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        events = wire_lines(r.stdout)
        end = next(e for e in events if e["type"] == "tool_end")
        assert end["status"] == "ok" and "bad_" in end["output"], end
        assert events[-1]["type"] == "agent_end" and events[-1]["reason"] == "done"
        assert len(fake.requests) == 2 and "bad_" in json.dumps(fake.requests[1]["messages"])
    [path] = session_files(workspace, env)
    text = path.read_bytes().decode("utf-8")
    assert len(text.splitlines()) == text.count("\n")
    items = SessionStore.open(released(path)).items()
    assert any("bad_" in getattr(i, "content", "") for i in items)


def test_unwritable_data_directory_is_one_line_naming_it(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {**env, "XDG_DATA_HOME": str(blocker)}
    r = run_cli(["-p", "hi", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and str(blocker) in r.stderr and "--no-session" in r.stderr
    assert "Traceback" not in r.stderr and not fake.requests
    fake.add(Turn(text="fine"))
    ok = run_cli(["-p", "hi", "--no-session", *openai_args(fake.url)], env, workspace)
    assert ok.returncode == 0 and ok.stdout == "fine\n", ok.stderr


def test_a_session_in_use_is_refused_with_one_line(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    fake.add(Turn(text="first"))
    assert run_cli(["-p", "one", *openai_args(fake.url)], env, workspace).returncode == 0
    [path] = session_files(workspace, env)
    holder = SessionStore.open(path)  # as if another owltui were continuing it
    try:
        r = run_cli(["-p", "two", "-c", *openai_args(fake.url)], env, workspace)
        assert r.returncode == 1 and r.stderr.count("\n") == 1
        assert "in use by another OwlTUI process" in r.stderr and holder.id in r.stderr
    finally:
        holder.close()
    fake.add(Turn(text="second"))
    r = run_cli(["-p", "two", "-c", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0 and r.stdout == "second\n", r.stderr


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))


def test_file_size_limit_ends_the_run_with_one_clear_error(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    fake.add(Turn(text="word " * 3000))  # the answer's session line is over the limit
    r = subprocess.run(
        owltui_cmd("-p", "talk", *openai_args(fake.url)),
        env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_file_size,
    )
    assert r.returncode == 1, (r.stdout[-200:], r.stderr)
    errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "file too large" in errors[0] and "session file" in errors[0], r.stderr
    [path] = session_files(workspace, env)
    data = path.read_bytes()
    assert data.endswith(b"\n") and len(data) <= 6000  # whole lines only
    assert [type(i).__name__ for i in SessionStore.open(released(path)).items()] == ["UserMessage"]


def test_a_200_html_page_is_shown_once_without_retries(env: dict[str, str], workspace: Path) -> None:
    with LoopbackServer() as server:
        server.queue(
            Reply(
                body=b"<html><head><title>Captive portal: please log in</title></head></html>",
                stream=False,
                headers={"content-type": "text/html"},
            )
        )
        r = run_cli(
            ["-p", "hi", "--provider", "openai", "--model", "m", "--base-url", server.url + "/v1"],
            env,
            workspace,
        )
        assert r.returncode == 1
        assert "Captive portal: please log in" in r.stderr and "retry" not in r.stderr.lower()
        assert len(server.requests) == 1
