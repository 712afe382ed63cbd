"""RPC mode as a real subprocess: every command, malformed lines, get_state during a run, quit, EOF."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, openai_args


@pytest.fixture
def rpc(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> Iterator[Proc]:
    proc = Proc(["--rpc", *openai_args(fake.url)], env, workspace)
    yield proc
    proc.kill()


def _texts(queue: dict[str, list[dict[str, str]]]) -> dict[str, list[str]]:
    """get_state's queue lists ``{id, text, source}`` objects per lane; their texts."""
    return {lane: [q["text"] for q in items] for lane, items in queue.items()}


def test_every_command(rpc: Proc, fake: FakeOpenAI) -> None:
    state = rpc.call({"type": "get_state", "id": 1})
    assert state["ok"] is True and state["id"] == 1
    assert state["running"] is False and state["paused"] is False
    assert state["queue"] == {"steer": [], "follow_up": [], "aside": []}
    assert isinstance(state["session_id"], str) and state["model"] == "openai:fake-model"

    hold = threading.Event()
    fake.add(
        Turn(text="working", hold=hold),
        Turn(text="steered"),
        Turn(text="first follow-up done"),
        Turn(text="all done"),
    )
    assert rpc.call({"type": "prompt", "text": "start", "id": "p1"})["ok"] is True
    rpc.expect(type="agent_start")
    fake.wait_request()

    state = rpc.call({"type": "get_state", "id": 2})  # during the run
    assert state["running"] is True
    busy = rpc.call({"type": "prompt", "text": "again", "id": 3})
    assert busy["ok"] is False and "in progress" in busy["error"]
    assert rpc.call({"type": "steer", "text": "also this", "id": 4})["ok"] is True
    assert rpc.call({"type": "follow_up", "text": "then that", "id": 5})["ok"] is True
    assert rpc.call({"type": "aside", "text": "fyi", "id": 6})["ok"] is True
    queued = rpc.call({"type": "prompt", "text": "and more", "as": "follow_up", "id": 7})
    assert queued["ok"] is True
    state = rpc.call({"type": "get_state", "id": 8})
    assert _texts(state["queue"]) == {
        "steer": ["also this"],
        "follow_up": ["then that", "and more"],
        "aside": ["fyi"],
    }

    hold.set()
    steer = rpc.expect(type="input", lane="steer")
    assert steer["text"] == "also this"
    rpc.expect(type="agent_end", reason="done")
    # the steer (with the aside) is answered first; then one follow-up per stop, oldest first
    second, third, fourth = (str(fake.requests[i]["messages"]) for i in (1, 2, 3))
    assert "also this" in second and "fyi" in second and "then that" not in second
    assert "then that" in third and "and more" not in third
    assert "and more" in fourth
    state = rpc.call({"type": "get_state", "id": 9})
    assert state["running"] is False and _texts(state["queue"]) == {"steer": [], "follow_up": [], "aside": []}
    assert state["rounds"] >= 1 and set(state["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost",
    }

    assert rpc.call({"type": "pause", "id": 10})["ok"] is True
    rpc.expect(type="paused")
    assert rpc.call({"type": "get_state", "id": 11})["paused"] is True
    assert rpc.call({"type": "resume", "id": 12})["ok"] is True
    resumed = rpc.expect(type="resumed")
    assert isinstance(resumed["paused_ms"], int) and resumed["paused_ms"] >= 0

    bad_tool = rpc.call({"type": "require_tool", "tool": "nope", "id": 13})
    assert bad_tool["ok"] is False and "unknown tool" in bad_tool["error"]
    assert rpc.call({"type": "require_tool", "tool": "ls", "reason": "look first", "id": 14})["ok"] is True
    assert rpc.call({"type": "get_state", "id": 15})["requirement"] == "ls"
    assert rpc.call({"type": "clear_requirement", "id": 16})["ok"] is True
    assert rpc.call({"type": "get_state", "id": 17})["requirement"] is None

    nobody = rpc.call({"type": "approve", "call_id": "call_x", "decision": "allow", "id": 18})
    assert nobody["ok"] is False and "no approval request" in nobody["error"]
    bad = rpc.call({"type": "approve", "call_id": "call_x", "decision": "maybe", "id": 19})
    assert bad["ok"] is False

    assert rpc.call({"type": "abort", "id": 20}) == {
        "type": "response",
        "command": "abort",
        "id": 20,
        "ok": True,
        "aborted": False,
    }
    unknown = rpc.call({"type": "dance", "id": 21})
    assert unknown["ok"] is False and "unknown command" in unknown["error"]

    assert rpc.call({"type": "quit", "id": 22})["ok"] is True
    assert rpc.wait() == 0


def test_malformed_lines_keep_serving(rpc: Proc) -> None:
    for line in (
        "{not json",
        "[1, 2]",
        '"text"',
        '{"id": 5}',
        '{"type": "prompt", "id": 6}',
        '{"type": "steer", "text": 3, "id": 7}',
        '{"type": "abort", "clear_queue": "yes", "id": 8}',
    ):
        rpc.send(line)
        msg = rpc.expect(type="response")
        assert msg["ok"] is False and msg["error"], msg
    assert rpc.seen[3]["id"] == 5 and rpc.seen[4]["command"] == "prompt"
    assert rpc.call({"type": "get_state", "id": 9})["ok"] is True
    rpc.close_stdin()
    assert rpc.wait() == 0


def test_approval_request_allow_always_deny(rpc: Proc, fake: FakeOpenAI, workspace: Path) -> None:
    fake.add(Turn(calls=[("bash", {"command": "echo hi > out.txt"})]), Turn(text="wrote it"))
    rpc.call({"type": "prompt", "text": "write", "id": 1})
    req = rpc.expect(type="approval_request")
    assert req["name"] == "bash" and req["arguments"] == {"command": "echo hi > out.txt"}
    assert rpc.call({"type": "get_state", "id": 2})["approvals"] == [req["call_id"]]
    assert rpc.call({"type": "approve", "call_id": req["call_id"], "decision": "always", "id": 3})["ok"]
    end = rpc.expect(type="tool_end")
    assert end["status"] == "ok" and (workspace / "out.txt").read_text() == "hi\n"
    rpc.expect(type="agent_end", reason="done")
    assert '"echo *"' in (workspace / ".owltui" / "permissions.toml").read_text()  # program granularity

    fake.add(Turn(calls=[("bash", {"command": "rm out.txt"})]), Turn(text="not allowed"))
    rpc.call({"type": "prompt", "text": "delete", "id": 4})
    req = rpc.expect(type="approval_request")
    assert rpc.call({"type": "approve", "call_id": req["call_id"], "decision": "deny", "id": 5})["ok"]
    end = rpc.expect(type="tool_end")
    assert end["status"] == "refused" and (workspace / "out.txt").exists()
    rpc.expect(type="agent_end", reason="done")


def test_abort_keeps_queue_unless_cleared(rpc: Proc, fake: FakeOpenAI) -> None:
    hold = threading.Event()
    fake.add(Turn(text="long answer", hold=hold))
    rpc.call({"type": "prompt", "text": "go", "id": 1})
    fake.wait_request()
    rpc.call({"type": "follow_up", "text": "keep me", "id": 2})
    assert rpc.call({"type": "abort", "id": 3})["aborted"] is True
    rpc.expect(type="agent_end", reason="aborted")
    hold.set()
    state = rpc.call({"type": "get_state", "id": 4})
    assert state["running"] is False and _texts(state["queue"])["follow_up"] == ["keep me"]
    rpc.call({"type": "abort", "clear_queue": True, "id": 5})
    assert rpc.call({"type": "get_state", "id": 6})["queue"]["follow_up"] == []


def test_pause_parks_a_run_until_resume(rpc: Proc, fake: FakeOpenAI) -> None:
    fake.add(Turn(text="after resume"))
    rpc.call({"type": "pause", "id": 1})
    rpc.call({"type": "prompt", "text": "go", "id": 2})
    rpc.expect(type="turn_start")
    state = rpc.call({"type": "get_state", "id": 3})
    assert state["running"] is True and state["paused"] is True and not fake.requests
    rpc.call({"type": "resume", "id": 4})
    fake.wait_request()
    rpc.expect(type="agent_end", reason="done")


def test_eof_aborts_the_run_and_exits_0(rpc: Proc, fake: FakeOpenAI) -> None:
    hold = threading.Event()
    fake.add(Turn(text="half", hold=hold))
    rpc.call({"type": "prompt", "text": "go", "id": 1})
    fake.wait_request()
    rpc.close_stdin()
    rpc.expect(type="agent_end", reason="aborted")
    assert rpc.wait() == 0
    hold.set()


def test_quit_during_a_run(rpc: Proc, fake: FakeOpenAI) -> None:
    hold = threading.Event()
    fake.add(Turn(text="half", hold=hold))
    rpc.call({"type": "prompt", "text": "go", "id": 1})
    fake.wait_request()
    assert rpc.call({"type": "quit", "id": 2})["ok"] is True
    rpc.expect(type="agent_end", reason="aborted")
    assert rpc.wait() == 0
    hold.set()
